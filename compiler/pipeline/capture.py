"""capture(): run the real torch.compile + Inductor on a function and keep every stage it produced.

The public ``capture`` (``explorer.compile``) is compiler/pipeline/capture_entry.py's: it notes when the call
began, then calls ``captured`` here, once this module's imports (torch's compiler) ran.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import time
import types
import warnings
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping

import torch

from .._torch import backend as _backend
from .._torch import (compile_events, compile_ids, cudagraph_tree, dynamo_codes, errors, fx_graph_cache, hooks,
                      inductor_config, memory_estimate, post_grad_replay, scheduler_ir, shape_mode, structured_trace,
                      timing, wrapper_fx, wrapper_ir)
from .._torch.cudagraph_partitions import PartitionRecord
from .._torch.output_code import fresh_provenance_tables, provenance_tables
from .._torch.pattern_rewrites import Source
from ..model import phases, progress
from ..model.compilation import Compilation, LiveHandles, Note
from ..model.compile_time import CompileCall
from ..model.compile_time_build import KERNEL_BUILDS, kernel_builds_event
from ..model.cudagraph_events import EventRecorder
from ..model.cudagraphs import GraphCudaGraphs
from ..model.dynamo import DynamoStage
from ..model.errors import CompileError
from ..model.stages import AutotuneRecord, GraphCapture
from ..model.trace_log import Record
from . import compile_errors, cpp_wrapper_code, cudagraph_capture, frames, toggles
from .assemble import InnerRecord
from .assemble_live import assemble
from .private_entry import private_entry
from .capture_store import CaptureStore, graph_digest, lookup_of, rebuilt_post_grad, served_graph
from .capture_request import CaptureRequest, compilation_from_capture
from .dynamo_records import PAYLOADS, READS, DynamoRecords, add_sources
from .fx_stage import StageNames
from .specs import flat_tensors, user_sources

_PACKAGE_DIR = str(Path(__file__).resolve().parent)
# torch's timers (dynamo_timed) and its per-kernel build times (an artifact), kept for c.compile_time
COMPILE_TIME_READS = frozenset({"chromium_event", KERNEL_BUILDS})
# Whether captures keep what c.compile_time is built from (torch's timer events, the hooks' own time).
# On by default; benchmarks/compile_time.py turns it off to measure what keeping them costs.
RECORD_COMPILE_TIME = True


class _Recorder:
    """Receives every hook call of one capture and keeps the raw records in order: the capture hooks'
    listener (``hooks.CaptureListener``), Dynamo's backend and the structured trace's handler."""

    def __init__(self, settings: dict[str, Any], device: str, trace_dir: str | Path | None,
                 dynamic: bool | None = None, store: CaptureStore | None = None) -> None:
        self.settings = settings
        self.store = store  # a warm capture's: graphs captured before are served from it
        self.device = device
        self.dynamic = dynamic  # torch.compile's dynamic=, applied while compiling only (_torch/shape_mode.py)
        self.trace_dir = trace_dir
        self.log_path: Path | None = None  # the TORCH_TRACE log written to trace_dir
        self.active = True
        self.stage = "tracing"  # the compile stage running now, named in errors
        self.autotuned = 0  # choices and configs timed so far, shown as progress
        self.dynamo_modules: list[torch.fx.GraphModule] = []
        self.dynamo_inputs: list[list[Any]] = []  # each Dynamo graph's example inputs, for a warm capture's retrace
        self.dynamo_digests: list[str] = []  # each Dynamo graph's capture_store.graph_digest (warm captures)
        self.dynamo_graph_paths: list[dict[int, str]] = []
        self.combo: list[list[str]] | None = None
        self.pad_decisions: dict[int, list[dict[str, Any]]] = {}  # Dynamo graph -> shape-padding decisions
        self.rewrites: dict[Source, list[Source]] = {}  # node a pattern rewrite made -> the erased nodes' ancestry
        self.compile_ids: list[str | None] = []  # Dynamo's compile id of each Dynamo graph
        self.dynamo = DynamoRecords(structured_trace.interned_filenames())
        self.inner: list[InnerRecord] = []
        self.current: InnerRecord | None = None
        self.codes: dict[types.CodeType, bool] = {}  # code Dynamo converted -> it had no cache entry before
        self.held: set[types.CodeType] = set()  # codes a Compilation holds (dynamo_codes.hold)
        self.entry_code: types.CodeType | None = None  # our private copy of the entry function's code
        # compile time (compiler/model/compile_time.py): torch's chromium events and the explorer's own
        # intervals of the call running now, raw; the report is built when first asked for
        self.call_start = 0
        self.prepared = 0  # when the call was ready to compile (its startup done)
        self.in_call = False  # between begin_call and end_call: own work lands in that call's intervals
        self.calls: list[CompileCall] | None = None  # the compilation's compile_calls, once it exists
        self.collecting_from = 0  # when torch returned and the explorer began reading what it captured
        self.chromium_events: list[dict[str, Any]] = []
        self.hook_intervals: list[tuple[str, int, int]] = []
        self.autotune_owners: list[tuple[int, int, tuple[str, ...], int]] = []
        self.record_time = RECORD_COMPILE_TIME
        # what torch warned and what the hooks swallowed; the compilation holds this list, so a recompile's
        # notes join it
        self.notes: list[Note] = []
        # triton.cudagraphs (mode="reduce-overhead"): each graph's CUDA graph tree events while the capture runs
        self.cudagraphs = cudagraph_capture.asked(settings)
        self.tree_events = EventRecorder("capture", cudagraph_tree.place)
        self.passed: list[Any] = []  # the tensors the call was given, flattened (g.cudagraphs.user_inputs)

    def timed(self, hook: Callable[..., Any]) -> Callable[..., Any]:
        """``hook`` with its own time noted: what the explorer adds inside torch's phases is its own row."""
        if not self.record_time:
            return hook
        name, intervals = hook.__name__, self.hook_intervals

        def timed_hook(*args: Any, **kwargs: Any) -> Any:
            start = time.time_ns()
            try:
                return hook(*args, **kwargs)
            finally:
                intervals.append((name, start, time.time_ns()))

        return timed_hook

    def begin_call(self, since: int | None = None) -> None:
        """A call that may compile starts: its events are kept apart from the previous call's. ``since``: when
        the caller's call began (``time.time_ns``), before the capture's imports and setup, which are the
        call's ``startup`` (compiler/model/phases.py)."""
        self.prepared = time.time_ns()
        self.call_start = min(since, self.prepared) if since is not None else self.prepared
        self.chromium_events, self.hook_intervals, self.autotune_owners = [], [], []
        if self.call_start < self.prepared:
            self.hook_intervals.append((phases.STARTING, self.call_start, self.prepared))
        self.in_call = True

    def end_call(self, kind: str, collecting_from: int) -> CompileCall:
        """The call's record, its collecting (after torch returned) counted as the explorer's own."""
        end = time.time_ns()
        self.hook_intervals.append(("collecting stages", collecting_from, end))
        self.in_call = False
        return CompileCall(kind, self.call_start, end, self.chromium_events, self.hook_intervals, self.autotune_owners)

    @contextlib.contextmanager
    def spent(self, name: str) -> Iterator[None]:
        """The block's time, one of the explorer's own intervals named ``name`` (a phase's ``hooks``)."""
        start = time.time_ns()
        try:
            yield
        finally:
            if self.record_time:
                self.hook_intervals.append((name, start, time.time_ns()))

    def retraced(self, rebuild: Callable[[], Any]) -> Callable[[], Any]:
        """``rebuild`` (a served graph's post-grad GraphModule, made when first read), its time kept as the
        warm capture's own: an interval of the call running then, or else a ``replay`` call of its own in the
        compilation's ``compile_calls``, so ``c.compile_time`` shows it (phase ``served``)."""
        def run() -> Any:
            start = time.time_ns()
            try:
                return rebuild()
            finally:
                end = time.time_ns()
                if self.record_time and self.in_call:
                    self.hook_intervals.append((phases.RETRACING, start, end))
                elif self.record_time and self.calls is not None:
                    self.calls.append(CompileCall("replay", start, end, hooks=[(phases.RETRACING, start, end)]))

        return run

    def enter(self, stage: str) -> None:
        """Move on to ``stage`` and report it as progress (going back to an outer stage is not reported:
        the bar would run backwards)."""
        self.stage = stage
        progress.step(stage, detail=f"graph {len(self.inner)}" if self.inner else "")

    @contextlib.contextmanager
    def capturing(self) -> Iterator[None]:
        """Every capture hook, for the first call and for each later run that may recompile."""
        timed = self.timed
        timer_records = COMPILE_TIME_READS if self.record_time else frozenset()
        with hooks.capture_hooks(
            self,
            settings={**hooks.device_settings(self.device), **hooks.wrapper_settings(self.settings), **self.settings},
            wrap=timed, store=self.store,
        ), structured_trace.on_trace_records(
            timed(self.on_trace_record), self.trace_dir, self.log_path, reads=READS | timer_records,
            payloads=PAYLOADS | timer_records,
        ) as path, shape_mode.compiling_with(self.dynamic), (
            cudagraph_tree.observed(self.tree_events) if self.cudagraphs else contextlib.nullcontext()
        ):
            self.log_path = path
            yield

    # --- backend ---------------------------------------------------------------------------
    def backend(self, gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Any:
        self.enter("aot")
        inner, looked = len(self.inner), len(self.store.lookups) if self.store is not None else 0
        aot_cache = self.store is not None and self.active
        with inductor_config.patched(self.settings), (  # also for recompiles after the capture
                fx_graph_cache.aot_cache_on() if aot_cache else contextlib.nullcontext()):
            compiled = _backend.make_backend(self.timed(self.on_dynamo_graph), self.around_inner)(gm, example_inputs)
        if aot_cache and len(self.inner) == inner:  # AOTAutograd's cache served the graph: no inner compile ran
            with self.spent(phases.READING_STORE):
                self._served_by_aot(looked)
        self.stage = "tracing"
        progress.step("run", detail=f"graph {len(self.inner)} compiled; running it (or tracing on after a break)")
        return compiled

    def on_dynamo_graph(self, gm: torch.fx.GraphModule, example_inputs: list[Any]) -> int:
        if not self.active:
            return -1
        module_copy = _backend.copy_graph_module(gm)
        self.dynamo_modules.append(module_copy)
        self.dynamo_inputs.append(list(example_inputs))
        if self.store is not None:
            self.dynamo_digests.append(graph_digest(module_copy))
            self.store.graph = self.dynamo_digests[-1]
        # from_node provenance names the graphs Inductor saw; the copy's own graph id is added for safety
        self.dynamo_graph_paths.append({**StageNames(gm).graph_paths, id(module_copy.graph): ""})
        self.compile_ids.append(compile_ids.current())
        return len(self.dynamo_modules) - 1

    def around_inner(self, dynamo_index: int, compile_inner: Callable[..., Any], gm: Any, inputs: Any, **kwargs: Any) -> Any:
        if not self.active or dynamo_index < 0:
            return compile_inner(gm, inputs, **kwargs)
        record = InnerRecord(dynamo_index=dynamo_index, kind=_backend.graph_kind(kwargs), post_grad_module=gm,
                             dynamo_graph_paths=self.dynamo_graph_paths[dynamo_index])
        if self.cudagraphs:
            record.cudagraphs = cudagraph_capture.RawCudaGraphs(GraphCudaGraphs(device=self.device))
        self.inner.append(record)
        outer, self.current = self.current, record
        previous_stage = self.stage
        self.enter("lowering")
        mark = timing.mark()
        fresh = fresh_provenance_tables() if record.kind == "backward" else contextlib.nullcontext()
        looked_up = 0
        if self.store is not None:
            looked_up = len(self.store.lookups)
            self.store.graph = self.dynamo_digests[dynamo_index]  # a backward compiles after later graphs
        notes = len(self.notes)
        try:
            with fresh:
                record.compiled_fn = compile_inner(gm, inputs, **kwargs)
            if record.cudagraphs is not None:
                cudagraph_capture.after_compile(record.cudagraphs, record.compiled_fn, gm)
                self.tree_events.add(record.compiled_fn, record.cudagraphs.state)
            record.cache_lookup = lookup_of(self.store, looked_up)
            record.notes = self.notes[notes:]
            if record.cache_lookup is not None and record.cache_lookup[1] == "hit":
                with self.spent(phases.READING_STORE):
                    self._served(record, inputs, kwargs)
        finally:
            self.current = outer
            record.timings = timing.stages(timing.since(mark))
        self.stage = previous_stage
        return record.compiled_fn

    def _served(self, record: InnerRecord, inputs: Any, kwargs: dict[str, Any]) -> None:
        """Inductor served this graph from its cache: its stages come from the store, and its post-grad
        GraphModule, when first read, from Inductor's post-grad passes run again (a hit skipped them)."""
        assert record.cache_lookup is not None
        record.served = self._stored(record.cache_lookup[0])
        is_inference = bool(kwargs.get("is_inference", record.kind == "inference"))
        record.post_grad_pending = self.retraced(functools.partial(
            rebuilt_post_grad, record.post_grad_module, list(inputs), is_inference, dict(self.settings)))
        record.post_grad_module = None

    # --- Inductor hooks --------------------------------------------------------------------
    def on_pre_fusion(self, nodes: list[Any]) -> None:
        names, path = self._lowering()
        if names is None or path is None:
            return
        if not path:
            self.enter("scheduling")
        records = scheduler_ir.loop_ir_records(nodes, names.name_of)
        eliminated = scheduler_ir.eliminated_records({r["name"] for r in records}, names.name_of)
        for record in records + eliminated:
            record["subgraph"] = path or None
        self.current.loop_ir += records
        self.current.eliminated += eliminated

    def on_post_fusion(self, nodes: list[Any]) -> None:
        names, path = self._lowering()
        if names is None or path is None:
            return
        if not path:
            self.enter("codegen")
        self.current.fused += [scheduler_ir.fused_record(n, names.name_of) for n in nodes]

    def on_cudagraph_partitions(self, partitions: list[PartitionRecord]) -> None:
        """The scheduler's partitions of the graph itself (a subgraph's stay inside its partition)."""
        names, path = self._lowering()
        if names is not None and path == "" and self.current is not None and self.current.cudagraphs is not None:
            self.current.cudagraphs.partitions = cudagraph_capture.named(partitions, names.name_of)

    def on_operation_lowered(self, module: Any, operation: str, node: Any) -> None:
        """Which FX node's lowering created ``operation`` (of this graph or one of its subgraphs)."""
        names, _ = self._lowering()
        if names is not None and names.path_of(module) is not None:
            self.current.lowered_by[operation] = names.name_of(node)

    def _lowering(self) -> tuple[StageNames | None, str | None]:
        """Names of the graph being compiled, and the path of the subgraph Inductor is scheduling now
        ("" for the graph itself); None for lowerings of something else (autotuning benchmarks)."""
        if self.current is None or self.current.post_grad_module is None:
            return None, None
        if self.current.names is None:
            self.current.names = StageNames(self.current.post_grad_module)
        return self.current.names, self.current.names.path_of(scheduler_ir.lowered_graph_module())

    def on_output_code(self, code: str) -> None:
        if self.current is None:
            return
        self.enter("kernel compile")
        cpp = cpp_wrapper_code.cpp_source(code)  # cpp_wrapper: the C++ inside the Python module is the wrapper
        self.current.wrapper = code if cpp is None else cpp
        if cpp is not None:
            self.current.wrapper_language = "cpp"
            self.current.python_pass = cpp_wrapper_code.python_kernels_source(code)
        self.current.provenance, self.current.kernel_traces = provenance_tables()

    def on_wrapper_planned(self, wrapper: Any) -> None:
        """The wrapper's planned lines: its memory plan, Inductor's estimate, and what its FX form is made
        from when first asked for."""
        if self.current is None:
            return
        self.current.memory = {**wrapper_ir.events(wrapper), "estimate": memory_estimate.estimate()}
        self.current.wrapper_fx = wrapper_fx.plan(wrapper)

    def on_node_lines(self, node_name: str, lines: list[str]) -> None:
        if self.current is not None:
            self.current.node_lines.setdefault(node_name, set()).update(lines)

    def on_kernel_nodes(self, key: str, node_names: list[str]) -> None:
        if self.current is not None:
            self.current.kernel_nodes[key] = node_names
            if self.combo is not None:
                self.current.combos[key] = self.combo

    def on_combo_kernel(self, groups: list[list[str]] | None) -> None:
        self.combo = groups  # the kernels codegen reports until None are this combo kernel

    def on_pad_mm(self, decision: dict[str, Any]) -> None:
        """Shape-padding decisions come from the joint-graph passes, before the inner compiles."""
        if self.active and self.dynamo_modules:
            self.pad_decisions.setdefault(len(self.dynamo_modules) - 1, []).append(decision)

    def on_rewrite(self, made: list[Source], erased: list[Source]) -> None:
        """Joint-graph rewrites come before the inner compiles: kept for the whole capture."""
        if self.active:
            for node in made:
                self.rewrites.setdefault(node, []).extend(erased)

    def on_unhandled_extern_call(self, node_name: str, call_names: list[str]) -> None:
        if self.current is not None:
            self.current.unhandled_externs.append((node_name, call_names))

    def on_fusion_refused(self, name1: str, name2: str, reason: str) -> None:
        if self.current is not None:
            self.current.refused.append((name1, name2, reason))

    def on_autotune(self, kernel: str, choice: str, time_ms: float, chosen: bool, source: str) -> None:
        target = self.current or (self.inner[-1] if self.inner else None)
        if target is not None and self.active:
            target.autotune.append(AutotuneRecord(kernel, choice, time_ms, chosen, source))
            if source == "select_algorithm" and self.record_time:
                self.note_autotune_owner(target)
            self.autotuned += 1
            progress.step("autotuning", done=self.autotuned, detail=f"{self.autotuned} choices timed, last for {kernel}")

    def note_autotune_owner(self, target: InnerRecord) -> None:
        """Which nodes the autotuning reporting now was for (one note per autotuning, its choices counted)."""
        graph = next((i for i, record in enumerate(self.inner) if record is target), None)
        if graph is None:  # not a graph of this capture's calls: nothing to charge the autotuning to
            return
        names = target.names or (StageNames(target.post_grad_module) if target.post_grad_module is not None else None)
        nodes = tuple(sorted(names.name_of(n) for n in compile_events.autotuned_nodes())) if names else ()
        last = self.autotune_owners[-1] if self.autotune_owners else None
        if last is not None and last[1:3] == (graph, nodes):
            self.autotune_owners[-1] = (*last[:3], last[3] + 1)
        else:
            self.autotune_owners.append((time.time_ns(), graph, nodes, 1))

    def on_trace_record(self, record: Record) -> None:
        if record.name in COMPILE_TIME_READS and self.record_time:
            event = record.json_payload()
            if record.name == KERNEL_BUILDS:  # logged as the graph's builds end: stamped now
                event = kernel_builds_event(event, time.time_ns() / 1000, record.compile_id)
            if isinstance(event, dict):
                self.chromium_events.append(event)
        elif self.dynamo.reads(record):
            self.dynamo.add(record)

    def on_torch_warning(self, kind: str, where: str, message: str) -> None:
        self._note(Note(kind, where, message))

    def on_hook_failed(self, adapter: str, error_type: str, message: str) -> None:
        self._note(Note("hook failed", adapter, f"{error_type}: {message}" if message else error_type))

    def _note(self, note: Note) -> None:
        """Each note once: a failing hook fails for every node it sees, a warning may repeat each recompile."""
        if note not in self.notes:
            self.notes.append(note)

    def on_converted_code(self, code: types.CodeType, fresh: bool) -> None:
        """Every frame Dynamo converts runs in this compilation's runs: its cache is held with it."""
        self.codes.setdefault(code, fresh)

    def hold_codes(self, compilation: Compilation) -> None:
        """The compiled frames stay cached while ``compilation`` lives, through torch._dynamo.reset()."""
        new = {code: fresh for code, fresh in self.codes.items() if code not in self.held}
        dynamo_codes.hold(compilation, new, dynamo_codes.private_codes(self.entry_code))
        self.held.update(new)

    # --- results ---------------------------------------------------------------------------
    def graphs(self, start: int = 0) -> list[GraphCapture]:
        graphs: list[GraphCapture] = []
        forwards: dict[int, GraphCapture] = {}  # Dynamo graph -> its forward, whose values a backward reads
        for index, rec in enumerate(self.inner[start:], start=start):
            forward = forwards.get(rec.dynamo_index) if rec.kind == "backward" else None
            rec.pad_decisions = self.pad_decisions.get(rec.dynamo_index, [])
            rec.rewrites = self.rewrites
            graph = self._graph(index, rec, forward)
            graph.compile_id = self.compile_ids[rec.dynamo_index]
            if rec.cudagraphs is not None:
                self._cudagraphs(graph, rec)
            graphs.append(graph)
            if rec.kind == "forward":
                forwards[rec.dynamo_index] = graph
        return graphs

    def _cudagraphs(self, graph: GraphCapture, rec: InnerRecord) -> None:
        """``graph.cudagraphs`` from what the hooks and the tree's events kept; later events of this capture's
        runs (a recompile's) reach it too."""
        inputs = self.dynamo_inputs[rec.dynamo_index] if rec.kind != "backward" else []
        placeholders = [n.name for n in graph.post_grad.nodes if n.op == "placeholder"]
        graph.cudagraphs = cudagraph_capture.build(graph, rec.cudagraphs,
                                                   cudagraph_capture.user_inputs(placeholders, inputs, self.passed))
        self.tree_events.attach(graph.cudagraphs, graph)

    def _served_by_aot(self, looked: int) -> None:
        """Records of the graphs AOTAutograd's cache served through the store's lookups since ``looked`` (an
        inference graph, or a training graph's forward and backward): their stages from the store, their
        post-grad GraphModules traced again, together, when one is first read."""
        assert self.store is not None
        dynamo_index = len(self.dynamo_modules) - 1
        served = [(entry, compiled, self._stored(entry))
                  for entry, state, compiled in self.store.lookups[looked:] if state == "hit"]
        kinds = [str(stored.get("kind", "inference")) for _, _, stored in served]
        retrace = functools.cache(self.retraced(functools.partial(
            post_grad_replay.retraced, self.dynamo_modules[dynamo_index], self.dynamo_inputs[dynamo_index],
            dict(self.settings), inference="forward" not in kinds)))
        for position, ((entry, compiled, stored), kind) in enumerate(zip(served, kinds)):
            record = InnerRecord(dynamo_index=dynamo_index, kind=kind,
                                 dynamo_graph_paths=self.dynamo_graph_paths[dynamo_index], compiled_fn=compiled,
                                 cache_lookup=(entry, "hit"), served=stored)
            record.post_grad_pending = functools.partial(_nth_retraced, retrace, position)
            if self.cudagraphs:
                record.cudagraphs = cudagraph_capture.RawCudaGraphs(GraphCudaGraphs(device=self.device))
                self.tree_events.add(compiled, record.cudagraphs.state)
            self.inner.append(record)

    def _stored(self, entry: str) -> dict[str, Any]:
        """A served graph's stored JSON; the notes its cold compile made join this capture's, as made then."""
        assert self.store is not None
        served, notes = self.store.stored(entry)
        for note in notes:
            self._note(note)
        return served

    def _graph(self, index: int, rec: InnerRecord, forward: GraphCapture | None) -> GraphCapture:
        """The graph of one inner compile: served from the store on a hit; else assembled from what the
        hooks saw, and stored when a warm capture's lookup missed."""
        module = self.dynamo_modules[rec.dynamo_index]
        if rec.served is not None:
            with self.spent(phases.LOADING_SERVED):
                graph = served_graph(rec.served, module, rec.post_grad_pending, rec.compiled_fn)
            graph.index, graph.kind, graph.dynamo_graph = index, rec.kind, rec.dynamo_index
            graph.timings = dict(rec.timings)
            return graph
        graph = assemble(index, rec, module, forward)
        if self.store is not None and rec.cache_lookup is not None:
            self.store.store(rec.cache_lookup[0], graph, rec.notes)
            graph.cache = "stored"
        return graph

    def dynamo_stage(self, graphs: list[GraphCapture]) -> DynamoStage:
        by_compile: dict[str, list[str]] = {}
        for graph in graphs:
            by_compile.setdefault(graph.compile_id or "", []).append(graph.id)
        files = {file for g in graphs for stage in (g.fx, g.post_grad) for n in stage.nodes for file, _, _ in n.stack}
        stage = self.dynamo.stage(by_compile, known_files=files)
        for graph_break in stage.graph_breaks:
            graph_break.stack = _from_entry(graph_break.stack)
        return stage

    def rerun(self, compilation: Compilation, inputs: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Run the compiled function again with the hooks on: graphs Dynamo recompiles for these inputs
        join ``compilation`` with the recompile's reason. A failed recompile leaves it as it was."""
        start, frames, notes = len(self.inner), copy.deepcopy(self.dynamo.frames), len(self.notes)
        self.active, self.stage = True, "tracing"
        self.passed = flat_tensors(inputs)
        self.begin_call()
        try:
            with self.capturing():
                outputs = compilation.live.compiled(*inputs, **kwargs)
            collecting_from = time.time_ns()
        except Exception as error:
            del self.inner[start:]
            del self.notes[notes:]
            self.dynamo.frames = frames
            raise CompileError(_failed_stage(self.stage, error), compile_errors.describe(error), compilation) from error
        finally:
            self.active = False
        new = self.graphs(start)
        self.hold_codes(compilation)
        if new or self.dynamo.frames.keys() != frames.keys():
            compilation.graphs.extend(new)
            compilation.__post_init__()
            compilation.dynamo = self.dynamo_stage(compilation.graphs)
            for file, lines in user_sources(new).items():
                compilation.sources.setdefault(file, {}).update(lines)
            add_sources(compilation.sources, compilation.dynamo, self.dynamo.line_texts)
        compilation.compile_calls.append(self.end_call("recompile", collecting_from))
        return outputs


def _nth_retraced(retrace: Callable[[], list[torch.fx.GraphModule] | None], position: int) -> Any:
    """The ``position``-th post-grad GraphModule of a retrace shared by a training graph's forward and backward."""
    modules = retrace()
    return modules[position] if modules is not None and position < len(modules) else None


def _from_entry(stack: list[tuple[str, int, str]]) -> list[tuple[str, int, str]]:
    """The user frames from the compiled function inward (the capture's own frames and its callers dropped)."""
    cut = max((i for i, (file, _, _) in enumerate(stack) if file.startswith(_PACKAGE_DIR)), default=-1)
    return stack[cut + 1:]


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
    recorder.begin_call(since=request.began_ns)
    entry = request.entry
    recorder.entry_code = getattr(entry, "__code__", None) or entry.__func__.__code__
    recorder.passed = flat_tensors(request.inputs)
    progress.step(recorder.stage)
    compiled = torch.compile(entry, backend=recorder.backend)  # dynamic: patched while compiling (recorder)
    with dynamo_codes.forgotten_unless_held(recorder.codes, recorder.held):
        return _run_and_collect(request, recorder, compiled)


def _run_and_collect(request: CaptureRequest, recorder: _Recorder, compiled: Any) -> Compilation:
    """Run the compiled entry with the hooks on (compiling it), then read what was captured."""
    overrides: dict[str, Any] = {}
    grad_enabled = torch.is_grad_enabled()
    started = time.perf_counter()
    mark = timing.mark()
    recorder.hook_intervals.append(("entering the capture", recorder.prepared, time.time_ns()))
    with recorder.capturing():
        internal = {**hooks.CAPTURE_SETTINGS, **hooks.device_settings(request.device),
                    **hooks.wrapper_settings(request.settings),
                    **(fx_graph_cache.settings(request.settings) if recorder.store is not None else {})}
        overrides = {key: value for key, value in inductor_config.overrides(ignore_prefixes=("trace.", "_")).items()
                     if key not in internal or key in request.settings}
        try:
            outputs = compiled(*request.inputs, **request.kwargs)
            if request.backward:
                recorder.enter("backward")
                roots = _grad_roots(outputs)
                if not roots:
                    raise ValueError("backward=True, but no output requires grad: give inputs or parameters requires_grad=True")
                torch.autograd.backward(roots, [torch.ones_like(r) for r in roots])
            if recorder.cudagraphs:  # a later replay writes the next outputs over these: the compilation keeps its own
                outputs = _copied(outputs)
            recorder.collecting_from = time.time_ns()
        except Exception as error:
            recorder.collecting_from = time.time_ns()
            recorder.active = False
            stage = _failed_stage(recorder.stage, error)
            live = LiveHandles(compiled, request.target, request.inputs, request.kwargs, grad_enabled)
            partial = _compilation(request, recorder, live, overrides, time.perf_counter() - started, mark)
            raise CompileError(stage, compile_errors.describe(error), partial) from error
    recorder.active = False
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
    dynamo = recorder.dynamo_stage(graphs)
    sources = user_sources(graphs)
    add_sources(sources, dynamo, recorder.dynamo.line_texts)
    compilation = compilation_from_capture(
        request, live, graphs=graphs, timings=timings, sources=sources, dynamo=dynamo, log_path=recorder.log_path,
        overrides=overrides,
        library_files={file: library for file in sources if (library := frames.library_of(file))},
        notes=recorder.notes,
    )
    recorder.hold_codes(compilation)
    compilation.compile_calls.append(recorder.end_call("capture", recorder.collecting_from))
    recorder.calls = compilation.compile_calls
    no_gpu = cudagraph_capture.no_gpu_note(graphs, request.name)
    if no_gpu:
        recorder.notes.append(Note("warning", "triton.cudagraphs", no_gpu))
    return compilation
