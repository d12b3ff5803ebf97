"""WatchWidget: a watched loop (``explorer.watch()``) as an anywidget that follows the loop while it runs.

The view is a few small synced traits (watch_payload.py): a headline, the step timeline with compiles,
recompiles and graph breaks marked at their step, the events and the compiled frames. The widget is a
watch listener (``w.add_listener``): the watch calls it from the loop's own thread after each step,
compile record and break, and once at the end (``w.active`` False). It sends at most one update per
``interval`` (about 4 a second, so a loop of fast steps costs a payload now and then, not one per step)
and always the last one; it never reads the watch from another thread, so nothing races the loop.

The browser reports the event picked in ``selected`` (an event id: a compile id such as "0/1", or
"break 0"); a notebook may set it too. Messages from the browser reach the kernel once the cell running
the loop has finished, as for any widget.
"""

from __future__ import annotations

import time
from typing import Any

import anywidget
import traitlets

from ._bundle import BUNDLE_CSS, BUNDLE_JS
from .watch_payload import watch_payload

INTERVAL = 0.25  # seconds between updates while the loop runs


class WatchWidget(anywidget.AnyWidget):
    """The live view of a watch.

    >>> with explorer.watch() as w:
    ...     display(WatchWidget(w))      # or display(w): the watch shows this widget in a notebook
    ...     for batch in w.steps_of(loader):
    ...         train_step(batch)
    """

    _esm = BUNDLE_JS
    _css = BUNDLE_CSS

    headline = traitlets.Dict().tag(sync=True)  # {summary, source, error, sample_every}
    timeline = traitlets.Dict().tag(sync=True)  # {steps, per_bar, bars: [[first, last, mean ms, max ms]]}
    events = traitlets.List().tag(sync=True)  # compiles, recompiles and breaks with their detail
    frames = traitlets.List().tag(sync=True)  # one row per compiled frame
    active = traitlets.Bool(False).tag(sync=True)  # the loop is still running
    selected = traitlets.Unicode("").tag(sync=True)  # the id of the event whose detail is shown

    def __init__(self, watch: Any, *, interval: float = INTERVAL, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.watch = watch
        self.interval = interval
        self._update(watch)
        add = getattr(watch, "add_listener", None)
        if add is not None:  # a live watch (one loaded from a log never changes)
            add(self)

    def __call__(self, watch: Any) -> None:
        """The listener: an update when ``interval`` has passed since the last, and always at the end."""
        running = bool(getattr(watch, "active", False))
        if running and time.monotonic() - self._sent < self.interval:
            return
        self._update(watch)

    def _update(self, watch: Any) -> None:
        self._sent = time.monotonic()
        payload = watch_payload(watch)
        with self.hold_sync():
            self.headline = payload["headline"]
            self.timeline = payload["timeline"]
            self.events = payload["events"]
            self.frames = payload["frames"]
            self.active = bool(getattr(watch, "active", False))

    def close(self) -> None:
        """Stop following the watch, then close the widget."""
        remove = getattr(self.watch, "remove_listener", None)
        if remove is not None:
            remove(self)
        super().close()

    def __repr__(self) -> str:
        return f"WatchWidget({self.headline.get('summary', '')}, selected={self.selected or None})"
