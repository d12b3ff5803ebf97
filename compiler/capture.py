"""capture(): run the real torch.compile + Inductor on a function and keep every stage it produced."""

from __future__ import annotations

import time
import types
from typing import Any, Callable, Mapping

import torch

from . import toggles
from ._torch import backend as _backend
from ._torch import (environment, errors, hooks, inductor_config, memory_estimate, scheduler_ir, timing, wrapper_fx,
                     wrapper_ir)
from ._torch.output_code import provenance_tables
from .assemble import InnerRecord, assemble
from .compilation import Compilation, tensor_specs, user_sources
from .errors import CompileError
from .stages import AutotuneRecord, GraphCapture

_RESUME_PREFIX = "torch_dynamo_resume_in"


class _Recorder:
    """Receives every hook call of one capture and keeps the raw records in order."""

    def __init__(self, settings: dict[str, Any]) -> None:
        self.settings = settings
        self.active = True
        self.stage = "tracing"
        self.dynamo_modules: list[torch.fx.GraphModule] = []
        self.inner: list[InnerRecord] = []
        self.current: InnerRecord | None = None
        self.entry_code: types.CodeType | None = None

    # --- backend ---------------------------------------------------------------------------
    def backend(self, gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Any:
        self.stage = "aot"
        with inductor_config.patched(self.settings):  # also for recompiles after the capture
            compiled = _backend.make_backend(self.on_dynamo_graph, self.around_inner)(gm, example_inputs)
        self.stage = "tracing"
        return compiled

    def on_dynamo_graph(self, gm: torch.fx.GraphModule, example_inputs: list[Any]) -> int:
        if not self.active:
            return -1
        self.dynamo_modules.append(_backend.copy_graph_module(gm))
        return len(self.dynamo_modules) - 1

    def around_inner(self, dynamo_index: int, compile_inner: Callable[..., Any], gm: Any, inputs: Any, **kwargs: Any) -> Any:
        if not self.active or dynamo_index < 0:
            return compile_inner(gm, inputs, **kwargs)
        record = InnerRecord(dynamo_index=dynamo_index, kind=_backend.graph_kind(kwargs))
        self.inner.append(record)
        outer, self.current = self.current, record
        previous_stage, self.stage = self.stage, "lowering"
        mark = timing.mark()
        try:
            record.compiled_fn = compile_inner(gm, inputs, **kwargs)
        finally:
            self.current = outer
            record.timings = timing.stages(timing.since(mark))
        self.stage = previous_stage
        return record.compiled_fn

    # --- Inductor hooks --------------------------------------------------------------------
    def on_pre_fusion(self, nodes: list[Any]) -> None:
        if self.current is None:
            return
        self.stage = "scheduling"
        self.current.loop_ir = [scheduler_ir.loop_ir_record(n) for n in nodes]
        kept = {r["name"] for r in self.current.loop_ir}
        self.current.eliminated = scheduler_ir.eliminated_records(kept)
        self.current.post_grad_module = scheduler_ir.lowered_graph_module()

    def on_post_fusion(self, nodes: list[Any]) -> None:
        if self.current is None:
            return
        self.stage = "codegen"
        self.current.fused = [scheduler_ir.fused_record(n) for n in nodes]

    def on_output_code(self, code: str) -> None:
        if self.current is None:
            return
        self.stage = "kernel compile"
        self.current.wrapper = code
        self.current.provenance, self.current.kernel_traces = provenance_tables()

    def on_wrapper_planned(self, wrapper: Any) -> None:
        """The wrapper's planned lines: its memory plan, Inductor's estimate and its FX form."""
        if self.current is None:
            return
        self.current.memory = {**wrapper_ir.events(wrapper), "estimate": memory_estimate.estimate()}
        self.current.wrapper_fx = wrapper_fx.convert(wrapper)

    def on_node_lines(self, node_name: str, lines: list[str]) -> None:
        if self.current is not None:
            self.current.node_lines.setdefault(node_name, set()).update(lines)

    def on_kernel_nodes(self, key: str, node_names: list[str]) -> None:
        if self.current is not None:
            self.current.kernel_nodes[key] = node_names

    def on_fusion_refused(self, name1: str, name2: str, reason: str) -> None:
        if self.current is not None:
            self.current.refused.append((name1, name2, reason))

    def on_autotune(self, kernel: str, choice: str, time_ms: float, chosen: bool, source: str) -> None:
        target = self.current or (self.inner[-1] if self.inner else None)
        if target is not None and self.active:
            target.autotune.append(AutotuneRecord(kernel, choice, time_ms, chosen, source))

    def keep_code(self, code: types.CodeType) -> bool:
        """Our private entry copy and Dynamo's resume functions made from it stay cached (see dynamo_codes)."""
        return code is self.entry_code or code.co_name.startswith(_RESUME_PREFIX)

    # --- results ---------------------------------------------------------------------------
    def graphs(self) -> list[GraphCapture]:
        return [assemble(i, rec, self.dynamo_modules[rec.dynamo_index]) for i, rec in enumerate(self.inner)]


def _clone_function(fn: types.FunctionType) -> types.FunctionType:
    """The same function with its own code object, so Dynamo's cache for it is ours alone."""
    clone = types.FunctionType(fn.__code__.replace(), fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)
    clone.__kwdefaults__ = fn.__kwdefaults__
    clone.__qualname__ = fn.__qualname__
    clone.__module__ = fn.__module__
    return clone


def _entry(target: Any) -> tuple[Callable[..., Any], str]:
    """A private entry function for ``target`` and the name to show for it."""
    original = getattr(target, "_orig_mod", None) or getattr(target, "_torchdynamo_orig_callable", None)
    if original is not None:  # already wrapped by torch.compile: explore what it wraps
        target = original
    if isinstance(target, types.FunctionType):
        return _clone_function(target), target.__qualname__
    if isinstance(target, types.MethodType) and isinstance(target.__func__, types.FunctionType):
        return types.MethodType(_clone_function(target.__func__), target.__self__), target.__qualname__
    if not callable(target):
        raise TypeError(f"explorer.compile needs a function or nn.Module, got {type(target).__name__}")

    self = target  # Dynamo names graph inputs after this variable: l_self_modules_fc_parameters_weight_

    def entry(*args: Any, **kwargs: Any) -> Any:
        return self(*args, **kwargs)

    name = type(target).__name__ if isinstance(target, torch.nn.Module) else getattr(target, "__qualname__", repr(target))
    return _clone_function(entry), name


def _device_of(target: Any, inputs: tuple[Any, ...]) -> str:
    for value in inputs:
        if isinstance(value, torch.Tensor):
            return str(value.device)
    if isinstance(target, torch.nn.Module):
        for param in target.parameters():
            return str(param.device)
    return "cpu"


def _grad_roots(outputs: Any) -> list[torch.Tensor]:
    leaves = outputs if isinstance(outputs, (list, tuple)) else [outputs]
    flat: list[Any] = []
    for leaf in leaves:
        flat.extend(leaf.values() if isinstance(leaf, Mapping) else leaf if isinstance(leaf, (list, tuple)) else [leaf])
    return [t for t in flat if isinstance(t, torch.Tensor) and t.requires_grad]


def capture(
    target: Any,
    *inputs: Any,
    config: Mapping[str, Any] | None = None,
    backward: bool = False,
    dynamic: bool | None = False,
    kwargs: Mapping[str, Any] | None = None,
) -> Compilation:
    """Compile ``target(*inputs, **kwargs)`` with torch.compile + Inductor and capture every stage.

    ``config`` takes toggle names (see ``compiler.toggles.TOGGLES``) or raw Inductor keys; it is
    validated before anything compiles. ``backward=True`` also runs a backward pass through the
    outputs that require grad, so the backward graphs are compiled and captured. Shapes are static
    unless ``dynamic`` says otherwise, so a capture never depends on what was compiled before it.
    """
    settings = toggles.resolve(config)
    toggles.check_capturable(settings)
    entry, name = _entry(target)
    recorder = _Recorder(settings)
    recorder.entry_code = getattr(entry, "__code__", None) or entry.__func__.__code__
    compiled = torch.compile(entry, backend=recorder.backend, dynamic=dynamic)
    call_kwargs = dict(kwargs or {})
    device = _device_of(target, inputs)
    overrides: dict[str, Any] = {}
    started = time.perf_counter()
    mark = timing.mark()
    with hooks.capture_hooks(
        settings={**hooks.device_settings(device), **settings},
        on_pre_fusion=recorder.on_pre_fusion,
        on_post_fusion=recorder.on_post_fusion,
        on_output_code=recorder.on_output_code,
        on_node_lines=recorder.on_node_lines,
        on_kernel_nodes=recorder.on_kernel_nodes,
        on_fusion_refused=recorder.on_fusion_refused,
        on_autotune=recorder.on_autotune,
        keep_code=recorder.keep_code,
        on_wrapper_planned=recorder.on_wrapper_planned,
    ):
        internal = {**hooks.CAPTURE_SETTINGS, **hooks.device_settings(device)}
        overrides = {key: value for key, value in inductor_config.overrides(ignore_prefixes=("trace.", "_")).items()
                     if key not in internal or key in settings}
        try:
            outputs = compiled(*inputs, **call_kwargs)
            if backward:
                recorder.stage = "backward"
                roots = _grad_roots(outputs)
                if not roots:
                    raise ValueError("backward=True, but no output requires grad: give inputs or parameters requires_grad=True")
                torch.autograd.backward(roots, [torch.ones_like(r) for r in roots])
        except Exception as error:
            recorder.active = False
            stage = _failed_stage(recorder.stage, error)
            cause = errors.backend_cause(error) or error
            partial = _compilation(recorder, name, device, config, settings, overrides, inputs, None,
                                   backward, time.perf_counter() - started, mark, compiled, target)
            raise CompileError(stage, f"{type(cause).__name__}: {cause}", partial) from error
    recorder.active = False
    elapsed = time.perf_counter() - started
    return _compilation(recorder, name, device, config, settings, overrides, inputs, outputs, backward,
                        elapsed, mark, compiled, target)


def _failed_stage(stage: str, error: BaseException) -> str:
    if stage == "tracing" and not errors.is_dynamo_error(error):
        return "run"
    return stage


def _compilation(recorder: _Recorder, name: str, device: str, config: Mapping[str, Any] | None,
                 settings: dict[str, Any], overrides: dict[str, Any], inputs: tuple[Any, ...], outputs: Any,
                 backward: bool, elapsed: float, mark: dict[str, int], compiled: Any, target: Any) -> Compilation:
    graphs = recorder.graphs()
    raw = timing.since(mark)
    timings = {"total": round(elapsed, 6), **timing.stages(raw)}
    # AOT autograd's own time: its timer also spans the inner (Inductor) compiles it calls
    timings["aot"] = round(max(0.0, raw.get("create_aot_dispatcher_function", 0.0) - raw.get("compile_fx_inner", 0.0)), 6)
    meta = environment.describe(device)
    return Compilation(
        function=name,
        toggles=toggles.toggle_names_for(settings) if config else {},
        inductor_overrides=overrides,
        backward=backward,
        timings=timings,
        created=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        inputs=tensor_specs(inputs),
        output_specs=tensor_specs(outputs) if outputs is not None else [],
        graphs=graphs,
        sources=user_sources(graphs),
        outputs=outputs,
        compiled=compiled,
        target=target,
        example_inputs=inputs,
        **meta,
    )
