"""capture(): run the real torch.compile + Inductor on a function and keep every stage it produced.

The public ``capture`` (``explorer.compile``) is compiler/pipeline/capture_entry.py's: it notes when the call
began, then calls ``captured`` here, once this module's imports (torch's compiler) ran.
"""

from __future__ import annotations

import contextlib
import copy
import time
import types
import warnings
from pathlib import Path
from typing import Any, Iterator, Mapping

import torch

from .._torch import dynamo_codes, errors, fx_graph_cache, hooks, inductor_config, shape_mode, structured_trace, timing
from .._torch.cudagraph_partitions import PartitionRecord
from .._torch.pattern_rewrites import Source
from ..model import progress
from ..model.compilation import Compilation, LiveHandles, Note
from ..model.errors import CompileError
from ..model.stages import GraphCapture
from ..model.trace_log import Record
from . import compile_errors, cudagraph_capture, frames, toggles
from .assemble import InnerRecord
from .capture_request import CaptureRequest, compilation_from_capture
from .capture_store import CaptureStore
from .dynamo_records import PAYLOADS, READS, add_sources
from .private_entry import private_entry
from .recording.aot import AotRecorder
from .recording.autotune import AutotuneRecorder
from .recording.codegen import CodegenRecorder
from .recording.compile_time import COMPILE_TIME_READS, CompileTimeRecorder
from .recording.cudagraphs import CudaGraphRecorder
from .recording.dynamo import DynamoRecorder
from .recording.scheduling import SchedulingRecorder
from .recording.served import ServedGraphs
from .recording.state import CaptureState
from .specs import flat_tensors, user_sources

# Whether captures keep what c.compile_time is built from (torch's timer events, the hooks' own time).
# On by default; benchmarks/compile_time.py turns it off to measure what keeping them costs.
RECORD_COMPILE_TIME = True


