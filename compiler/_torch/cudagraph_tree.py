"""The CUDA graph tree (``torch._inductor.cudagraph_trees``) seen from outside: what its manager does with each
function Inductor hands it, and running those functions without their CUDA graphs.

Inductor gives the tree one function per recorded callable (a graph's wrapper ``call``, or one partition
function ``partition_N``); the tree's ``CUDAGraphTreeManager`` runs it first eagerly in the graphs' memory
pool (``run_eager``: the warm-up), then records it (``record_function``), then replays it
(``execute_node``), and records it again when a recorded graph no longer fits the inputs: the node's
``check_invariants`` says why (a static input or a pool tensor moved). At run time it may give up on a
function (an input it mutates that is not static, too many re-recordings) and says so on the ``cudagraphs``
log, as it warns of too many distinct shapes there.

``observed(callback)`` wraps those methods while a block runs and calls ``callback(TreeEvent)`` for each;
nested blocks all receive every event. ``without_cuda_graphs()`` makes the manager run each function's
callable directly, as it does after a skip: the same kernels, launched one by one, for timing a program
without its CUDA graphs. ``place(compiled_fn, model)`` says which partition of a compiled graph a recorded
callable is. Everything is probed by feature (``hasattr``); a torch without trees observes nothing.
"""

from __future__ import annotations

import contextlib
import logging
import re
import threading
from dataclasses import dataclass
from typing import Any, Callable, Iterator

from . import guard, method_patch

# where torch logs skips and the too-many-shapes warning (``cudagraphs_log`` of cudagraph_utils)
SKIP_LOGGER = "torch._inductor.cudagraph_utils.__cudagraphs"
_PARTITION = re.compile(r"partition_(\d+)")


@dataclass(frozen=True)
class TreeEvent:
    """One thing the tree did, for one function (``function`` None: a skip logged outside any function's run,
    while Inductor compiled)."""

    kind: str  # "warm-up" | "eager" | "record" | "re-record" | "replay" | "skip" | "many shapes"
    function: int | None  # the function's id in its manager
    device: int | None
    model: Any  # the callable the tree records (live): a wrapper's ``call`` or a ``partition_N`` function
    compile_id: str | None  # the Dynamo compile it came from ("0/1")
    mode: str  # "FORWARD" | "BACKWARD" | "INFERENCE" ("" when unknown)
    cuda_graph: int | None = None  # the tree's id of the CUDA graph recorded or replayed
    reason: str = ""  # a re-record's reason (the invariant that failed), a skip's or warning's message
    pool_bytes: int | None = None  # the memory pool's segments after a recording
    mutated: tuple[str, ...] = ()  # a skip: the placeholders the function mutates that are not static


_callbacks: list[Callable[[TreeEvent], None]] = []
_local = threading.local()  # .running: the (manager, function id) stack of _run; .failed: fid -> invariant failure


def _classes() -> tuple[Any, Any] | None:
    try:
        from torch._inductor import cudagraph_trees as trees
    except ImportError:
        return None
    manager, node = getattr(trees, "CUDAGraphTreeManager", None), getattr(trees, "CUDAGraphNode", None)
    needed = ("_run", "run_eager", "record_function", "execute_node")
    if manager is None or node is None or not all(hasattr(manager, n) for n in needed):
        return None
    return manager, node


def available() -> bool:
    return _classes() is not None


def _emit(event: TreeEvent) -> None:
    for callback in list(_callbacks):
        with guard.never_breaking(__name__):
            callback(event)


def _event(manager: Any, kind: str, function_id: Any, **extra: Any) -> TreeEvent:
    funcs = getattr(manager, "ids_to_funcs", {})
    wrapped = funcs.get(function_id)
    compile_id = getattr(manager, "id_to_compile_id", {}).get(function_id)
    mode = getattr(manager, "id_to_mode", {}).get(function_id)
    return TreeEvent(kind=kind, function=getattr(function_id, "id", None),
                     device=getattr(manager, "device_index", None), model=getattr(wrapped, "model", None),
                     compile_id=str(compile_id) if compile_id is not None else None,
                     mode=getattr(mode, "name", "") or "", **extra)


