"""What ``explorer.watch()`` needs of Dynamo while a loop runs: each compiled graph's calls, and the value
that broke a guard.

Calls: Dynamo installs the callable its backend returned (``OutputGraph.call_user_compiler``) as the
``__compiled_fn_N`` global that the frame's transformed bytecode calls each time its guards pass. While
a watch is active, ``counting_graphs`` wraps that callable in a counter: one integer added per call, and
one call in ``sample_every`` timed with ``perf_counter`` (from the second on: a graph's
first call also warms it up), so a watched loop stays within a few percent of
an unwatched one (benchmarks/watch_cost.py). A watch whose steps are the calls of the outermost compiled
frame is also told as each call begins (``Sink.on_call``). The method is put back on exit; the wrappers already made
stay in Dynamo's cache (it owns them) but do nothing besides calling the graph once no watch is active.
Graphs compiled before the watch began are not wrapped, so their calls are not seen.

Values: Dynamo's recompile reasons name the guard that failed (``self.n == 1``) but not the value that
broke it. The record is emitted inside ``get_and_maybe_log_recompilation_reasons(cache_entries, frame,
...)``, whose ``frame`` holds the locals and globals the guards were checked on; ``failed_value`` reads
the guarded expression there (names, attributes, constant subscripts only: nothing is evaluated).

Step marks: a TORCH_TRACE log has no steps. When the run writes one, ``log_step_mark`` adds a record
(an ``artifact`` named ``STEP_MARK``) at the end of each step in which compiles began, naming them and the
rule that made the steps, so a log read back places each compile in its step. A step without compiles
writes nothing.

All are probed by feature (``hasattr``), never by version (torch 2.11 to 2.14).
"""

from __future__ import annotations

import ast
import contextlib
import json
import logging
import sys
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterator

from ..model.watch import STEP_MARK
from . import guard, method_patch, optimizer_steps, structured_trace


@dataclass
class GraphCalls:
    """The calls one compiled graph received while a watch was active."""

    compile_id: str
    function: str = ""
    filename: str | None = None
    line: int | None = None
    calls: int = 0
    timed: int = 0  # calls whose time was measured (one in ``sample_every``)
    seconds: float = 0.0  # their total


class Sink:
    """Where the wrappers count: one per active watch, keyed by compile id."""

    def __init__(self, sample_every: int) -> None:
        self.sample_every = max(1, int(sample_every))
        self.graphs: dict[str, GraphCalls] = {}
        # when set: told (compile id, the GraphModule Dynamo compiled, the inputs) at a graph's first call
        self.on_first_call: Callable[[str, Any, tuple[Any, ...]], None] | None = None
        # when set: told (frame id, compile id) as each call of a graph begins, before it is counted
        self.on_call: Callable[[str, str], None] | None = None
        self.modules: dict[str, Any] = {}

    def graph(self, compile_id: str, function: str, filename: str | None, line: int | None) -> GraphCalls:
        calls = self.graphs.get(compile_id)
        if calls is None:
            calls = self.graphs[compile_id] = GraphCalls(compile_id, function, filename, line)
        return calls


_active: list[Sink] = []  # the active watch's sink (at most one)


def active() -> Sink | None:
    return _active[0] if _active else None


def _output_graph_class() -> Any:
    try:
        from torch._dynamo.output_graph import OutputGraph
    except ImportError:
        return None
    return OutputGraph if hasattr(OutputGraph, "call_user_compiler") else None


def _current_compile_id() -> str:
    import torch._guards as guards

    context = getattr(guards, "CompileContext", None)
    current = getattr(context, "current_compile_id", None) if context is not None else None
    compile_id = current() if callable(current) else None
    return str(compile_id) if compile_id is not None else "?"


def _code_of(output_graph: Any) -> tuple[str, str | None, int | None]:
    code = getattr(getattr(output_graph, "root_tx", None), "f_code", None)
    if code is None:
        return "", None, None
    return code.co_name, code.co_filename, code.co_firstlineno


