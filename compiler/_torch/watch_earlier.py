"""Graphs Dynamo compiled before a watch began: found in its caches, so that the watch counts their calls
and the graph breaks after them too.

A watch wraps the graphs compiled while it is active (watch_hooks.counting_graphs) and reads their breaks
from the records torch emits as they compile. A graph compiled earlier emitted its records before the watch
listened, and its transformed bytecode calls the unwrapped graph. Dynamo keeps what is needed to find it:

- ``convert_frame.input_codes``: the code objects it was asked to compile (weak references);
- ``eval_frame._debug_get_cache_entry_list(code)``: each one's cache entries, with their ``compile_id`` and
  the transformed ``code``, whose names hold the graph it calls (``__compiled_fn_N_<uuid>``, a global of
  the user's module) and, after a graph break, the function that resumes the frame (``__resume_at_*``,
  whose code is named ``torch_dynamo_resume_in_<fn>_at_<line>`` and starts at the break's line).

``counting_earlier`` replaces those globals with watch_hooks' counting wrapper while the watch runs (around
the graph Dynamo installed under ``disable``, and under ``disable`` again, as Dynamo installs it) and puts
the graphs back on exit. Dynamo's reason for such a break was logged before the watch began: its line is
known, its words are not. All of it is probed by feature: a torch without these finds nothing.
"""

from __future__ import annotations

import contextlib
import sys
from dataclasses import dataclass, field
from typing import Any, Iterator

from . import guard
from .watch_hooks import counted

_GRAPH = "__compiled_fn_"
_RESUME = "__resume_at_"


@dataclass
class EarlierGraph:
    """One cache entry Dynamo made before the watch began: its graph and the break after it, if any."""

    compile_id: str
    function: str
    filename: str | None
    line: int | None
    graph: str | None = None  # the global name its transformed code calls the graph by
    scope: dict[str, Any] | None = field(default=None, repr=False)  # the module globals holding it
    resume: tuple[str, str, int] | None = None  # the break after the graph: (resume function, file, line)
    resume_ids: list[str] = field(default_factory=list)  # the compiles of the function that resumes


def _cache_entries() -> list[tuple[Any, str, Any]]:
    """(original code, compile id, transformed code) of every cache entry Dynamo holds now."""
    try:
        from torch._C._dynamo.eval_frame import _debug_get_cache_entry_list
        from torch._dynamo.convert_frame import input_codes
    except ImportError:
        return []
    seen = getattr(input_codes, "seen", None)
    if not isinstance(seen, list):
        return []
    found = []
    for ref in list(seen):
        code = ref() if callable(ref) else None
        if code is None:
            continue
        for entry in _debug_get_cache_entry_list(code):
            compile_id, transformed = getattr(entry, "compile_id", None), getattr(entry, "code", None)
            if compile_id is not None and transformed is not None:
                found.append((code, str(compile_id), transformed))
    return found


def _scopes(names: set[str]) -> dict[str, dict[str, Any]]:
    """The module globals holding each name (Dynamo installs a graph in the globals of its frame's module)."""
    out: dict[str, dict[str, Any]] = {}
    for module in list(sys.modules.values()):
        scope = getattr(module, "__dict__", None)
        if isinstance(scope, dict):
            for name in names & scope.keys():
                out.setdefault(name, scope)
    return out


def earlier_graphs() -> list[EarlierGraph]:
    """Every graph and graph break Dynamo's caches hold now (call it as a watch begins)."""
    graphs: list[EarlierGraph] = []
    with guard.never_breaking(__name__):
        entries = _cache_entries()
        ids_of: dict[Any, list[str]] = {}
        for code, compile_id, _ in entries:
            ids_of.setdefault(code, []).append(compile_id)
        names = {n for _, _, transformed in entries for n in transformed.co_names if n.startswith((_GRAPH, _RESUME))}
        scopes = _scopes(names)
        for code, compile_id, transformed in entries:
            graph = next((n for n in transformed.co_names if n.startswith(_GRAPH)), None)
            resume_name = next((n for n in transformed.co_names if n.startswith(_RESUME)), None)
            if graph is None and resume_name is None:
                continue
            earlier = EarlierGraph(compile_id, code.co_name, code.co_filename, code.co_firstlineno, graph,
                                   scopes.get(graph) if graph else None)
            resume_code = getattr(scopes.get(resume_name, {}).get(resume_name), "__code__", None) if resume_name else None
            if resume_code is not None:
                earlier.resume = (resume_code.co_name, resume_code.co_filename, resume_code.co_firstlineno)
                earlier.resume_ids = list(ids_of.get(resume_code, []))
            graphs.append(earlier)
    return graphs


def _disabled(wrapper: Any) -> Any:
    """``wrapper`` as Dynamo installs a graph: under ``torch._dynamo.disable``, so that Dynamo does not try
    to compile the wrapper's own frame when the transformed code calls it."""
    import torch._dynamo

    return torch._dynamo.disable(wrapper)


@contextlib.contextmanager
def counting_earlier(graphs: list[EarlierGraph]) -> Iterator[None]:
    """While the block runs, each of ``graphs`` is called through watch_hooks' counting wrapper (counted into
    the active watch); on exit each global holds its graph again, unless something replaced it meanwhile."""
    replaced: list[tuple[dict[str, Any], str, Any, Any]] = []
    with guard.never_breaking(__name__):
        for earlier in graphs:
            scope, name = earlier.scope, earlier.graph
            current = scope.get(name) if scope is not None and name else None
            if current is None or hasattr(current, "__wrapped_graph__"):  # gone, or counted already
                continue
            wrapper = _disabled(counted(getattr(current, "__wrapped__", current), earlier.compile_id,
                                        earlier.function, earlier.filename, earlier.line))
            scope[name] = wrapper  # type: ignore[index]
            replaced.append((scope, name, current, wrapper))  # type: ignore[arg-type]
    try:
        yield
    finally:
        for scope, name, original, wrapper in replaced:
            if scope.get(name) is wrapper:
                scope[name] = original
