"""Whose code a source frame is: the user's, an installed library's, or the explorer's own entry.

Dynamo records the Python stack that produced every FX node. For a model passed as a module the stack
starts in the explorer's entry wrapper (``private_entry.py``'s function calling the model, ``capture.py``,
or ``export_capture.py``'s module around an exported function): that frame is never shown. Frames in
installed packages (torch, transformers, ...) are library frames. A node's line (``FxNode.user_line``) is its line at the
``"source"`` depth of compiler/model/lines.py: the innermost frame that is neither torch nor the standard
library (the user's own line, or a library model's own source), torch only when nothing else is there.
"""

from __future__ import annotations

import importlib.util
import os
import site
import sysconfig
from functools import lru_cache
from pathlib import Path

from ..model import lines

Frame = tuple[str, int, str]  # (file, line, function)

ENTRY_FILES = tuple(os.path.normcase(str(Path(__file__).with_name(name)))
                    for name in ("capture.py", "export_capture.py", "private_entry.py"))
USER, LIBRARY, TORCH = 0, 1, 2  # frame kinds, most specific first


def is_entry(file: str) -> bool:
    """The explorer's wrapper around a model call (the only explorer files a stack can hold)."""
    return os.path.normcase(file) in ENTRY_FILES


@lru_cache(maxsize=1)
def _install_roots() -> tuple[tuple[str, str | None], ...]:
    """(directory, package name or None) for every place installed code lives: site-packages (the
    package is the first path component below it), the standard library ("python") and torch's own
    directory (so a torch built from a source checkout is a library too). Deepest directory first."""
    paths = sysconfig.get_paths()
    packages = {paths.get("purelib"), paths.get("platlib"), *getattr(site, "getsitepackages", lambda: [])()}
    roots = [(p, None) for p in packages if p]
    roots += [(p, "python") for p in {paths.get("stdlib"), paths.get("platstdlib")} if p]
    torch = importlib.util.find_spec("torch")  # where it is, without importing it (a log is read without torch)
    if torch is not None and torch.origin:
        roots.append((str(Path(torch.origin).parent), "torch"))
    normalized = {(os.path.join(os.path.normcase(os.path.realpath(p)), ""), name) for p, name in roots}
    return tuple(sorted(normalized, key=lambda r: -len(r[0])))


@lru_cache(maxsize=4096)
def library_of(file: str) -> str | None:
    """The installed package a file belongs to ("torch", "transformers", "python" for the standard
    library), or None for the user's own code."""
    path = os.path.normcase(os.path.realpath(file))
    for root, name in _install_roots():
        if path.startswith(root):
            if name is not None:
                return name
            top = path[len(root):].split(os.sep, 1)[0]
            return top[:-3] if top.endswith(".py") else top
    return None


def kind_of(file: str) -> int:
    library = library_of(file)
    if library is None:
        return USER
    return TORCH if library == "torch" else LIBRARY


def without_entry(frames: list[Frame]) -> list[Frame]:
    return [f for f in frames if not is_entry(f[0])]


@lru_cache(maxsize=16384)
def source_line(frames: tuple[Frame, ...]) -> tuple[str, int] | None:
    """A node's line (see the module docstring), read with this process's installed packages. The nodes of one
    line share their stack, and a library model's stacks are deep: each stack is read once."""
    return lines.source_line(list(frames), library_of)


def best_line(frames: list[Frame]) -> tuple[str, int] | None:
    """The innermost frame of the user's own code (where an error or a recompile is theirs to fix), else the
    source line."""
    return lines.user_line(frames, library_of)


def stack_lines(frames: list[Frame]) -> list[tuple[str, int]]:
    """Every line of a stack, innermost first."""
    return [(file, line) for file, line, _ in reversed(frames)]


def strip_entry(stack_trace: str) -> str:
    """A formatted stack trace without the explorer's entry frame (each frame starts with '  File'; torch.export
    strips the first one's indent)."""
    if stack_trace.startswith('File "'):
        stack_trace = "  " + stack_trace
    blocks: list[str] = []
    for chunk in stack_trace.split('  File "')[1:]:
        if not is_entry(chunk.split('"', 1)[0]):
            blocks.append('  File "' + chunk)
    head = stack_trace.split('  File "', 1)[0]
    return head + "".join(blocks)
