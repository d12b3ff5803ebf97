"""Lines at every depth: which line of code a node belongs to, for code the user wrote and code they imported.

Dynamo records the whole Python stack that traced each FX node, from the user's call of the model down to
the torch function that made the op. A user who brings a library model (a transformers ``LlamaForCausalLM``
built from its config) wants time on the model's own source, ``modeling_llama.py``, not all of it on the
one line of their script that calls ``model(input_ids)``. So a node has a line at every *depth*:

- ``"source"`` (the default): the innermost frame that is neither torch nor the standard library. For code
  the user wrote that calls torch, their own line; for a library model, the library's line (``self.q_proj(x)``
  in ``modeling_llama.py``); torch itself only when nothing else is on the stack (``Conv2d.forward`` is the
  same line for every convolution of every model).
- ``"user"``: the innermost frame in the user's own code (not an installed package): the call site of a
  library model.
- a package name (``"transformers"``): the innermost frame in that package.
- ``"module"``: not a line but the dotted path of the innermost ``nn.Module`` (``model.layers.3.self_attn``).

A depth with no frame of its kind on a node's stack falls back to the node's source line. Whose code a file
is comes from the compilation's ``library_files`` (file -> installed package: ``"torch"``, ``"python"`` for
the standard library, ``"transformers"``...), recorded at capture and saved, so a loaded trace answers the same.

The tree (``call_tree``) is every node's stack from the outermost frame of its source-depth path to its
source line, torch and the standard library left out: the user's call site is its root, the library's
lines its branches and leaves.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping

from .formatting import did_you_mean

Line = tuple[str, int]
Frame = tuple[str, int, str]  # (file, line, function), as FxNode.stack holds them
SOURCE, USER, MODULE = "source", "user", "module"
DEPTHS = (SOURCE, USER, MODULE)

_TORCH, _PYTHON = "torch", "python"
LibraryOf = Callable[[str], "str | None"]  # file -> the installed package it belongs to, None for the user's


def rank(file: str, library_of: LibraryOf) -> int:
    """0 for the user's code and libraries other than torch, 1 for the standard library, 2 for torch."""
    library = library_of(file)
    return 2 if library == _TORCH else 1 if library == _PYTHON else 0


def source_index(stack: list[Frame], library_of: LibraryOf) -> int | None:
    """Index in ``stack`` (outermost first) of its source frame: the innermost of the lowest rank."""
    if not stack:
        return None
    ranks = [rank(frame[0], library_of) for frame in stack]
    best = min(ranks)
    return max(i for i, r in enumerate(ranks) if r == best)


def source_line(stack: list[Frame], library_of: LibraryOf) -> Line | None:
    """The node's line at the ``"source"`` depth (what ``FxNode.user_line`` holds)."""
    index = source_index(stack, library_of)
    return None if index is None else (stack[index][0], int(stack[index][1]))


def user_line(stack: list[Frame], library_of: LibraryOf) -> Line | None:
    """The line at the ``"user"`` depth: the innermost frame of the user's own code, else the source line."""
    own = [frame for frame in stack if library_of(frame[0]) is None]
    return (own[-1][0], int(own[-1][1])) if own else source_line(stack, library_of)


def check_depth(depth: str, library_files: Mapping[str, str]) -> str:
    """``depth`` if it names a depth this compilation can answer, else a ValueError listing the valid ones."""
    packages = sorted(set(library_files.values()) - {_TORCH, _PYTHON})
    if depth in DEPTHS or depth in packages or depth == _TORCH:
        return depth
    valid = list(DEPTHS) + packages
    raise ValueError(f"unknown depth {depth!r}{did_you_mean(depth, valid)}: one of {', '.join(map(repr, valid))} "
                     "(a package name is one whose files this compilation's nodes were traced in)")


def key_at(node: Any, depth: str, library_files: Mapping[str, str]) -> Line | str | None:
    """Where ``node`` (an FxNode) belongs at ``depth``: a (file, line), or a module path for ``"module"``."""
    if depth == MODULE:
        return node.module if node.module is not None else ""
    stack = list(node.stack or [])
    source = source_line(stack, library_files.get) if stack else (tuple(node.user_line) if node.user_line else None)
    if depth == SOURCE or not stack:
        return source
    if depth == USER:
        return user_line(stack, library_files.get)
    inner = [frame for frame in stack if library_files.get(frame[0]) == depth]
    return (inner[-1][0], int(inner[-1][1])) if inner else source


def call_path(node: Any, library_files: Mapping[str, str]) -> list[Frame]:
    """The frames of ``node``'s stack down to its source line, torch and the standard library left out
    (outermost first); just the node's line when its stack holds nothing else."""
    stack = list(node.stack or [])
    index = source_index(stack, library_files.get)
    if index is None:
        return [(node.user_line[0], int(node.user_line[1]), "")] if node.user_line else []
    path = [f for f in stack[:index] if rank(f[0], library_files.get) == 0]
    return [(f, int(line), fn) for f, line, fn in path + [stack[index]]]


@dataclass
class CallNode:
    """One line of the call tree: time spent in what it traced itself (``self_ms``) and below it (``total_ms``)."""

    file: str
    line: int
    function: str
    total_ms: float = 0.0
    self_ms: float = 0.0
    children: dict[Line, "CallNode"] = field(default_factory=dict)

    @property
    def where(self) -> Line:
        return (self.file, self.line)

    def walk(self) -> Iterable["CallNode"]:
        yield self
        for child in self.children.values():
            yield from child.walk()


def call_tree(items: Iterable[tuple[Any, float]], library_files: Mapping[str, str]) -> list[CallNode]:
    """The roots of the call tree of ``(node, ms)`` items, heaviest first at every level."""
    roots: dict[Line, CallNode] = {}
    for node, ms in items:
        path = call_path(node, library_files)
        level = roots
        for depth, (file, line, function) in enumerate(path):
            here = level.setdefault((file, line), CallNode(file, line, function))
            here.total_ms += ms
            if depth == len(path) - 1:
                here.self_ms += ms
            level = here.children
    return _sorted(roots)


def _sorted(level: dict[Line, CallNode]) -> list[CallNode]:
    for node in level.values():
        node.children = {n.where: n for n in _sorted(node.children)}
    return sorted(level.values(), key=lambda n: -n.total_ms)


def line_totals(items: Iterable[tuple[Any, float]], library_files: Mapping[str, str]) -> dict[Line, float]:
    """Each line's time including everything it called: every line on a node's call path gets the node's
    time once (a line on the path twice, as a decorator wrapping two calls is, counts once)."""
    out: dict[Line, float] = {}
    for node, ms in items:
        for line in dict.fromkeys((file, number) for file, number, _ in call_path(node, library_files)):
            out[line] = out.get(line, 0.0) + ms
    return out