class _Recorder:
    """Receives every hook call of one capture and hands it to the recorder of the stage it belongs to
    (compiler/pipeline/recording/), then assembles what they kept into graphs.

    Dynamo's backend, the capture hooks' listener (``hooks.CaptureListener``) and the structured trace's
    handler all call this one object, so the hooks are installed in one place (``capturing``) and a recompile
    after the capture (``rerun``) is recorded by the same recorders into the same compilation."""

    def __init__(self, settings: dict[str, Any], device: str, trace_dir: str | Path | None,
                 dynamic: bool | None = None, store: CaptureStore | None = None) -> None:
        self.state = CaptureState(settings, device, store)
        self.dynamic = dynamic  # torch.compile's dynamic=, applied while compiling only (_torch/shape_mode.py)
        self.trace_dir = trace_dir
        self.log_path: Path | None = None  # the TORCH_TRACE log written to trace_dir
        self.times = CompileTimeRecorder(RECORD_COMPILE_TIME)
        self.dynamo = DynamoRecorder(self.state)
        self.cudagraphs = CudaGraphRecorder(settings, device)
        self.served = ServedGraphs(self.state, self.dynamo, self.times, self.cudagraphs)
        self.aot = AotRecorder(self.state, self.dynamo, self.served, self.cudagraphs, self.times)
        self.scheduling = SchedulingRecorder(self.state)
        self.codegen = CodegenRecorder(self.state)
        self.autotune = AutotuneRecorder(self.state, self.times)

    @property
    def current(self) -> InnerRecord | None:
        """The inner compile being recorded now."""
        return self.state.current

    @current.setter
    def current(self, record: InnerRecord | None) -> None:
        self.state.current = record

    @contextlib.contextmanager
    def capturing(self) -> Iterator[None]:
        """Every capture hook, for the first call and for each later run that may recompile."""
        state, timed = self.state, self.times.timed
        timer_records = COMPILE_TIME_READS if self.times.record else frozenset()
        with hooks.capture_hooks(
            self,
            settings={**hooks.device_settings(state.device), **hooks.wrapper_settings(state.settings), **state.settings},
            wrap=timed, store=state.store,
        ), structured_trace.on_trace_records(
            timed(self.on_trace_record), self.trace_dir, self.log_path, reads=READS | timer_records,
            payloads=PAYLOADS | timer_records,
        ) as path, shape_mode.compiling_with(self.dynamic), self.cudagraphs.observing():
            self.log_path = path
            yield

    # --- Dynamo's backend and the structured trace's handler --------------------------------
    def backend(self, gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Any:
        return self.aot.backend(gm, example_inputs)

    def on_trace_record(self, record: Record) -> None:
        """torch's timer events to the compile's time, Dynamo's own records to the Dynamo stage."""
        if self.times.keeps(record):
            self.times.add(record)
        elif self.dynamo.records.reads(record):
            self.dynamo.records.add(record)

    # --- the capture hooks' events, each to its stage's recorder ----------------------------
    def on_converted_code(self, code: types.CodeType, fresh: bool) -> None:
        self.dynamo.on_converted_code(code, fresh)

    def on_pad_mm(self, decision: dict[str, Any]) -> None:
        self.aot.on_pad_mm(decision)

    def on_rewrite(self, made: list[Source], erased: list[Source]) -> None:
        self.aot.on_rewrite(made, erased)

    def on_operation_lowered(self, module: Any, operation: str, node: Any) -> None:
        self.scheduling.on_operation_lowered(module, operation, node)

    def on_pre_fusion(self, nodes: list[Any]) -> None:
        self.scheduling.on_pre_fusion(nodes)

    def on_post_fusion(self, nodes: list[Any]) -> None:
        self.scheduling.on_post_fusion(nodes)

    def on_fusion_refused(self, name1: str, name2: str, reason: str) -> None:
        self.scheduling.on_fusion_refused(name1, name2, reason)

    def on_cudagraph_partitions(self, partitions: list[PartitionRecord]) -> None:
        self.scheduling.on_cudagraph_partitions(partitions)

    def on_output_code(self, code: str) -> None:
        self.codegen.on_output_code(code)

    def on_wrapper_planned(self, wrapper: Any) -> None:
        self.codegen.on_wrapper_planned(wrapper)

    def on_node_lines(self, node_name: str, lines: list[str]) -> None:
        self.codegen.on_node_lines(node_name, lines)

    def on_kernel_nodes(self, key: str, node_names: list[str]) -> None:
        self.codegen.on_kernel_nodes(key, node_names)

    def on_combo_kernel(self, groups: list[list[str]] | None) -> None:
        self.codegen.on_combo_kernel(groups)

    def on_unhandled_extern_call(self, node_name: str, call_names: list[str]) -> None:
        self.codegen.on_unhandled_extern_call(node_name, call_names)

    def on_autotune(self, kernel: str, choice: str, time_ms: float, chosen: bool, source: str) -> None:
        self.autotune.on_autotune(kernel, choice, time_ms, chosen, source)

    def on_torch_warning(self, kind: str, where: str, message: str) -> None:
        self.state.note(Note(kind, where, message))

    def on_hook_failed(self, adapter: str, error_type: str, message: str) -> None:
        self.state.note(Note("hook failed", adapter, f"{error_type}: {message}" if message else error_type))

    # --- assembling -------------------------------------------------------------------------
    def graphs(self, start: int = 0) -> list[GraphCapture]:
        """The graphs of the inner compiles from ``start`` on, each with what the stages before it kept."""
        graphs: list[GraphCapture] = []
        forwards: dict[int, GraphCapture] = {}  # Dynamo graph -> its forward, whose values a backward reads
        for index, rec in enumerate(self.state.inner[start:], start=start):
            forward = forwards.get(rec.dynamo_index) if rec.kind == "backward" else None
            rec.pad_decisions = self.aot.pad_decisions.get(rec.dynamo_index, [])
            rec.rewrites = self.aot.rewrites
            graph = self.served.graph(index, rec, forward)
            graph.compile_id = self.dynamo.compile_ids[rec.dynamo_index]
            if rec.cudagraphs is not None:
                self.cudagraphs.build(graph, rec, self.dynamo.inputs[rec.dynamo_index] if rec.kind != "backward" else [])
            graphs.append(graph)
            if rec.kind == "forward":
                forwards[rec.dynamo_index] = graph
        return graphs

    def rerun(self, compilation: Compilation, inputs: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Run the compiled function again with the hooks on: graphs Dynamo recompiles for these inputs
        join ``compilation`` with the recompile's reason. A failed recompile leaves it as it was."""
        state, records = self.state, self.dynamo.records
        start, frames, notes = len(state.inner), copy.deepcopy(records.frames), len(state.notes)
        state.active, state.stage = True, "tracing"
        self.cudagraphs.passed = flat_tensors(inputs)
        self.times.begin_call()
        try:
            with self.capturing():
                outputs = compilation.live.compiled(*inputs, **kwargs)
            collecting_from = time.time_ns()
        except Exception as error:
            del state.inner[start:]
            del state.notes[notes:]
            records.frames = frames
            raise CompileError(_failed_stage(state.stage, error), compile_errors.describe(error), compilation) from error
        finally:
            state.active = False
        new = self.graphs(start)
        self.dynamo.hold_codes(compilation)
        if new or records.frames.keys() != frames.keys():
            compilation.graphs.extend(new)
            compilation.__post_init__()
            compilation.dynamo = self.dynamo.stage(compilation.graphs)
            for file, lines in user_sources(new).items():
                compilation.sources.setdefault(file, {}).update(lines)
            add_sources(compilation.sources, compilation.dynamo, records.line_texts)
        compilation.compile_calls.append(self.times.end_call("recompile", collecting_from))
        return outputs


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


def capture(target: Any, *inputs: Any, **options: Any) -> Compilation:
    """``explorer.compile`` as code that has imported this module calls it (what_if, sweeps, bisect, watch): the
    call's start taken here. The public entry, with every option spelled out and explained, is
    compiler/pipeline/capture_entry.py, which takes the start before this module is imported."""
    return captured(time.time_ns(), target, inputs, **options)


def captured(began_ns: int, target: Any, inputs: tuple[Any, ...], *, config: Mapping[str, Any] | None = None,
             backward: bool = False, dynamic: bool | None = False, kwargs: Mapping[str, Any] | None = None,
             trace_dir: str | Path | None = None, progress_display: progress.Display | bool | None = None,
             cache: bool = True, mode: str | None = None) -> Compilation:
    """The capture of ``target(*inputs, **kwargs)`` (compiler/pipeline/capture_entry.py says what each option
    does); ``began_ns``: when the caller's call began, which ``c.compile_time`` counts from."""
    settings = {**toggles.mode_settings(mode), **toggles.resolve(config)}
    toggles.check_capturable(settings)
    entry, name = private_entry(target)
    device = _device_of(target, inputs)
    for note in toggles.without_effect(settings, device):
        warnings.warn(note, toggles.ToggleWarning, stacklevel=3)  # past capture_entry.capture, to the caller's line
    request = CaptureRequest(target=target, entry=entry, name=name, inputs=inputs, kwargs=dict(kwargs or {}),
                             config=config, settings=settings, device=device, backward=backward, dynamic=dynamic,
                             trace_dir=trace_dir, cache=cache, began_ns=began_ns, mode=mode)
    with progress.task(f"compile {name}", display=progress_display):
        return _capture(request)


def _capture(request: CaptureRequest) -> Compilation:
    # a TORCH_TRACE log asked for must hold every stage, which a graph served from the cache does not log
    warm = request.cache and request.trace_dir is None and fx_graph_cache.available()
    store = CaptureStore() if warm else None
    recorder = _Recorder(request.settings, request.device, request.trace_dir, request.dynamic, store)
    recorder.times.begin_call(since=request.began_ns)
    entry = request.entry
    recorder.dynamo.entry_code = getattr(entry, "__code__", None) or entry.__func__.__code__
    recorder.cudagraphs.passed = flat_tensors(request.inputs)
    progress.step(recorder.state.stage)
    compiled = torch.compile(entry, backend=recorder.backend)  # dynamic: patched while compiling (recorder)
    with dynamo_codes.forgotten_unless_held(recorder.dynamo.codes, recorder.dynamo.held):
        return _run_and_collect(request, recorder, compiled)


def _run_and_collect(request: CaptureRequest, recorder: _Recorder, compiled: Any) -> Compilation:
    """Run the compiled entry with the hooks on (compiling it), then read what was captured."""
    overrides: dict[str, Any] = {}
    grad_enabled = torch.is_grad_enabled()
    started = time.perf_counter()
    mark = timing.mark()
    state, times = recorder.state, recorder.times
    times.hook_intervals.append(("entering the capture", times.prepared, time.time_ns()))
    with recorder.capturing():
        internal = {**hooks.CAPTURE_SETTINGS, **hooks.device_settings(request.device),
                    **hooks.wrapper_settings(request.settings),
                    **(fx_graph_cache.settings(request.settings) if state.store is not None else {})}
        overrides = {key: value for key, value in inductor_config.overrides(ignore_prefixes=("trace.", "_")).items()
                     if key not in internal or key in request.settings}
        try:
            outputs = compiled(*request.inputs, **request.kwargs)
            if request.backward:
                state.enter("backward")
                roots = _grad_roots(outputs)
                if not roots:
                    raise ValueError("backward=True, but no output requires grad: give inputs or parameters requires_grad=True")
                torch.autograd.backward(roots, [torch.ones_like(r) for r in roots])
            if recorder.cudagraphs.asked:  # a later replay writes the next outputs over these: the compilation keeps its own
                outputs = _copied(outputs)
            times.collecting_from = time.time_ns()
        except Exception as error:
            times.collecting_from = time.time_ns()
            state.active = False
            stage = _failed_stage(state.stage, error)
            live = LiveHandles(compiled, request.target, request.inputs, request.kwargs, grad_enabled)
            partial = _compilation(request, recorder, live, overrides, time.perf_counter() - started, mark)
            raise CompileError(stage, compile_errors.describe(error), partial) from error
    state.active = False
    elapsed = time.perf_counter() - started
    progress.step("collecting", detail="reading the stages into a Compilation")
    live = LiveHandles(compiled, request.target, request.inputs, request.kwargs, grad_enabled, outputs=outputs,
                       rerun=recorder.rerun)
    return _compilation(request, recorder, live, overrides, elapsed, mark)


def _copied(outputs: Any) -> Any:
    """``outputs`` with every tensor cloned (lists, tuples and dicts rebuilt around them)."""
    if isinstance(outputs, torch.Tensor):
        return outputs.detach().clone().requires_grad_(outputs.requires_grad) if outputs.is_leaf else outputs.clone()
    if isinstance(outputs, (list, tuple)) and not hasattr(outputs, "_fields"):
        return type(outputs)(_copied(o) for o in outputs)
    if isinstance(outputs, dict):
        return {key: _copied(value) for key, value in outputs.items()}
    return outputs


def _failed_stage(stage: str, error: BaseException) -> str:
    if stage == "tracing" and not errors.is_dynamo_error(error):
        return "run"
    return stage


def _compilation(request: CaptureRequest, recorder: _Recorder, live: LiveHandles, overrides: dict[str, Any],
                 elapsed: float, mark: dict[str, int]) -> Compilation:
    graphs = recorder.graphs()
    raw = timing.since(mark)
    timings = {"total": round(elapsed, 6), **timing.stages(raw)}
    # AOT autograd's own time: its timer also spans the inner (Inductor) compiles it calls
    timings["aot"] = round(max(0.0, raw.get("create_aot_dispatcher_function", 0.0) - raw.get("compile_fx_inner", 0.0)), 6)
    dynamo = recorder.dynamo.stage(graphs)
    sources = user_sources(graphs)
    add_sources(sources, dynamo, recorder.dynamo.records.line_texts)
    compilation = compilation_from_capture(
        request, live, graphs=graphs, timings=timings, sources=sources, dynamo=dynamo, log_path=recorder.log_path,
        overrides=overrides,
        library_files={file: library for file in sources if (library := frames.library_of(file))},
        notes=recorder.state.notes,
    )
    recorder.dynamo.hold_codes(compilation)
    compilation.compile_calls.append(recorder.times.end_call("capture", recorder.times.collecting_from))
    recorder.times.calls = compilation.compile_calls
    no_gpu = cudagraph_capture.no_gpu_note(graphs, request.name)
    if no_gpu:
        recorder.state.notes.append(Note("warning", "triton.cudagraphs", no_gpu))
    return compilation
