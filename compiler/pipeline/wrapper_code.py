"""Reading Inductor's generated wrapper module: kernel definitions and where each kernel is called.

The wrapper is ordinary Python, so kernels are found with ``ast`` (assignments of the form
``name = async_compile.<backend>(..., '''source''', ...)``), not with regular expressions over the text.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Iterable, Iterator

_HANDLE_COMMENT = re.compile(r"#\s*\[Provenance debug handles\]\s*(?P<key>\S+)")


@dataclass
class KernelDefinition:
    name: str
    language: str  # cpp | triton | template | other
    source: str
    lines: tuple[int, int]  # 1-based, inclusive, in the wrapper
    calls: list[int] = field(default_factory=list)


def _language(backend: str, name: str, source: str) -> str:
    if backend == "triton":
        if name.startswith("triton_tem") or "@triton_heuristics.template" in source:
            return "template"
        return "triton"
    if backend.startswith("cpp"):
        return "cpp"
    return backend


def kernel_definitions(wrapper: str) -> dict[str, KernelDefinition]:
    try:
        tree = ast.parse(wrapper)
    except SyntaxError:
        return {}
    found: dict[str, KernelDefinition] = {}
    for stmt in tree.body:
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
            continue
        call = stmt.value
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)):
            continue
        owner = call.func.value
        if not (isinstance(owner, ast.Name) and owner.id == "async_compile"):
            continue
        strings = [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        if not strings:
            continue
        name = stmt.targets[0].id
        source = max(strings, key=len).strip("\n")
        found[name] = KernelDefinition(
            name=name,
            language=_language(call.func.attr, name, source),
            source=source,
            lines=(stmt.lineno, stmt.end_lineno or stmt.lineno),
        )
    _find_calls(wrapper, found)
    return found


def mentions(wrapper: str, names: Iterable[str], before: str, after: str) -> Iterator[tuple[int, str, str]]:
    """(line number, line, name) of each wrapper line naming one of ``names`` between the regex parts
    ``before`` and ``after`` (a Python ``name.run(``, a C++ ``call_name(``): one scan for all the names."""
    names = list(names)
    if not names:
        return
    pattern = re.compile(before + "(" + "|".join(map(re.escape, names)) + ")" + after)
    for lineno, line in enumerate(wrapper.splitlines(), start=1):
        match = pattern.search(line)
        if match is not None:
            yield lineno, line, match.group(1)


def _find_calls(wrapper: str, found: dict[str, KernelDefinition]) -> None:
    for lineno, _, name in mentions(wrapper, found, r"\b", r"(\.run)?\("):
        definition = found[name]
        if not (definition.lines[0] <= lineno <= definition.lines[1]):
            definition.calls.append(lineno)


def handle_comments(lines: list[str], comment: re.Pattern[str]) -> Iterator[tuple[int, str]]:
    """(index, provenance key) of each of ``lines`` holding Inductor's provenance handle comment, as
    ``comment`` (with a group ``key``) matches it in the wrapper's language."""
    for index, line in enumerate(lines):
        match = comment.search(line)
        if match is not None:
            yield index, match["key"]


def handle_call_lines(wrapper: str) -> dict[str, tuple[int, str]]:
    """Provenance key (``name:handle``) -> (line number, text) of the wrapper call it annotates."""
    lines = wrapper.splitlines()
    out: dict[str, tuple[int, str]] = {}
    for index, key in handle_comments(lines, _HANDLE_COMMENT):
        for follow in range(index + 1, min(index + 4, len(lines))):
            text = lines[follow].strip()
            if text and not text.startswith("#"):
                out[key] = (follow + 1, text)
                break
    return out


@dataclass(frozen=True)
class UnhandledCall:
    """An extern call codegen wrote without a provenance handle, found in the final wrapper."""

    node: str  # the scheduler node it is the call of
    name: str  # what it calls: aten.scatter_reduce_.two
    line: int  # 1-based line of the call in the wrapper
    text: str


def _called(text: str, names: list[str]) -> str | None:
    """Which of ``names`` the line calls: as a function (``aten.scatter_reduce_.two(``) or, for an in-place
    op, as a method of its first argument (``buf0.copy_(`` for ``aten.copy_``)."""
    for name in names:
        if re.search(r"(?<![\w.])" + re.escape(name) + r"\(", text):
            return name
        method = name.rsplit(".", 1)[-1]
        if "." in name and re.search(r"\w\." + re.escape(method) + r"\(", text):
            return name
    return None


def unhandled_calls(written: list[tuple[str, list[str]]], wrapper: str, taken: set[int]) -> list[UnhandledCall]:
    """Where in the final wrapper each unhandled extern call is (``written``: scheduler node -> the names its
    call may be spelled with, in codegen order): the next line, after the previous such call, that calls
    one of the names and is no other kernel's (``taken``: wrapper lines of the kernels found already), else
    the first such line before it."""
    lines = wrapper.splitlines()
    out = []
    start = 0
    for node, names in written:  # a subgraph's function may come before the calls of an earlier node
        for index in [*range(start, len(lines)), *range(start)]:
            text = lines[index].strip()
            name = _called(text, names)
            if name and not text.startswith(("#", "//")) and index + 1 not in taken:
                out.append(UnhandledCall(node, name, index + 1, text))
                taken.add(index + 1)
                start = index + 1
                break
    return out