def _callable_graph(compiled: Any) -> Any:
    """What Dynamo would call: a lazy GraphModule is recompiled first, as Dynamo does right after the backend."""
    try:
        from torch.fx._lazy_graph_module import _LazyGraphModule
    except ImportError:
        return compiled
    lazy = compiled if isinstance(compiled, _LazyGraphModule) else getattr(compiled, "__self__", None)
    if isinstance(lazy, _LazyGraphModule) and hasattr(_LazyGraphModule, "force_recompile"):
        _LazyGraphModule.force_recompile(lazy)
        return lazy.forward
    return compiled


def counted(compiled: Any, compile_id: str, function: str, filename: str | None, line: int | None) -> Callable[..., Any]:
    """``compiled`` wrapped so that the active watch counts (and samples the time of) its calls."""
    perf_counter = time.perf_counter
    current: list[Any] = [None, None]  # the sink last counted into, and this graph's GraphCalls there
    frame_id = compile_id.split("/")[0]  # "1/2": frame 1 (a code object), its second recompile

    def watched_graph(*args: Any, **kwargs: Any) -> Any:
        if not _active:
            return compiled(*args, **kwargs)
        sink = _active[0]
        if current[0] is not sink:
            current[0], current[1] = sink, sink.graph(compile_id, function, filename, line)
        on_call = sink.on_call
        if on_call is not None:
            try:
                on_call(frame_id, compile_id)
            except Exception:  # the watch's fault: reported, and the graph runs as ever
                with guard.never_breaking(__name__):
                    raise
        calls = current[1]
        calls.calls += 1
        if calls.calls == 1 and sink.on_first_call is not None:
            with guard.never_breaking(__name__):
                sink.on_first_call(compile_id, sink.modules.get(compile_id), args)
        if (calls.calls - 2) % sink.sample_every:  # the 2nd call, then one in sample_every (the 1st warms up)
            return compiled(*args, **kwargs)
        start = perf_counter()
        out = compiled(*args, **kwargs)
        calls.seconds += perf_counter() - start
        calls.timed += 1
        return out

    watched_graph.__name__ = f"watched_{getattr(compiled, '__name__', 'graph')}"
    watched_graph.__wrapped_graph__ = compiled  # type: ignore[attr-defined]
    return watched_graph


@contextlib.contextmanager
def counting_graphs(sink: Sink) -> Iterator[bool]:
    """Every graph Dynamo compiles inside the block is counted into ``sink`` while the block runs (and into
    any later watch's). Yields whether the hook could be installed on this torch."""
    if _active:
        raise RuntimeError("a watch is already active")
    owner = _output_graph_class()
    _active.append(sink)
    if owner is None:
        try:
            yield False
        finally:
            _active.clear()
        return
    original = owner.call_user_compiler

    def call_user_compiler(self: Any, gm: Any, *args: Any, **kwargs: Any) -> Any:
        compiled = original(self, gm, *args, **kwargs)
        with guard.never_breaking(__name__):
            compile_id = _current_compile_id()
            function, filename, line = _code_of(self)
            sink.graph(compile_id, function, filename, line)
            if sink.on_first_call is not None:
                sink.modules[compile_id] = gm
            return counted(_callable_graph(compiled), compile_id, function, filename, line)
        return compiled

    try:
        with method_patch.replaced(owner, "call_user_compiler", call_user_compiler):
            yield True
    finally:
        _active.clear()


def _writes_log(handler: logging.Handler) -> bool:
    """A handler that writes a TORCH_TRACE log: torch's own, or a structured_trace collector given a log."""
    return type(handler).__module__ != structured_trace.__name__ or getattr(handler, "stream", None) is not None


