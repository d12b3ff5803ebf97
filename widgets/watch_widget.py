"""WatchWidget: a watched loop (``explorer.watch()``) as an anywidget that follows the loop while it runs.

The view is a few small synced traits, one per key of the watch payload (``contract.WatchPayload``, built
by compiler/io/watch.py): a headline, the step timeline with compiles, recompiles and graph breaks marked
at their step, the events, the compiled frames and, under CUDA graphs, what the CUDA graph tree did in each
step. The widget only shows the payloads it is handed
(``show``): explorer makes it a listener of the watch, which hands it a new payload at most four times a
second while the loop runs and once at the end, from the loop's own thread.

The browser reports the event picked in ``selected`` (an event id: a compile id such as "0/1", or
"break 0"); a notebook may set it too. Messages from the browser reach the kernel once the cell running
the loop has finished, as for any widget.
"""

from __future__ import annotations

from typing import Any, Callable

import anywidget
import traitlets

from compiler.model.contract import WatchPayload

from ._bundle import BUNDLE_CSS, BUNDLE_JS


class WatchWidget(anywidget.AnyWidget):
    """The live view of a watch (``display(w)`` in a notebook shows one that follows ``w``)."""

    _esm = BUNDLE_JS
    _css = BUNDLE_CSS

    headline = traitlets.Dict().tag(sync=True)  # contract.WatchHeadline
    timeline = traitlets.Dict().tag(sync=True)  # contract.WatchTimeline
    events = traitlets.List().tag(sync=True)  # contract.WatchCompileEvent / WatchBreakEvent, in order
    frames = traitlets.List().tag(sync=True)  # contract.WatchFrameRow, one per compiled frame
    cudagraphs = traitlets.List().tag(sync=True)  # contract.WatchCudaGraphEvent: the CUDA graph tree's, per step
    active = traitlets.Bool(False).tag(sync=True)  # the loop is still running
    selected = traitlets.Unicode("").tag(sync=True)  # the id of the event whose detail is shown

    def __init__(self, payload: WatchPayload, *, on_close: Callable[[], None] | None = None, **kwargs: Any) -> None:
        """``payload``: what to show first; ``on_close``: called once when the widget closes (explorer
        stops the watch telling it)."""
        super().__init__(**kwargs)
        self._on_close = on_close
        self.show(payload)

    def show(self, payload: WatchPayload) -> None:
        """Show ``payload``: every trait in one message to the browser."""
        with self.hold_sync():
            self.headline = dict(payload["headline"])
            self.timeline = dict(payload["timeline"])
            self.events = list(payload["events"])
            self.frames = list(payload["frames"])
            self.cudagraphs = list(payload["cudagraphs"])
            self.active = payload["active"]

    def close(self) -> None:
        """Stop following the watch, then close the widget."""
        on_close, self._on_close = self._on_close, None
        if on_close is not None:
            on_close()
        super().close()

    def __repr__(self) -> str:
        return f"WatchWidget({self.headline.get('summary', '')}, selected={self.selected or None})"
