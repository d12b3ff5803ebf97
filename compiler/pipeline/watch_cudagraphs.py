"""What the CUDA graph tree does over a watched run, step by step (``w.cudagraph_events``, and each frame's
``cudagraph_replays`` / ``cudagraph_skips``).

A watch enters ``observing()`` with its other hooks; the tree's events (compiler/_torch/cudagraph_tree.py)
arrive with the compile id of the graph whose function they are, and are kept with the step open when
they happened: replays as a count per step and function, everything else one by one. ``annotate`` gives
each frame of the report its replays and skips.
"""

from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator

from .._torch import cudagraph_tree
from ..model.cudagraphs import EventKind, skip_message
from ..model.watch_cudagraphs import CudaGraphStepEvent

_MERGED = (EventKind.REPLAY, EventKind.EAGER)


class CudaGraphWatch:
    """The tree's events of one watch, each placed in the step ``step()`` says is open."""

    def __init__(self, step: Callable[[], int]) -> None:
        self.step = step
        self.events: list[CudaGraphStepEvent] = []
        self._last: dict[tuple[int, str, str, EventKind], CudaGraphStepEvent] = {}

    def __call__(self, event: Any) -> None:
        if event.function is None:
            return  # logged while compiling: a capture of that graph says it
        kind = EventKind(event.kind)
        step, compile_id = self.step(), event.compile_id or ""
        function = getattr(event.model, "__name__", "") if event.model is not None else ""
        key = (step, compile_id, function, kind)
        if kind in _MERGED and key in self._last:
            self._last[key].count += 1
            return
        reason = skip_message(event.reason) if kind == EventKind.SKIP else event.reason
        entry = CudaGraphStepEvent(step, compile_id, kind, function, event.mode.lower(), 1, reason)
        self.events.append(entry)
        self._last[key] = entry

    @contextlib.contextmanager
    def observing(self) -> Iterator[None]:
        with cudagraph_tree.observed(self):
            yield

    def annotate(self, frames: list[Any]) -> None:
        """Each frame's replays and skips over the run (0 for a frame whose graphs run without CUDA graphs)."""
        for frame in frames:
            mine = [e for e in self.events if e.frame_id == frame.frame_id]
            frame.cudagraph_replays = sum(e.count for e in mine if e.kind == EventKind.REPLAY)
            frame.cudagraph_skips = sum(1 for e in mine if e.kind == EventKind.SKIP)
