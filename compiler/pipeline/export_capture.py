"""capture_export(): torch.export, then AOTInductor, with every stage kept like a torch.compile capture.

The exported program's module goes through the same Inductor lowering, scheduling and codegen as a
Dynamo graph, so the capture's recorder receives it the same way (``_torch/aot_compile`` routes
AOTInductor's inner compile and its C++ output to it), with codegen's recorder swapped for ``_AotOutput``.
What differs is kept here: the export stage (signature, range constraints of dynamic dims), the C++
wrapper and kernel file as the wrapper stage, and the runs, which load the ``.pt2`` package with
``aoti_load_package`` as a deployment does.
"""

from __future__ import annotations

import inspect
import time
import types
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

import torch

from .._torch import aot_compile, hooks, inductor_config, timing
from .._torch.output_code import provenance_tables
from ..model import progress
from ..model.compilation import Compilation, LiveHandles
from ..model.dynamo import DynamoStage
from ..model.errors import CompileError, ExportError
from ..model.export import ExportStage
from . import compile_errors, export_errors, package_check, toggles
from .capture import _Recorder
from .capture_request import CaptureRequest, compilation_from_capture
from .recording.codegen import CodegenRecorder
from .recording.state import CaptureState
from .specs import user_sources


@dataclass(frozen=True)
class ExportRequest(CaptureRequest):
    """A capture request with what torch.export and AOTInductor take besides."""

    dynamic_shapes: Any = None  # torch.export's, as given (a function's checked against its parameters)
    package_path: str | Path | None = None  # where the .pt2 package goes (None: where AOTInductor puts it)
    strict: bool = False  # torch.export's strict mode


class _AotOutput(CodegenRecorder):
    """Codegen of an AOTInductor compile: the C++ wrapper and kernel file replace what the Python output hook
    saw (on a GPU, AOT codegen runs twice: a Python pass that autotunes, then the C++ pass that is packaged;
    only the second pass's stages are the package's)."""

    def __init__(self, state: CaptureState) -> None:
        super().__init__(state)
        self.first_pass_keys: set[str] = set()

    def on_output_code(self, code: str) -> None:
        """The Python pass of AOT codegen on a GPU: keep its Triton sources, forget its scheduling records
        (the C++ pass schedules again and reports every node anew)."""
        super().on_output_code(code)
        record = self.state.current
        if record is None:
            return
        record.python_pass = code
        self.first_pass_keys = set(record.provenance)
        record.loop_ir, record.eliminated, record.fused, record.refused = [], [], [], []
        record.node_lines, record.kernel_nodes, record.combos = {}, {}, {}

    def on_aot_code(self, wrapper: str, kernel_code: str) -> None:
        record = self.state.current
        if record is None:
            return
        self.state.enter("kernel compile")
        provenance, traces = provenance_tables()
        record.provenance = {k: v for k, v in provenance.items() if k not in self.first_pass_keys}
        record.kernel_traces = {k: v for k, v in traces.items() if k not in self.first_pass_keys}
        record.wrapper, record.kernel_code, record.wrapper_language = wrapper, kernel_code, "cpp"
        record.wrapper_fx = None


