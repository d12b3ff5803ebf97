"""The wrapper as an FX graph, from Inductor's own FX wrapper codegen, in the same compile.

With ``config.fx_wrapper`` Inductor emits its wrapper through ``WrapperFxCodegen``, whose
``FxConverter`` turns the planned Wrapper IR lines into a GraphModule: ``torch.empty_strided`` for
allocations, ``torch.as_strided`` for reinterprets and reuses with another shape,
``triton_kernel_wrapper_mutation`` for kernel launches and the extern ops themselves. The lines the
converter reads are exactly the ones the ordinary Python wrapper is written from (see wrapper_ir), so
no second codegen pass is needed: the converter runs on them once they are planned, and the user's
compilation keeps running its Python wrapper.

The conversion is not run inside the compile: ``plan`` keeps what the converter reads (the planned
lines, the module prologue, the graph's inputs and outputs, the graph and fake mode it runs under, and
whether kernels are tuned at compile time), and ``convert`` runs it when ``g.wrapper.fx`` is first read.
Run inside the compile it cost more than the compile (it imports every kernel and waits for it).

Side effects, each undone or bounded: the converter is handed the kernel objects the compiled
wrapper loaded (importing each kernel again through ``PyCodeCache`` waited on Inductor's compile
workers: seconds per graph at save); only a kernel not found there is imported again. It registers the
kernels in the higher-order-op kernel side table; the entries it added are removed afterwards, so the
table is as it was (the live GraphModule is then for reading: its launches name kernels by table index).

Inductor's converter handles Triton kernels only; for other kernels (the C++ backend) it raises
``NotImplementedError``, whose message is reported instead of a graph.
"""

from __future__ import annotations

import contextlib
import operator
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Mapping

import torch

from .method_patch import replaced

KERNEL_WRAPPER = "triton_kernel_wrapper_mutation"


def _converter_class() -> Any:
    try:
        from torch._inductor.codegen.wrapper_fxir import FxConverter
    except ImportError:
        return None
    return FxConverter


@contextlib.contextmanager
def _kernel_table_restored() -> Iterator[None]:
    """Remove the kernel and constant-argument entries added inside the block."""
    try:
        from torch._higher_order_ops.triton_kernel_wrap import kernel_side_table as table
    except ImportError:
        yield
        return
    before = {name: dict(getattr(table, name)) for name in ("id_to_kernel", "kernel_to_id", "constant_args")
              if isinstance(getattr(table, name, None), dict)}
    try:
        yield
    finally:
        for name, entries in before.items():
            current = getattr(table, name)
            for key in [k for k in current if k not in entries]:
                del current[key]


def _kernel_name(node: torch.fx.Node) -> str | None:
    from torch._higher_order_ops.triton_kernel_wrap import kernel_side_table

    try:
        kernel = kernel_side_table.get_kernel(node.kwargs["kernel_idx"])
    except Exception:
        return None
    # A JITFunction keeps its name when its Python function was dropped (kernels from Inductor's compile
    # workers, read without reloading it); an Autotuner has none of its own and wraps the JITFunction.
    for candidate in (kernel, getattr(kernel, "fn", None)):
        name = getattr(candidate, "__name__", None)
        if isinstance(name, str):
            return name
    return None


def _kind(node: torch.fx.Node) -> str:
    if node.op == "placeholder":
        return "input"
    if node.op == "output":
        return "output"
    if node.op != "call_function":
        return node.op
    target = node.target
    if target is torch.empty_strided:
        return "alloc"
    if target is torch.as_strided:
        return "reinterpret"
    if getattr(target, "__name__", "") == KERNEL_WRAPPER:
        return "kernel"
    if target is operator.getitem:
        return "getitem"
    if isinstance(target, torch._ops.OpOverload):
        return "extern"
    return "other"


def _target(node: torch.fx.Node) -> str:
    target = node.target
    if isinstance(target, str):
        return target
    if isinstance(target, torch._ops.OpOverload):
        return str(target)
    module = getattr(target, "__module__", None) or ""
    name = getattr(target, "__qualname__", None) or getattr(target, "__name__", None) or repr(target)
    return f"{module}.{name}" if module and not module.startswith("torch._ops") else name


