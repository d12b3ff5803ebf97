"""The wrapper's plan of buffers, read from Inductor's Wrapper IR after its memory-planning pass.

``PythonWrapperCodegen`` first collects the call function as a list of Wrapper IR lines
(``AllocateLine``, ``FreeIfNotReusedLine``, ``KernelCallLine``, ``ExternKernelOutLine``, ...), then runs
``run_wrapper_ir_passes`` over them: buffer reuse turns an ``AllocateLine`` into a ``ReuseLine`` (the
``# reuse`` lines of the text) and marks the matching free as reused. Only after that is text written.
Wrapping that one method hands the planned lines over while the graph is still live, so sizes come
from Inductor's own allocation sizes and in-place updates (``codegen_inplace_reuse``, which records
them in ``wrapper.reuses``) can be told apart from reuse of a freed buffer.

``events`` turns the lines into plain records (no torch objects) for ``compiler.pipeline.memory_plan``.
"""

from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator

from torch._inductor import ir as _ir
from torch._inductor.codegen import wrapper as _wrapper
from torch._inductor.virtualized import V

from . import guard, method_patch


def _line_class(name: str) -> type | tuple[()]:
    return getattr(_wrapper, name, ())


def _hint(expr: Any) -> int | None:
    sizevars = V.graph.sizevars
    hint = getattr(sizevars, "optimization_hint", None) or getattr(sizevars, "size_hint")
    try:
        return int(hint(expr, fallback=0))
    except Exception:
        return None


def buffer_info(node: Any) -> dict[str, Any]:
    """Bytes of the storage Inductor allocates for ``node``, its dtype, shape and device."""
    info: dict[str, Any] = {}
    try:
        dtype = node.get_dtype()
        elements = _hint(V.graph.get_allocation_storage_size(node))
        info["bytes"] = None if elements is None else elements * dtype.itemsize
        info["dtype"] = str(dtype)
        info["shape"] = [_hint(s) for s in node.get_size()]
        device = node.get_device()
        info["device"] = None if device is None else device.type
    except Exception:  # layouts without a size (NoneLayout, MultiOutputLayout)
        info.setdefault("bytes", None)
    return info


def _allocates_output(node: Any) -> bool:
    """An extern op that allocates its result itself (not a tuple: those come as MultiOutput lines)."""
    layout = getattr(node, "layout", None)
    return isinstance(layout, _ir.Layout) and not isinstance(layout, (_ir.MultiOutputLayout, _ir.NoneLayout))


def _event(line: Any, wrapper: Any) -> dict[str, Any] | None:
    if isinstance(line, _line_class("AllocateLine")):
        return {"op": "alloc", "buffer": line.node.get_name(), **buffer_info(line.node)}
    if isinstance(line, _line_class("ReuseLine")):
        old, new = line.node.get_name(), line.reused_as.get_name()
        return {"op": "reuse", "buffer": new, "from": old, "delete_old": bool(line.delete_old),
                "inplace": getattr(wrapper, "reuses", {}).get(new) == old, **buffer_info(line.reused_as)}
    if isinstance(line, _line_class("FreeIfNotReusedLine")):
        return None if line.is_reused else {"op": "free", "buffer": line.node.get_name()}
    if isinstance(line, _line_class("FreeLine")):
        return {"op": "free", "buffer": line.node.get_name(), "input": True}
    if isinstance(line, _line_class("ReinterpretLine")):
        return {"op": "alias", "buffer": line.reused_as.get_name(), "from": line.node.get_name(),
                **buffer_info(line.reused_as)}
    if isinstance(line, _line_class("KernelCallLine")):
        return {"op": "call", "kind": "kernel", "kernel": line.kernel_name}
    if isinstance(line, _line_class("ExternKernelOutLine")):
        return {"op": "call", "kind": "extern", "kernel": line.node.get_kernel_name(), "buffer": line.node.get_name()}
    if isinstance(line, _line_class("ExternKernelAllocLine")):
        node = line.node
        event = {"op": "call", "kind": "extern_alloc", "kernel": node.get_kernel_name(), "buffer": node.get_name()}
        if _allocates_output(node):
            event["allocates"] = buffer_info(node)
        return event
    if isinstance(line, _line_class("MultiOutputLine")):
        info = buffer_info(V.graph.get_buffer(line.result_name)) if V.graph.try_get_buffer(line.result_name) else {}
        return {"op": "multi_output", "buffer": line.result_name, "from": line.arg_name, **info}
    fallbacks = tuple(c for c in (_line_class("ScatterFallbackLine"), _line_class("IndexPutFallbackLine")) if c)
    if fallbacks and isinstance(line, fallbacks):
        return {"op": "call", "kind": "extern", "kernel": line.node.get_kernel_name(), "buffer": line.node.get_name()}
    if isinstance(line, _line_class("EnterSubgraphLine")):
        return {"op": "subgraph", "enter": True}
    if isinstance(line, _line_class("ExitSubgraphLine")):
        return {"op": "subgraph", "enter": False}
    if isinstance(line, _line_class("MemoryPlanningLine")) and not isinstance(line, _line_class("NullLine")):
        return {"op": "unknown", "line": type(line).__name__}
    return None


def events(wrapper: Any) -> dict[str, Any]:
    """The planned call function as plain records, plus the graph's inputs and outputs."""
    out: list[dict[str, Any]] = []
    for line in wrapper.lines:
        event = _event(line, wrapper)
        if event is not None:
            out.append(event)
    inputs = {}
    for name, value in V.graph.graph_inputs.items():
        data = getattr(getattr(value, "data", None), "data", None)  # TensorBox -> StorageBox -> InputBuffer
        if data is not None:
            inputs[name] = buffer_info(data).get("bytes")
    return {"events": out, "inputs": inputs, "outputs": list(V.graph.get_output_names())}


def _is_subgraph(wrapper: Any) -> bool:
    sub = getattr(_wrapper, "SubgraphPythonWrapperCodegen", None)
    return sub is not None and isinstance(wrapper, sub)


@contextlib.contextmanager
def on_planned_wrapper(callback: Callable[[Any], None]) -> Iterator[None]:
    """Call ``callback(wrapper)`` once the wrapper's lines are planned (top-level graphs only)."""
    original = getattr(_wrapper.PythonWrapperCodegen, "run_wrapper_ir_passes", None)
    if original is None:
        yield
        return

    def run_wrapper_ir_passes(self: Any, is_inference: bool) -> Any:
        result = original(self, is_inference)
        if not _is_subgraph(self):
            with guard.never_breaking(__name__):
                callback(self)
        return result

    with method_patch.replaced(_wrapper.PythonWrapperCodegen, "run_wrapper_ir_passes", run_wrapper_ir_passes):
        yield