def pool_bytes(manager: Any) -> int | None:
    """The bytes of the segments in the tree's memory pool (``torch.cuda.memory_snapshot``)."""
    import torch

    pool = getattr(manager, "cuda_graphs_thread_pool", None)
    if pool is None:
        return None
    pool = tuple(pool)
    return sum(int(s.get("total_size", 0)) for s in torch.cuda.memory_snapshot()
               if tuple(s.get("segment_pool_id", ())) == pool)


def _failed() -> dict[Any, tuple[Any, Any]]:
    failed = getattr(_local, "failed", None)
    if failed is None:
        failed = _local.failed = {}
    return failed


def _running() -> list[tuple[Any, Any]]:
    running = getattr(_local, "running", None)
    if running is None:
        running = _local.running = []
    return running


def _wrappers(manager_class: Any, node_class: Any) -> list[tuple[Any, str, Callable[..., Any]]]:
    """(owner, method name, replacement): each replacement calls the original and reports what it did."""
    run, run_eager = manager_class._run, manager_class.run_eager
    record, execute = manager_class.record_function, manager_class.execute_node
    check = getattr(node_class, "check_invariants", None)

    def _run(self: Any, new_inputs: Any, function_id: Any) -> Any:
        running = _running()
        running.append((self, function_id))
        try:
            return run(self, new_inputs, function_id)
        finally:
            running.pop()

    def run_eager_observed(self: Any, new_inputs: Any, function_id: Any) -> Any:
        warm = function_id in getattr(self, "warmed_up_functions", ())
        with guard.never_breaking(__name__):
            _emit(_event(self, "eager" if warm else "warm-up", function_id))
        return run_eager(self, new_inputs, function_id)

    def record_observed(self: Any, new_inputs: Any, function_id: Any) -> Any:
        failure = _failed().pop((id(self), function_id), None)
        reason = ""
        with guard.never_breaking(__name__):
            if failure is not None:
                status, detail = failure
                described = detail() if callable(detail) else ""
                reason = str(described or status).strip()
        out = record(self, new_inputs, function_id)
        with guard.never_breaking(__name__):
            current = getattr(self, "current_node", None)
            graph = getattr(getattr(current, "id", None), "id", None)
            _emit(_event(self, "re-record" if failure is not None else "record", function_id, cuda_graph=graph,
                         reason=reason, pool_bytes=pool_bytes(self)))
        return out

    def execute_observed(self: Any, node: Any, new_inputs: Any) -> Any:
        with guard.never_breaking(__name__):
            function_id = node.wrapped_function.id
            _failed().pop((id(self), function_id), None)
            _emit(_event(self, "replay", function_id, cuda_graph=getattr(getattr(node, "id", None), "id", None)))
        return execute(self, node, new_inputs)

    out = [(manager_class, "_run", _run), (manager_class, "run_eager", run_eager_observed),
           (manager_class, "record_function", record_observed), (manager_class, "execute_node", execute_observed)]
    if check is not None:
        def check_observed(self: Any, inputs: Any) -> Any:
            result = check(self, inputs)
            with guard.never_breaking(__name__):
                status, detail = result
                if getattr(status, "name", "") != "SUCCESS" and _running():
                    manager, function_id = _running()[-1]
                    _failed()[(id(manager), function_id)] = (status, detail)
            return result

        out.append((node_class, "check_invariants", check_observed))
    return out


