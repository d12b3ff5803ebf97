"""The message of a failed compile: the cause in the user's code first, the compiler's context after.

When the user's call fails while Dynamo traces it (a wrong input shape reaching ``layer_norm``), Dynamo
wraps what torch raised in its own errors ("RuntimeError when making fake tensor call", a graph-break
explanation, hints) and lists the explorer's entry frame under "from user code"; the one sentence the
user needs came hundreds of characters later. Here it comes first, with the user's line, and the
explorer's own frames are dropped from the context.

An error the user's code raised itself (a ``ValueError`` in the function, a torch call refusing its
arguments while the function runs eagerly after a graph break) carries no stack from Dynamo: its line is
found in its traceback instead, the innermost frame of the user's code, unless torch's compiler ran below
that frame (then the compiler raised it, and its context says where).
"""

from __future__ import annotations

import linecache
import os
from pathlib import Path

from .._torch import errors
from . import frames

_OWN_DIR = os.path.join(os.path.normcase(str(Path(__file__).resolve().parents[1])), "")  # compiler/


def describe(error: BaseException) -> str:
    """``Type: message`` of the cause, where it happened in the user's code, then the compiler's context."""
    wrapped = errors.backend_cause(error) or error
    cause = errors.root_cause(wrapped)
    text = f"{type(cause).__name__}: {cause}"
    where = _where(frames.without_entry(errors.user_stack(wrapped)) or _raised_by_user_code(cause))
    if cause is wrapped:
        return text + where
    return f"{text}{where}\n\nThe compiler's context: {type(wrapped).__name__}: {_without_entry(str(wrapped))}"


def _raised_by_user_code(error: BaseException) -> list[frames.Frame]:
    """The frames ``error`` passed through, when the user's code raised it: neither the explorer's frames nor
    code torch generated, and [] when no frame is the user's or torch's compiler ran inside the innermost one."""
    stack = [frame for frame in errors.raised_through(error)
             if not os.path.normcase(frame[0]).startswith(_OWN_DIR) and not errors.generated_by_torch(frame[0])]
    users = [i for i, (file, _, _) in enumerate(stack) if frames.kind_of(file) == frames.USER]
    if not users or any(errors.in_compiler(file) for file, _, _ in stack[users[-1] + 1:]):
        return []
    return stack


def _where(stack: list[frames.Frame]) -> str:
    """`` at file:line in fn: code`` for the user's innermost frame, and the library frames it called."""
    line = frames.best_line(stack)
    if line is None:
        return ""
    file, number = line
    function = next(fn for f, n, fn in reversed(stack) if (f, n) == line)
    code = linecache.getline(file, number).strip()
    text = f"\n  at {file}:{number} in {function}" + (f": {code}" if code else "")
    inner = stack[[(f, n) for f, n, _ in stack].index(line) + 1:]
    return text + "".join(f"\n  inside {f}:{n} in {fn}" for f, n, fn in inner)


def _without_entry(message: str) -> str:
    """Dynamo's message without the explorer's entry frame (its ``File`` line and the code lines below)."""
    out: list[str] = []
    skipping = False
    for line in message.splitlines():
        stripped = line.strip()
        if stripped.startswith('File "'):
            skipping = frames.is_entry(stripped[len('File "'):].split('"', 1)[0])
        elif skipping and not stripped:
            skipping = False
        if not skipping:
            out.append(line)
    return "\n".join(out)