def capture_export(
    model: Any,
    args: tuple[Any, ...],
    kwargs: Mapping[str, Any] | None = None,
    *,
    dynamic_shapes: Any = None,
    config: Mapping[str, Any] | None = None,
    package_path: str | Path | None = None,
    strict: bool = False,
    trace_dir: str | Path | None = None,
    progress_display: progress.Display | bool | None = None,
) -> Compilation:
    """Export ``model(*args, **kwargs)`` with torch.export, compile it with AOTInductor into a ``.pt2``
    package, load the package with ``aoti_load_package`` and capture every stage on the way.

    ``dynamic_shapes`` and ``strict`` are torch.export's; ``config`` takes the toggles and raw Inductor
    keys ``explorer.compile`` takes; ``package_path`` is where the package goes (a ``.pt2`` path; by
    default where AOTInductor puts it). A model torch.export cannot export raises ``ExportError`` with
    torch's reason, the user's line and what to try; a missing C++ compiler raises ``CompileError``
    before anything runs."""
    settings = toggles.resolve(config)
    toggles.check_capturable(settings)
    if package_path is not None and not str(package_path).endswith(".pt2"):
        raise ValueError(f"package_path={str(package_path)!r}: an AOTInductor package is a file ending in .pt2")
    args = tuple(args) if isinstance(args, (list, tuple)) else (args,)
    module, name = _as_module(model)
    if isinstance(module, _Function) and dynamic_shapes is not None:
        dynamic_shapes = _function_shapes(module.fn, dynamic_shapes)
    device = _device_of(module, args)
    for note in toggles.without_effect(settings, device):
        warnings.warn(note, toggles.ToggleWarning, stacklevel=2)
    with inductor_config.patched(settings):  # cpp.cxx may name the compiler
        missing = aot_compile.compiler_missing()
    if missing:
        raise CompileError("aot", f"{missing}: AOTInductor compiles the package's wrapper and kernels with a "
                           "C++ compiler. Install one (g++ or clang++; set CXX to choose), or explore the same "
                           "model without a package: explorer.compile(model, *inputs)", None)
    request = ExportRequest(target=module, entry=module, name=name, inputs=args, kwargs=dict(kwargs or {}),
                            config=config, settings=settings, device=device, trace_dir=trace_dir,
                            dynamic_shapes=dynamic_shapes, package_path=package_path, strict=strict)
    with progress.task(f"export {name}", display=progress_display):
        return _capture(request)


def _capture(request: ExportRequest) -> Compilation:
    started = time.perf_counter()
    progress.step("export", detail="torch.export.export")
    module, args, kwargs = request.target, request.inputs, request.kwargs
    try:
        program = aot_compile.export(module, args, kwargs, request.dynamic_shapes, request.strict)
    except Exception as error:
        raise ExportError(export_errors.message(error), export_errors.hint(error, request.strict)) from error
    exported = time.perf_counter() - started
    recorder = _Recorder({**request.settings, **hooks.KERNEL_RANGES}, request.device, request.trace_dir)
    state = recorder.state
    recorder.codegen = aot_output = _AotOutput(state)
    state.enter("aot")
    mark = timing.mark()
    package_path = None if request.package_path is None else str(request.package_path)
    try:
        with recorder.capturing(), aot_compile.observed(recorder.dynamo.on_dynamo_graph, recorder.aot.around_inner,
                                                       aot_output.on_aot_code):
            path = aot_compile.compile_and_package(program, package_path, {})
        state.active = False
        progress.step("load", detail="aoti_load_package")
        refused = package_check.refusal(path, lambda: _compiler_name(request.settings))
        if refused:
            raise CompileError("aot", refused, None)
        loaded = aot_compile.load_package(path)
        progress.step("run", detail="the package on the example inputs")
        with torch.no_grad():
            outputs = loaded(*args, **kwargs)
    except CompileError:
        state.active = False
        raise
    except Exception as error:
        state.active = False
        stage = state.stage if state.inner else "aot"
        raise CompileError(stage, compile_errors.describe(error), None) from error
    for record in state.inner:
        record.compiled_fn = None  # AOT's inner compile returns file paths, not a callable wrapper
    graphs = recorder.graphs()
    raw = timing.since(mark)
    timings = {"total": round(time.perf_counter() - started, 6), "export": round(exported, 6), **timing.stages(raw)}
    dynamic_shapes = request.dynamic_shapes
    stage = ExportStage(**aot_compile.describe_program(program),
                        dynamic_shapes="" if dynamic_shapes is None else repr(dynamic_shapes), strict=request.strict,
                        package_path=str(path))
    live = LiveHandles(loaded, module, args, kwargs, grad_enabled=False, outputs=outputs, rerun=_no_recompile,
                       build_package=_package_builder(program, state.settings, request.device))
    return compilation_from_capture(request, live, graphs=graphs, timings=timings, sources=user_sources(graphs),
                                    dynamo=DynamoStage(), log_path=recorder.log_path, export=stage,
                                    notes=state.notes)