def _args_text(node: torch.fx.Node) -> str:
    if _kind(node) == "kernel":
        grid = node.kwargs.get("grid")
        kwargs = node.kwargs.get("kwargs") or {}
        args = ", ".join(f"{k}={v}" for k, v in kwargs.items())
        return f"grid={grid}, {args}"
    parts = [str(a) for a in node.args] + [f"{k}={v}" for k, v in node.kwargs.items()]
    return ", ".join(parts)


def _describe(gm: torch.fx.GraphModule) -> list[dict[str, Any]]:
    nodes = []
    for node in gm.graph.nodes:
        kind = _kind(node)
        record: dict[str, Any] = {
            "name": node.name, "op": node.op, "kind": kind, "target": _target(node), "args": _args_text(node),
            "inputs": [n.name for n in node.all_input_nodes],
        }
        if kind == "kernel":
            record["kernel"] = _kernel_name(node)
        elif kind == "extern":
            out = node.kwargs.get("out")
            record["buffer"] = out.name if isinstance(out, torch.fx.Node) else node.name
        elif kind in ("alloc", "reinterpret", "getitem"):
            record["buffer"] = node.name
        nodes.append(record)
    return nodes


def _unsupported_kernel(converter: Any, lines: list[Any]) -> str | None:
    """Inductor's own refusal for the first non-Triton kernel launch (checked before any kernel import)."""
    from torch._inductor.codegen import wrapper as _wrapper

    call_line = getattr(_wrapper, "KernelCallLine", None)
    for line in lines:
        if call_line is not None and isinstance(line, call_line) and not line.triton:
            try:
                line.codegen_fx(converter)(line)
            except NotImplementedError as error:
                return f"{type(error).__name__}: {str(error).strip()} ({line.kernel_name})"
    return None


def _hashable_without_function(jit: Any) -> bool:
    """Whether side-table registration (which hashes the JITFunction) works on this kernel as it is.

    A kernel built in Inductor's compile workers comes back without its Python function
    (``prepare_for_pickle`` drops ``JITFunction.fn``), but with the hash Triton computed while compiling it
    and a fresh hash lock (``restore_after_unpickle``): the hash needs the function only while unset."""
    return getattr(jit, "hash", None) is not None and getattr(jit, "_hash_lock", None) is not None


@contextlib.contextmanager
def kernels_with_python_functions(loaded: Mapping[str, Any] | None = None, to_run: bool = True) -> Iterator[None]:
    """For the block, FxConverter's kernel import gives the kernel of that name in ``loaded`` (what the
    compiled wrapper holds), else imports it, with its Python function where the graph needs it.

    Kernels from Inductor's compile workers come back without it (``prepare_for_pickle`` drops
    ``JITFunction.fn``); it is reloaded the way Inductor itself does when it needs it again
    (``_reload_kernel``). A graph that is run (``to_run``: a custom FX wrapper backend) launches the
    JITFunction, which needs it. A graph only read (the explorer's ``g.wrapper.fx``, whose side-table
    entries are removed after) needs it only to register a kernel whose hash is unset: reloading every
    kernel was most of what a process's first conversion added (a 24-block step's first save on an H200,
    one fresh process each: 2.02 s reloading, 1.26 s not)."""
    converter_class = _converter_class()
    original = getattr(converter_class, "_import_kernel", None)
    loaded = loaded or {}
    if original is None:
        yield
        return

    def import_kernel(self: Any, code: str, kernel_name: str) -> Any:
        kernel = loaded.get(kernel_name)
        if kernel is None or not callable(getattr(kernel, "run", None)):
            kernel = original(self, code, kernel_name)
        elif callable(getattr(kernel, "_ensure_kernel_loaded", None)):
            kernel._ensure_kernel_loaded()
        jit = getattr(kernel, "fn", None)
        if (jit is not None and getattr(jit, "fn", True) is None and (to_run or not _hashable_without_function(jit))
                and callable(getattr(kernel, "_reload_kernel", None))):
            kernel.fn = kernel._reload_kernel().fn
        return kernel

    converter_class._import_kernel = import_kernel
    try:
        yield
    finally:
        converter_class._import_kernel = original


