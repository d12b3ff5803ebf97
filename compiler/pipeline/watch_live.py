"""The terminal's live summary of a running watch (``explorer.watch(live=True)``): a ``rich.live.Live``
region redrawn by a watch listener, so it costs the loop nothing between the watch's own events.

The watch tells it at most four times a second (watch_listeners.VIEW_INTERVAL: a burst of compile records
or of fast steps draws once) and always once at the end, only from the loop's thread: the region never
refreshes itself (``auto_refresh`` off). What it draws is the report it is handed, a snapshot, as the
model's ``LiveView`` (compiler/render/watch.py renders it).
"""

from __future__ import annotations

import sys
from typing import Any

from ..model.notebook import in_notebook
from ..model.slots import rich_of
from ..model.watch import LiveView, WatchReport


def display(live: Any) -> "LiveSummary | None":
    """The listener ``live`` asks for: None (no display) for False, or for None when stdout is not a
    terminal or the watch runs in a notebook; a rich Console draws there."""
    if live is None:
        live = bool(getattr(sys.stdout, "isatty", lambda: False)()) and not in_notebook()
    if live is False:
        return None
    return LiveSummary(None if live is True else live)


class LiveSummary:
    """A watch listener drawing each report it is handed as a ``LiveView`` in a rich Live region on ``console``."""

    def __init__(self, console: Any = None) -> None:
        self.console = console
        self._live: Any = None

    def __call__(self, report: WatchReport) -> None:
        if self._live is None:
            from rich.live import Live

            self._live = Live(console=self.console, auto_refresh=False)
            self._live.start()
        self._live.update(rich_of(LiveView(report)), refresh=True)
        if not report.active:
            self.close()

    def close(self) -> None:
        """Leave the last drawing on screen and give the terminal back (idempotent)."""
        live, self._live = self._live, None
        if live is not None:
            live.stop()
