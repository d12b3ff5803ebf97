"""Why torch.export refused a model, said briefly: torch's reason, the user's line, and what to try.

torch.export fails in a few recognisable ways: a branch on a tensor's value (non-strict: a guard on a
data-dependent symbol; strict: Dynamo's "Data-dependent branching" graph break), anything else Dynamo
cannot trace in strict mode (a graph break), Python that needs real values under non-strict tracing
(``.numpy()``, ``.tolist()``), and dynamic dims that the code specializes. Each gets its own hint; the
full message of torch stays chained on the error.
"""

from __future__ import annotations

import linecache
import re
import traceback
from pathlib import Path

import torch

from . import frames

_FILE_LINE = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+)')
_TORCH_DIR = str(Path(torch.__file__).resolve().parent)
_OWN_DIRS = tuple(str(Path(__file__).resolve().parents[2] / room) for room in ("compiler", "explorer"))
_NOISE = ("For more information, run with", "Developer debug context", "For C++ stack trace",
          "Set TORCHDYNAMO_VERBOSE", "The error above occurred when calling torch.export.export",
          "For extended logs when we create symbols")


def message(error: BaseException) -> str:
    """``Type: torch's reason`` without its logging advice, and `` at file:line: code`` of the user's line."""
    text = str(error)
    cut = min((text.index(marker) for marker in _NOISE if marker in text), default=len(text))
    reason = text[:cut].rstrip()
    where = user_line(error)
    if where is not None:
        file, number, code = where
        reason += f"\n  at {file}:{number}" + (f": {code}" if code else "")
    return f"{type(error).__name__}: {reason}"


def user_line(error: BaseException) -> tuple[str, int, str] | None:
    """The innermost frame of the user's code that torch's message (or the traceback) names."""
    candidates = [(m["file"], int(m["line"])) for m in _FILE_LINE.finditer(str(error))]
    stack = [(f.filename, f.lineno or 0) for f in _traceback_frames(error)]
    for file, number in reversed(candidates + stack):
        if not file.startswith((_TORCH_DIR, *_OWN_DIRS)) and not frames.is_entry(file) and Path(file).exists():
            return file, number, linecache.getline(file, number).strip()
    return None


def _traceback_frames(error: BaseException) -> list[traceback.FrameSummary]:
    return list(traceback.extract_tb(error.__traceback__)) if error.__traceback__ is not None else []


def hint(error: BaseException, strict: bool) -> str:
    """What to try for this kind of failure."""
    text = str(error)
    name = type(error).__name__
    if "data-dependent" in text.lower() or "DataDependent" in name:
        return ("the code branches on a tensor's value, which an exported graph cannot hold as Python control "
                "flow: write the branch with torch.cond(pred, true_fn, false_fn, (x,)) or, elementwise, with "
                "torch.where; a check that only guards against bad input can use torch._check(...)")
    if "Constraints violated" in text or "ConstraintViolation" in name or "specializ" in text:
        return ("a dim marked dynamic in dynamic_shapes= was specialized by the code (or its range is wrong): "
                "apply torch's suggested fixes above, or use torch.export.Dim.AUTO to let export infer it")
    if strict:
        return ("strict=True traces the model with Dynamo, which cannot trace this (a graph break); export with "
                "strict=False (the default here), which runs the Python itself on fake tensors")
    return ("non-strict export runs the model's Python on fake tensors, without values: code that needs real "
            "values (.numpy(), .tolist(), .item() in Python logic, printing a tensor) cannot be exported; move it "
            "out of forward, or try strict=True")