class _SkipLog(logging.Handler):
    """The ``cudagraphs`` log's warnings: a skip, or too many shapes, for the function the tree is running."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)

    def emit(self, record: logging.LogRecord) -> None:
        with guard.never_breaking(__name__):
            message = record.getMessage()
            kind = "skip" if message.lower().startswith("skipping cudagraph") else (
                "many shapes" if "distinct sizes" in message else "")
            if not kind:
                return
            running = _running()
            if not running:
                _emit(TreeEvent(kind=kind, function=None, device=None, model=None, compile_id=None, mode="",
                                reason=message))
                return
            manager, function_id = running[-1]
            _emit(_event(manager, kind, function_id, reason=message, mutated=_mutated(manager, function_id)))


def _mutated(manager: Any, function_id: Any) -> tuple[str, ...]:
    """The placeholders a function mutates that are not static inputs (what a mutated-input skip is about)."""
    wrapped = getattr(manager, "ids_to_funcs", {}).get(function_id)
    if wrapped is None:
        return ()
    static = set(getattr(wrapped, "static_input_idxs", ()) or ())
    placeholders = list(getattr(wrapped, "placeholders", ()) or ())
    return tuple(placeholders[i].name for i in getattr(wrapped, "mutated_input_idxs", ()) or ()
                 if i not in static and i < len(placeholders))


@contextlib.contextmanager
def _patched() -> Iterator[None]:
    classes = _classes()
    if classes is None:
        yield
        return
    handler, logger = _SkipLog(), logging.getLogger(SKIP_LOGGER)
    with contextlib.ExitStack() as stack:
        for owner, name, replacement in _wrappers(*classes):
            stack.enter_context(method_patch.replaced(owner, name, replacement))
        logger.addHandler(handler)
        stack.callback(logger.removeHandler, handler)
        yield


_installed: list[contextlib.ExitStack] = []


@contextlib.contextmanager
def observed(callback: Callable[[TreeEvent], None]) -> Iterator[None]:
    """``callback(event)`` for everything the tree does while the block runs (the methods are wrapped while
    at least one block is open)."""
    if not _callbacks:
        stack = contextlib.ExitStack()
        stack.enter_context(_patched())
        _installed.append(stack)
    _callbacks.append(callback)
    try:
        yield
    finally:
        _callbacks.remove(callback)
        if not _callbacks and _installed:
            _installed.pop().close()


@contextlib.contextmanager
def without_cuda_graphs() -> Iterator[bool]:
    """Inside the block the tree runs every function's callable directly (what it does after a skip): the
    same kernels launched one by one. Yields False on a torch without trees (nothing changes)."""
    classes = _classes()
    if classes is None:
        yield False
        return
    manager_class = classes[0]

    def _run(self: Any, new_inputs: Any, function_id: Any) -> Any:
        return self.ids_to_funcs[function_id].model(new_inputs)

    with method_patch.replaced(manager_class, "_run", _run):
        yield True


def _reachable(start: Any, target: Any, limit: int = 64) -> bool:
    """Whether ``target`` is ``start`` or reached from it through bound methods, ``__wrapped__``, partials and
    closures (how Inductor wraps the callable it records)."""
    pending, seen = [start], set()
    while pending and len(seen) < limit:
        candidate = pending.pop()
        if candidate is None or id(candidate) in seen:
            continue
        if candidate is target:
            return True
        seen.add(id(candidate))
        pending += [getattr(candidate, "__func__", None), getattr(candidate, "__wrapped__", None),
                    getattr(candidate, "func", None)]
        pending += [cell.cell_contents for cell in (getattr(candidate, "__closure__", None) or ())
                    if callable(getattr(cell, "cell_contents", None))]
    return False


_WHOLE = -1


def place(compiled_fn: Any, model: Any) -> int | None:
    """Which function of compiled graph ``compiled_fn`` the tree's ``model`` is: ``N`` for ``partition_N``,
    ``-1`` for the graph recorded whole, None when it is not this graph's."""
    runner = getattr(compiled_fn, "compiled_fn_runner", None)
    for index, partition in enumerate(getattr(runner, "partitions", None) or []):
        if _reachable(partition, model):
            match = _PARTITION.fullmatch(getattr(model, "__name__", ""))
            return int(match.group(1)) if match else index
    if _reachable(getattr(compiled_fn, "current_callable", None), model):
        return _WHOLE
    return None