@dataclass
class PlannedWrapper:
    """What Inductor's FxConverter reads of one wrapper, kept from the moment its lines are planned."""

    lines: list[Any]
    dropped_lines: int  # text-only lines (size asserts) have no FX form
    prologue: str
    graph_inputs: Any
    graph_outputs: Any
    graph: Any  # the GraphLowering the converter reads through V.graph
    fake_mode: Any
    autotune_at_compile_time: Any


def plan(wrapper: Any) -> PlannedWrapper:
    """Called where the wrapper's lines are planned (inside the compile, under its V.graph)."""
    from torch._inductor import config
    from torch._inductor.virtualized import V

    lines = [line for line in wrapper.lines if not isinstance(line, str)]
    return PlannedWrapper(
        lines=lines, dropped_lines=len(wrapper.lines) - len(lines),
        prologue="\n".join([wrapper.imports.getvalue(), wrapper.header.getvalue()]),
        graph_inputs=wrapper.get_graph_inputs(), graph_outputs=wrapper.get_graph_outputs(),
        graph=V.graph, fake_mode=V.fake_mode,
        autotune_at_compile_time=getattr(config.triton, "autotune_at_compile_time", None),
    )


def _plain_ints(values: Any) -> bool:
    return isinstance(values, (list, tuple)) and all(type(v) is int for v in values)


def _allocation_value(node: torch.fx.Node, fake_mode: Any) -> Any:
    """The fake tensor ``torch.empty_strided(size, stride, dtype=, device=)`` gives, made directly from a meta
    tensor (about a tenth of a fake call's cost); None where the sizes are symbolic or this torch's FakeTensor
    takes other arguments (the full hook then runs)."""
    from torch._subclasses.fake_tensor import FakeTensor

    size, stride = node.args[:2] if len(node.args) >= 2 else (None, None)
    dtype, device = node.kwargs.get("dtype"), node.kwargs.get("device")
    if fake_mode is None or not (_plain_ints(size) and _plain_ints(stride)) or dtype is None or device is None:
        return None
    try:
        return FakeTensor(fake_mode, torch.empty_strided(size, stride, dtype=dtype, device="meta"), torch.device(device))
    except Exception:
        return None


def _view_value(node: torch.fx.Node, fake_mode: Any) -> Any:
    """``torch.as_strided(base, size, stride, offset)`` on the base's fake value: its meta kernel run on the
    base as fake dispatch runs it (inside ``in_kernel_invocation_manager``), and the meta result wrapped as
    a FakeTensor on the base's device, without the dispatch's cache-key hashing, pytree walks and Python
    dispatcher (which only symbolic sizes need); None where sizes are symbolic or the base has no value."""
    from torch._subclasses.fake_tensor import FakeTensor, in_kernel_invocation_manager

    if fake_mode is None or len(node.args) != 4 or node.kwargs:
        return None
    base, size, stride, offset = node.args
    if not (isinstance(base, torch.fx.Node) and _plain_ints(size) and _plain_ints(stride) and type(offset) is int):
        return None
    value = base.meta.get("val")
    if not isinstance(value, FakeTensor) or value.fake_mode is not fake_mode:
        return None
    with in_kernel_invocation_manager(fake_mode):
        meta = torch.ops.aten.as_strided.default(value, size, stride, offset)
    return FakeTensor(fake_mode, meta, value.device)


