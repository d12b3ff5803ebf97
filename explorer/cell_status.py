"""What a %%compile cell shows while it works and when it fails: a status line replaced in place by the
result, and short errors instead of tracebacks (used by the magic and by ``--trace`` runs)."""

from __future__ import annotations

import contextlib
import html
import re
import warnings
from typing import Any

from IPython.display import display

from compiler import CompileError
from compiler.api import Step

from . import progress as progress_steps


class CellFailed(Exception):
    """A %%compile cell that did not compile or run: shown as a short message, not a traceback."""

    def __init__(self, stage: str, message: str) -> None:
        super().__init__(f"%%compile failed during {stage}: {message}")
        self.stage = stage

    def _render_traceback_(self) -> list[str]:
        return [str(self), "(the notebook namespace and earlier compilations are unchanged)"]


class CellCancelled(CellFailed):
    """A %%compile cell interrupted while compiling: nothing was recorded or assigned."""

    def __init__(self, message: str) -> None:
        Exception.__init__(self, f"%%compile: {message}")
        self.stage = "cancelled"


class StatusLine:
    """A status line shown while compiling, replaced in place by the result (display_id); while the
    compile runs it shows the compiler's progress steps as a bar (explorer/progress.py)."""

    def __init__(self, text: str, quiet: bool) -> None:
        self.quiet = quiet
        self.handle = None if quiet else display(_TextLine(text), display_id=True)
        self.throttle = progress_steps.Throttle()

    def __call__(self, step: Step) -> None:
        if self.handle is not None and not step.finished and self.throttle.wanted(step):
            self.handle.update(progress_steps.bar_bundle(step), raw=True)

    def update(self, obj: Any) -> None:
        if self.handle is not None:
            self.handle.update(obj if not isinstance(obj, str) else _TextLine(obj))

    def done(self, obj: Any) -> None:
        if self.handle is not None:
            self.handle.update(obj)


class _TextLine:
    def __init__(self, text: str) -> None:
        self.text = text

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return {"text/plain": self.text,
                "text/html": f'<div class="ie-progress" style="font-family:monospace">{html.escape(self.text)}</div>'}

    def __repr__(self) -> str:
        return self.text


def error_summary(error: CompileError) -> str:
    """One paragraph: the error's first line, Dynamo's explanation if any, and the user line it points at."""
    text = str(error)
    prefix = f"compilation failed during {error.stage}: "
    text = text[len(prefix):] if text.startswith(prefix) else text
    lines = [line.strip() for line in text.strip().splitlines()]
    parts = [lines[0] if lines else text]
    explanation = next((line for line in lines if line.startswith("Explanation:")), None)
    if explanation:
        parts.append(explanation[len("Explanation:"):].strip()[:400])
    places = re.findall(r'File "([^"]+)", line (\d+)', text)
    if places:
        file, line = places[-1]
        parts.append(f"at line {line} of the cell" if file.startswith("<%%compile") else f"at {file}:{line}")
    return " - ".join(parts)


@contextlib.contextmanager
def quiet_capture_warnings():
    """A capture turns Inductor's caches off on purpose; torch's warning about it is noise in a notebook."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*force disabled by torch.compiler.config.force_disable_caches")
        yield
