"""Showing the compiler's progress steps (compiler/model/progress.py): a bar in a notebook, rich in a terminal.

``explorer`` registers ``auto`` when it is imported, so ``explorer.compile``, max-autotune and
``c.profile()`` show where they are while they run, and the display goes away when they end. Work
shorter than ``DELAY_S`` shows nothing. ``off()`` / ``auto_on()`` switch it for the process.
"""

from __future__ import annotations

import html
import sys
import time
import uuid
from typing import Any, Callable

from compiler.api import Cancelled, Display, Step, in_notebook, set_display

__all__ = ["Cancelled", "off", "auto_on", "in_notebook", "NotebookBar", "TerminalBar"]

DELAY_S = 0.5  # nothing is shown for work that ends sooner
REFRESH_S = 0.1  # at most this often, unless the stage changed


def _fraction(step: Step) -> float | None:
    """How far along the task is, for the bar: counts when known, else the compile stage's place
    (compiler/model/phases.py COMPILE_STAGES)."""
    if step.total:
        return min(1.0, (step.done or 0) / step.total)
    return step.place


def describe(step: Step, seconds: bool = True) -> str:
    """One line: task, stage, counts, detail and (unless a display shows time itself) seconds."""
    counts = f" {step.done}/{step.total}" if step.total else f" {step.done}" if step.done is not None else ""
    detail = f" · {step.detail}" if step.detail else ""
    return f"{step.task}: {step.stage}{counts}{detail}" + (f" · {step.elapsed:.1f} s" if seconds else "")


class Throttle:
    """Drops steps that come faster than REFRESH_S (stage changes always pass), and everything
    before DELAY_S; ``finished`` steps pass when something was shown."""

    def __init__(self, clock: Callable[[], float] = time.perf_counter) -> None:
        self.clock = clock  # seconds, monotonic; given, the throttle is checked without waiting
        self.shown = False
        self.last_time = 0.0
        self.last_stage = ""

    def wanted(self, step: Step) -> bool:
        if step.finished:
            return self.shown
        now = self.clock()
        if step.elapsed < DELAY_S or (step.stage == self.last_stage and now - self.last_time < REFRESH_S):
            return False
        self.shown, self.last_time, self.last_stage = True, now, step.stage
        return True


class NotebookBar:
    """A bar in the output of the running cell, updated in place and emptied at the end.

    The display id is made before the bar is first shown, so an interrupt that lands while it is being
    shown cannot leave a bar nobody can take away."""

    def __init__(self) -> None:
        self.throttle = Throttle()
        self.display_id = uuid.uuid4().hex
        self.shown = False

    def __call__(self, step: Step) -> None:
        if not self.throttle.wanted(step):
            return
        from IPython.display import display, update_display

        bundle = {"text/plain": ""} if step.finished else bar_bundle(step)
        if self.shown:
            update_display(bundle, raw=True, display_id=self.display_id)
        else:
            self.shown = True
            display(bundle, raw=True, display_id=self.display_id)


def bar_bundle(step: Step) -> dict[str, str]:
    """The bar as a display bundle: an HTML <progress> (indeterminate when nothing is counted) + text."""
    fraction = _fraction(step)
    value = f' value="{fraction:.3f}" max="1"' if fraction is not None else ""
    text = describe(step)
    return {"text/plain": text,
            "text/html": f'<div class="ie-progress" style="font-family:monospace;display:flex;gap:8px;'
                         f'align-items:center"><progress{value} style="width:160px"></progress>'
                         f"<span>{html.escape(text)}</span></div>"}


class TerminalBar:
    """rich progress on stderr, transient: it is erased when the task ends."""

    def __init__(self, console: Any = None) -> None:
        self.throttle = Throttle()
        self.console = console  # rich Console; None: one on stderr
        self.progress: Any = None
        self.task_id: Any = None

    def __call__(self, step: Step) -> None:
        if not self.throttle.wanted(step):
            return
        if step.finished:
            self.progress.stop()
            return
        if self.progress is None:
            from rich.console import Console
            from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

            self.progress = Progress(TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn(),
                                     console=self.console or Console(stderr=True), transient=True)
            self.progress.start()
            self.task_id = self.progress.add_task(step.task, total=1.0)
        # drawn now, not at rich's next tick: the throttle already spaces steps, and a stage that lasts
        # less than a tick would otherwise never be seen
        self.progress.update(self.task_id, completed=_fraction(step) or 0.0, description=describe(step, seconds=False),
                             refresh=True)


def auto(task: str) -> Display | None:
    """A notebook bar inside a Jupyter kernel, rich on an interactive terminal, else nothing."""
    if in_notebook():
        return NotebookBar()
    if sys.stderr.isatty():
        return TerminalBar()
    return None


def off() -> None:
    """Show no progress from now on (in this process)."""
    set_display(lambda task: None)


def auto_on() -> None:
    """Show progress where it can be seen (the default)."""
    set_display(auto)