def _lean_metadata_hook(full: Callable[..., None]) -> Callable[..., None]:
    """The converter's node-metadata hook without the fake calls whose result it knows or can make cheaply.

    The hook runs each new node's target on fake tensors to set ``meta["val"]``: most of a large
    wrapper's conversion (1.9 of 2.3 s for a 24-block training step on an H100; with the cases below
    0.55 of 1.0 s still was, on an H200). A Triton launch (the mutation wrapper) returns nothing, and an
    extern call writing into ``out=`` returns that buffer, whose value the converter set when it allocated
    it: both are set directly. An allocation's value is made from a meta tensor, and a reinterpreting
    view's from its meta kernel run on its base's value. Every other node (extern calls that return a new
    tensor, symbolic sizes) goes through the hook as before. The values are the hook's own: same shape,
    stride, offset, dtype and device (tests/capture/test_wrapper_fx.py compares them node by node).
    """
    from torch._higher_order_ops.triton_kernel_wrap import triton_kernel_wrapper_mutation

    def hook(node: torch.fx.Node, metadata: Any = None, fake_mode: Any = None) -> None:
        out = node.kwargs.get("out")
        if node.target is triton_kernel_wrapper_mutation:
            node.meta["val"] = None
            return
        if isinstance(out, torch.fx.Node) and "val" in out.meta:
            node.meta["val"] = out.meta["val"]
            return
        value = None
        if node.target is torch.empty_strided:
            value = _allocation_value(node, fake_mode)
        elif node.target is torch.as_strided:
            value = _view_value(node, fake_mode)
        if value is None:
            full(node, metadata=metadata, fake_mode=fake_mode)
        else:
            node.meta["val"] = value

    return hook


@contextlib.contextmanager
def _lean_metadata() -> Iterator[None]:
    """``_lean_metadata_hook`` in place of the converter's hook inside the block (where torch has one)."""
    from torch._inductor.codegen import wrapper_fxir

    full = getattr(wrapper_fxir, "_node_metadata_hook", None)
    if full is None:
        yield
        return
    with replaced(wrapper_fxir, "_node_metadata_hook", _lean_metadata_hook(full)):
        yield


@contextlib.contextmanager
def _as_in_the_compile(planned: PlannedWrapper) -> Iterator[None]:
    """The graph, fake mode and compile-time tuning setting the compile had when it planned the lines; the
    graph's output names read once (the converter asks for them at each buffer reuse, and torch builds
    the list again each time: 0.37 of a 24-block step's 2.5 profiled seconds of conversion)."""
    from torch._inductor import config
    from torch._inductor.virtualized import V

    tuning = ({"triton.autotune_at_compile_time": planned.autotune_at_compile_time}
              if planned.autotune_at_compile_time is not None else {})
    output_names = planned.graph.get_output_names()
    with V.set_graph_handler(planned.graph), V.set_fake_mode(planned.fake_mode), config.patch(tuning), \
            replaced(planned.graph, "get_output_names", lambda: output_names):
        yield


def convert(planned: PlannedWrapper, loaded: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Run Inductor's FxConverter on a planned wrapper's lines; ``loaded``: kernel name -> the kernel
    object the compiled wrapper holds (imported again where missing).

    Returns {"status": "built", "module", "code", "nodes", "seconds", "dropped_lines"} or
    {"status": "unsupported" | "failed", "reason"}.
    """
    converter_class = _converter_class()
    if converter_class is None:
        return {"status": "unsupported",
                "reason": "this torch has no FX wrapper codegen (torch._inductor.codegen.wrapper_fxir)"}
    started = time.perf_counter()
    try:
        with _as_in_the_compile(planned):
            converter = converter_class(
                lines=planned.lines, prologue=planned.prologue, graph_inputs=planned.graph_inputs,
                graph_outputs=planned.graph_outputs, subgms={}, is_subgraph=False,
            )
            refusal = _unsupported_kernel(converter, planned.lines)
            if refusal is not None:
                return {"status": "unsupported", "reason": refusal}
            with _kernel_table_restored(), kernels_with_python_functions(loaded, to_run=False), _lean_metadata():
                gm = converter.generate()
                nodes = _describe(gm)
    except Exception as error:
        return {"status": "failed", "reason": f"{type(error).__name__}: {str(error).strip()[:500]}"}
    return {"status": "built", "module": gm, "code": gm.code, "nodes": nodes,
            "seconds": round(time.perf_counter() - started, 6), "dropped_lines": planned.dropped_lines}