def _compiler_name(settings: dict[str, Any]) -> str:
    with inductor_config.patched(settings):  # cpp.cxx may name the compiler
        return aot_compile.compiler_name()


def _package_builder(program: Any, settings: dict[str, Any], device: str) -> Any:
    """Builds the package again from ``program`` with the capture's Inductor settings and ``extra`` ones
    (a run that needs an instrumented copy of the package), without the capture's hooks."""

    def build(extra: dict[str, Any], package_path: str) -> str:
        with inductor_config.patched({**hooks.device_settings(device), **settings, **extra}):
            return aot_compile.compile_and_package(program, package_path, {})

    return build


def _no_recompile(compilation: Compilation, inputs: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    raise RuntimeError(f"{compilation.function} is an AOTInductor package: it never recompiles. c.run(...) runs it on "
                       "any inputs its exported shapes accept (dynamic_shapes=); for other shapes export again with "
                       "explorer.export(model, args, dynamic_shapes=...)")


class _Function(torch.nn.Module):
    """A plain function as the module torch.export needs. Its ``forward`` carries the function's own
    signature, so the exported program names the inputs as the function does (``x``, ``w``; not
    ``args_0``) and ``dynamic_shapes`` are given as for the function: in argument order or by name."""

    def __init__(self, fn: Any) -> None:
        super().__init__()
        self.fn = fn
        traced = _named_forward(fn)

        def forward(*args: Any, **kwargs: Any) -> Any:
            return traced(*args, **kwargs)

        forward.__signature__ = inspect.signature(fn)  # type: ignore[attr-defined]
        self.forward = forward


def _named_forward(fn: Any) -> Any:
    """``fn`` running as a function named ``forward``: torch.export keeps only the frames of functions named
    ``forward`` in a node's stack trace, so without this a plain function's own lines (and a
    ``%%compile --export`` cell's) would be missing from every node and kernel. The copy shares the
    function's code, globals, defaults and closure; only the frame's name differs."""
    if not isinstance(fn, types.FunctionType):
        return fn
    renamed = types.FunctionType(fn.__code__.replace(co_name="forward"), fn.__globals__, fn.__name__,
                                 fn.__defaults__, fn.__closure__)
    renamed.__kwdefaults__ = fn.__kwdefaults__
    return renamed


def _function_shapes(fn: Any, dynamic_shapes: Any) -> Any:
    """``dynamic_shapes`` of a plain function (a tuple in argument order, or a dict by parameter name),
    checked against its parameters: a name it does not take is refused with the names it does."""
    if isinstance(dynamic_shapes, dict):
        names = list(inspect.signature(fn).parameters)
        unknown = [key for key in dynamic_shapes if key not in names]
        if unknown:
            raise ValueError(f"dynamic_shapes names {unknown}, which {getattr(fn, '__name__', fn)} does not take; "
                             f"its parameters: {names}")
    return dynamic_shapes


def _as_module(model: Any) -> tuple[torch.nn.Module, str]:
    original = getattr(model, "_orig_mod", None)  # already wrapped by torch.compile: export what it wraps
    if original is not None:
        model = original
    if isinstance(model, torch.nn.Module):
        return model, type(model).__name__
    if callable(model):
        return _Function(model), getattr(model, "__qualname__", repr(model))
    raise TypeError(f"explorer.export needs an nn.Module or a function, got {type(model).__name__}")


def _device_of(module: torch.nn.Module, args: tuple[Any, ...]) -> str:
    for value in args:
        if isinstance(value, torch.Tensor):
            return str(value.device)
    for param in module.parameters():
        return str(param.device)
    return "cpu"
