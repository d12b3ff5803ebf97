"""The terminal's live summary of a running watch (``explorer.watch(live=True)``): a ``rich.live.Live``
region redrawn by a watch listener, so it costs the loop nothing between the watch's own events.

Redrawn at most every ``interval`` seconds (a burst of compile records or of fast steps draws once), always
once at the end, and only from the loop's thread: the region never refreshes itself (``auto_refresh``
off), so nothing reads the watch from another thread while the loop changes it. The drawing is the
model's ``LiveView`` as compiler/render/watch.py renders it.
"""

from __future__ import annotations

import sys
import time
from typing import Any

from ..model.slots import rich_of
from ..model.watch import LiveView

INTERVAL = 0.25  # seconds between redraws: about 4 a second


def in_notebook() -> bool:
    """True inside a Jupyter kernel, where the watch's HTML summary is shown instead."""
    shell = sys.modules.get("IPython")
    get = getattr(shell, "get_ipython", None)
    return get is not None and getattr(get(), "kernel", None) is not None


def display(live: Any) -> "LiveSummary | None":
    """The listener ``live`` asks for: None (no display) for False, or for None when stdout is not a
    terminal or the watch runs in a notebook; a rich Console draws there."""
    if live is None:
        live = bool(getattr(sys.stdout, "isatty", lambda: False)()) and not in_notebook()
    if live is False:
        return None
    return LiveSummary(None if live is True else live)


class LiveSummary:
    """A watch listener drawing the watch's ``LiveView`` in a rich Live region on ``console``."""

    def __init__(self, console: Any = None, interval: float = INTERVAL) -> None:
        self.console = console
        self.interval = interval
        self._live: Any = None
        self._drawn = float("-inf")

    def __call__(self, watch: Any) -> None:
        now = time.monotonic()
        if watch.active and now - self._drawn < self.interval:
            return
        self._drawn = now
        if self._live is None:
            from rich.live import Live

            self._live = Live(console=self.console, auto_refresh=False)
            self._live.start()
        self._live.update(rich_of(LiveView(watch)), refresh=True)
        if not watch.active:
            self.close()

    def close(self) -> None:
        """Leave the last drawing on screen and give the terminal back (idempotent)."""
        live, self._live = self._live, None
        if live is not None:
            live.stop()