def log_step_mark(step: int, compile_ids: list[str], rule: str) -> None:
    """Record in the run's TORCH_TRACE log, if one is being written, that ``compile_ids`` began in ``step``
    (``rule``: what made the steps, a ``StepRule`` value)."""
    with guard.never_breaking(__name__):
        if not any(_writes_log(h) for h in logging.getLogger(structured_trace.TRACE_LOGGER).handlers):
            return
        import torch._logging

        trace_structured = getattr(torch._logging, "trace_structured", None)
        if callable(trace_structured):
            mark = json.dumps({"step": step, "compile_ids": compile_ids, "rule": rule})
            trace_structured("artifact", metadata_fn=lambda: {"name": STEP_MARK, "encoding": "json"},
                             payload_fn=lambda: mark)


def installed() -> dict[str, Any]:
    """The hooks a watch touches, as they are now (tests compare them before and after a watch)."""
    import logging

    owner = _output_graph_class()
    handler = getattr(getattr(sys.modules.get("torch._dynamo.callback"), "callback_handler", None), "__dict__", {})
    return {
        "call_user_compiler": owner.__dict__.get("call_user_compiler") if owner is not None else None,
        "trace_handlers": list(logging.getLogger("torch.__trace").handlers),
        "trace_level": logging.getLogger("torch.__trace").level,
        "callbacks": {k: list(v) for k, v in handler.items() if isinstance(v, list)},
        "active": list(_active),
        "optimizer_step_hooks": optimizer_steps.global_hooks(),
        # the handlers torch's warnings reach and their filters (a watch keeps those warnings for its notes)
        "torch_log_handlers": {name: [(h, list(h.filters)) for h in logger.handlers]
                               for name, logger in sorted(logging.Logger.manager.loggerDict.items())
                               if isinstance(logger, logging.Logger) and name.startswith("torch") and logger.handlers},
        # the modules whose ``trace_structured`` is not torch's own (the trace filter rebinds them)
        "trace_structured": sorted(name for name, module in list(sys.modules.items())
                                   if _binds_other_trace_structured(module)),
    }


def _binds_other_trace_structured(module: Any) -> bool:
    try:
        bound = vars(module).get("trace_structured")
    except TypeError:  # not a module (sys.modules may hold anything)
        return False
    return callable(bound) and getattr(bound, "__module__", "") != "torch._logging._internal"


# ------------------------------------------------------------------------------------------ values


_RECOMPILING = "get_and_maybe_log_recompilation_reasons"


def _compiling_frame() -> Any:
    """The user frame Dynamo is checking guards on (a local of the function that logs the reasons)."""
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name == _RECOMPILING:
            target = frame.f_locals.get("frame")
            if hasattr(target, "f_locals") and hasattr(target, "f_globals"):
                return target
        frame = frame.f_back
    return None


def _read(node: ast.AST, scope: dict[str, Any], globals_: dict[str, Any]) -> Any:
    if isinstance(node, ast.Name):
        if node.id in scope:
            return scope[node.id]
        if node.id in globals_:
            return globals_[node.id]
        raise LookupError(node.id)
    if isinstance(node, ast.Attribute):
        return getattr(_read(node.value, scope, globals_), node.attr)
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        base = _read(node.value, scope, globals_)
        if isinstance(base, (dict, list, tuple)):  # containers only: no user __getitem__
            return base[node.slice.value]
    raise LookupError(ast.dump(node))


def failed_value(expression: str) -> str | None:
    """repr of ``expression`` (``self.n``, ``L['x'].n``, ``cfg['k']``) in the frame being recompiled, or None
    when it cannot be read without evaluating code (or no frame is being recompiled)."""
    result: str | None = None
    with guard.never_breaking(__name__):
        frame = _compiling_frame()
        if frame is None:
            return None
        scope = dict(frame.f_locals)
        scope.setdefault("L", dict(frame.f_locals))
        scope.setdefault("G", frame.f_globals)
        try:
            tree = ast.parse(expression.strip(), mode="eval").body
            value = _read(tree, scope, frame.f_globals)
        except (LookupError, AttributeError, SyntaxError, TypeError, IndexError):
            return None
        text = repr(value)
        result = text if len(text) <= 200 else text[:197] + "..."
    return result
