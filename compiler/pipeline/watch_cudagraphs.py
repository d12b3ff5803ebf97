"""What the CUDA graph tree does over a watched run, step by step (``w.cudagraph_events``; each frame's
``cudagraph_replays`` / ``cudagraph_skips`` are counted from them where the report's frames are made,
watch_records.frame_stats).

A watch enters ``observing()`` with its other hooks; the tree's events (compiler/_torch/cudagraph_tree.py)
arrive with the compile id of the graph whose function they are, and are kept with the step open when
they happened: replays (and eager runs) as a count per step and function, everything else one by one.
The events kept are frozen: a replay counted replaces its entry, so a report's snapshot of them
(``events``) stays as it was when the report was made.
"""

from __future__ import annotations

import contextlib
import dataclasses
from typing import Any, Callable, Iterator

from .._torch import cudagraph_tree
from ..model.cudagraphs import EventKind, skip_message
from ..model.watch_cudagraphs import CudaGraphStepEvent

_MERGED = (EventKind.REPLAY, EventKind.EAGER)

_Key = tuple[int, str, str, EventKind]  # (step, compile id, function, kind): what merges into one count


class CudaGraphWatch:
    """The tree's events of one watch, each placed in the step ``step()`` says is open; ``changed()`` is
    called when an event is kept that is not a count going up (the report has something new to show)."""

    def __init__(self, step: Callable[[], int], changed: Callable[[], None]) -> None:
        self._step = step
        self._changed = changed
        self._events: list[CudaGraphStepEvent] = []
        self._merged: dict[_Key, int] = {}  # where the entry counting each merged kind sits in _events

    @property
    def events(self) -> list[CudaGraphStepEvent]:
        """The events so far, oldest first (a new list of frozen entries: a snapshot)."""
        return list(self._events)

    def __call__(self, event: Any) -> None:
        if event.function is None:
            return  # logged while compiling: a capture of that graph says it
        kind = EventKind(event.kind)
        function = getattr(event.model, "__name__", "") if event.model is not None else ""
        reason = skip_message(event.reason) if kind == EventKind.SKIP else event.reason
        self._keep(CudaGraphStepEvent(self._step(), event.compile_id or "", kind, function, event.mode.lower(), 1,
                                      reason))

    def _keep(self, entry: CudaGraphStepEvent) -> None:
        key = (entry.step, entry.compile_id, entry.function, entry.kind)
        at = self._merged.get(key) if entry.kind in _MERGED else None
        if at is not None:
            counted = self._events[at]
            self._events[at] = dataclasses.replace(counted, count=counted.count + entry.count)
            return
        if entry.kind in _MERGED:
            self._merged[key] = len(self._events)
        self._events.append(entry)
        self._changed()

    def all_in(self, step: int) -> None:
        """Place every event so far in ``step`` (a stronger step rule took over and folded the steps made so
        far into it), replays merged again."""
        events, self._events, self._merged = self._events, [], {}
        for entry in events:
            self._keep(dataclasses.replace(entry, step=step))

    @contextlib.contextmanager
    def observing(self) -> Iterator[None]:
        with cudagraph_tree.observed(self):
            yield
