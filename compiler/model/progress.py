"""Progress of long work (compiles, autotuning, profiles) as steps, for whoever shows them.

The compiler only reports: which stage a task is in and, where it knows them, counts (autotuning
choices timed, profile runs done). How steps are shown is decided above it: ``explorer`` registers a
display (a bar in a notebook, rich progress in a terminal) with ``set_display``; without one, nothing
is shown. A task started inside another reports to the outer task's display, so a recompile during a
profile shows as one line of work, not two.

Cancelling (Ctrl-C, a notebook's interrupt) raises ``Cancelled`` from the task: the work that was
interrupted says where it stopped, and has restored what it changed before the error leaves it.
"""

from __future__ import annotations

import contextlib
import contextvars
import time
from dataclasses import dataclass
from typing import Callable, Iterator

from .phases import COMPILE_STAGES, stage_place


@dataclass(frozen=True)
class Step:
    task: str  # "compile f", "profile f"
    # for compiles a phase of compiler/model/phases.py (COMPILE_STAGES, or a word for one: "tracing",
    # "kernel compile"); "warm-up", "profiling", "attributing" for profiles
    stage: str
    done: int | None = None  # counts inside the stage, when known
    total: int | None = None
    detail: str = ""  # "graph 2", "3 choices timed for mm"
    elapsed: float = 0.0  # seconds since the task started
    finished: bool = False  # the last step of a task: a display takes itself away

    @property
    def place(self) -> float | None:
        """How far through a compile this step's stage comes (0 to 1), for a bar; None for other work."""
        index = stage_place(self.stage)
        return None if index is None else index / len(COMPILE_STAGES)


Display = Callable[[Step], None]


def _no_display(task: str) -> Display | None:
    return None


_display_factory: Callable[[str], Display | None] = _no_display
_current: contextvars.ContextVar[Task | None] = contextvars.ContextVar("explorer_progress_task", default=None)


class Cancelled(KeyboardInterrupt):
    """Long work interrupted by the user; what it changed was put back before this was raised."""


def set_display(factory: Callable[[str], Display | None]) -> Callable[[str], Display | None]:
    """Show every task started from now on with ``factory(task name)`` (None: not shown); returns the
    previous factory so a caller can put it back."""
    global _display_factory
    previous, _display_factory = _display_factory, factory
    return previous


class Task:
    """One piece of long work; ``step`` says where it is now."""

    def __init__(self, name: str, display: Display | None) -> None:
        self.name = name
        self.display = display
        self.started = time.perf_counter()
        self.stage = ""

    def step(self, stage: str, done: int | None = None, total: int | None = None, detail: str = "") -> None:
        self.stage = stage
        if self.display is not None:
            self.display(Step(self.name, stage, done, total, detail, time.perf_counter() - self.started))

    def finish(self) -> None:
        if self.display is not None:
            self.display(Step(self.name, self.stage, None, None, "", time.perf_counter() - self.started, True))


@contextlib.contextmanager
def task(name: str, display: Display | None | bool = None) -> Iterator[Task]:
    """A task reported to ``display`` (a callable), to the registered display (None), or to nobody
    (False); inside another task, to that one. A KeyboardInterrupt leaves as ``Cancelled``."""
    outer = _current.get()
    if outer is not None:
        yield outer
        return
    if display is None:
        display = _display_factory(name)
    current = Task(name, display or None)
    token = _current.set(current)
    try:
        yield current
    except Cancelled:
        raise
    except KeyboardInterrupt:
        stage = f" during {current.stage}" if current.stage else ""
        raise Cancelled(f"{name} was cancelled{stage}; nothing it started was kept, and torch's settings "
                        "are as they were before it") from None
    finally:
        _current.reset(token)
        current.finish()


def step(stage: str, done: int | None = None, total: int | None = None, detail: str = "") -> None:
    """Report a step of the task running now (nothing when none is)."""
    current = _current.get()
    if current is not None:
        current.step(stage, done, total, detail)
