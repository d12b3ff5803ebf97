"""Who follows a live watch, and how often each is told: a listener ``fn(report)`` gets a snapshot of the
report (``Watch.report()``: a ``WatchReport`` with ``active`` set), built once per event for all of them.

A listener is told at most once per ``every`` seconds while the loop runs (a burst of compile records or
of fast steps tells it once) and always once at the end. ``VIEW_INTERVAL`` (0.25 s: about four updates a
second) is the default, the one throttle of every view that follows a watch (the terminal's live summary,
the notebook widget); ``every=0`` tells a listener of every event. Listeners are called from the loop's own
thread only; one that raises is removed and its error returned for the watch's notes.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

from ..model.watch import WatchReport

VIEW_INTERVAL = 0.25  # seconds between two updates of a view that follows a watch

Listener = Callable[[WatchReport], None]


@dataclass
class _Following:
    fn: Listener
    every: float
    told: float = float("-inf")  # when it was last told (monotonic seconds)


class Listeners:
    """The listeners of one watch, each with its own interval."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._following: tuple[_Following, ...] = ()  # a tuple: replaced, never mutated while telling

    def __bool__(self) -> bool:
        return bool(self._following)

    @property
    def functions(self) -> tuple[Listener, ...]:
        return tuple(f.fn for f in self._following)

    def add(self, fn: Listener, every: float = VIEW_INTERVAL) -> None:
        """Tell ``fn`` at most once per ``every`` seconds while the loop runs, and at the end (added once:
        adding it again changes its interval)."""
        if every < 0:
            raise ValueError(f"a listener's interval is in seconds, 0 or more; got every={every!r}")
        kept = tuple(f for f in self._following if f.fn is not fn and f.fn != fn)
        self._following = (*kept, _Following(fn, float(every)))

    def remove(self, fn: Listener) -> None:
        """Stop telling ``fn`` (nothing happens when it was not added)."""
        self._following = tuple(f for f in self._following if f.fn is not fn and f.fn != fn)

    def tell(self, report: Callable[[], WatchReport], active: bool) -> list[str]:
        """Tell each listener whose interval has passed (all of them when ``active`` is False) the report
        ``report()`` makes, made once; a listener that raises is removed. Returns a note per removal."""
        now = self.clock()
        due = [f for f in self._following if not active or now - f.told >= f.every]
        notes: list[str] = []
        made: WatchReport | None = None
        for following in due:
            following.told = now
            made = made if made is not None else report()
            try:
                following.fn(made)
            except Exception as error:  # a view's fault never stops the user's loop
                self.remove(following.fn)
                name = getattr(following.fn, "__qualname__", None) or type(following.fn).__name__
                notes.append(f"listener {name} raised {type(error).__name__}: {error}; it was removed")
        return notes
