"""CompileCall events -> a CompileTimeReport (compiler/model/compile_time.py): one builder for a live capture
and for a TORCH_TRACE log, which hold the same chromium events.

Torch's timers nest (``dynamo`` > ``entire_frame_compile`` > ``backend_compile`` > ... > ``compile_file``)
but some run on worker threads, so spans are nested by time, not by the order they were logged: each
span goes under the innermost span that was open when it started, clipped to that parent and to the end
of the sibling before it, so children never add up to more than their parent.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from .compile_time import (Charge, CompileCall, CompileTimeReport, KernelCompileTime, Phase,
                           RecompileCost, Suggestion)
from .provenance import computing_fx_nodes

# torch timer name -> category: exact names first, then prefixes and suffixes, else the parent's category
_EXACT = {
    "dynamo": "dynamo", "entire_frame_compile": "dynamo", "bytecode_tracing": "dynamo", "build_guards": "dynamo",
    "gc": "dynamo", "insert_deferred_runtime_asserts": "dynamo", "backend_compile": "dynamo",
    "_recursive_pre_grad_passes": "pre_grad",
    "create_aot_dispatcher_function": "aot", "aot_collect_metadata": "aot", "aot_trace_joint_graph": "aot",
    "_recursive_joint_graph_passes": "aot", "min_cut_rematerialization_partition": "aot",
    "compile_fx.<locals>.fw_compiler_base": "aot", "compile_fx.<locals>.bw_compiler": "aot",
    "entire_backward_compile": "aot",
    "inductor_compile": "inductor", "fx_codegen_and_compile": "inductor",
    "_recursive_post_grad_passes": "post_grad", "additional_fake_tensor_prop": "post_grad",
    "GraphLowering.run": "lowering",
    "GraphLowering.compile_to_fn": "codegen", "code_gen": "codegen", "GraphLowering.codegen": "codegen",
    "GraphLowering.codegen_subgraph": "codegen", "Scheduler.codegen": "codegen",
    "generate_kernel_code_from_nodes": "codegen",
    "PythonWrapperCodegen.generate": "wrapper", "CppWrapperCpu.generate": "wrapper", "CppWrapperGpu.generate": "wrapper",
    "compile_file": "kernel_compile", "PyCodeCache.load_by_key_path": "kernel_compile",
    "async_compile.wait": "kernel_compile", "CachingAutotuner.slow_precompile_config": "kernel_compile",
    "benchmark_codegened_module": "autotune", "collective_compute_do_bench": "autotune",
}
_PREFIXES = (("compile_attempt_", "dynamo"), ("bytecode_hooks_", "dynamo"), ("pass.pre_grad_passes.", "pre_grad"),
             ("pass.joint_graph_passes.", "aot"), ("pass.post_grad_passes.", "post_grad"), ("Scheduler.", "scheduling"),
             ("CachingAutotuner.", "autotune"), ("TritonBundler.", "cache"), ("async_compile.", "kernel_compile"))
_SUFFIXES = (("_template_autotuning", "autotune"), ("_template_precompiling", "autotune"))
_EXPLORER_DIR = str(Path(__file__).resolve().parents[1])  # compiler/: frames of the capture's own code
_KERNEL_NAME = "kernel_name"  # what torch's per-kernel timers (CachingAutotuner.*) carry in their metadata
_TEMPLATE_AUTOTUNE = ("_template_autotuning", "_template_precompiling")
KERNEL_BUILDS = "triton_kernel_info"  # torch's artifact at the end of a graph's kernel builds: {name: {compile_time_us}}
_CPP_NOTE = ("C++ kernels of a graph are built together as one module (compile_file): torch times the build "
             "per graph, so it is charged to the graph, not split over its kernels")
_SPREAD_NOTE = ("per-line, per-module and per-node rows: kernel_s is what torch timed for the kernels computing "
                "them; spread_s is their share (by FX node count) of phases torch times per graph or frame")


def kernel_builds_event(payload: Any, ts_us: float, compile_id: str | None) -> dict[str, Any] | None:
    """Torch's ``triton_kernel_info`` artifact (logged when a graph's Triton kernels are built: each kernel's
    build time in a compile worker) as an instant event at ``ts_us`` (µs on the events' clock), or None."""
    if not isinstance(payload, dict):
        return None
    builds = {str(name): float(info["compile_time_us"]) for name, info in payload.items()
              if isinstance(info, dict) and isinstance(info.get("compile_time_us"), (int, float))}
    return {"name": KERNEL_BUILDS, "ph": "i", "ts": ts_us, "args": {"compile_id": compile_id, "builds_us": builds}} \
        if builds else None


def category_of(name: str) -> str | None:
    if name in _EXACT:
        return _EXACT[name]
    for prefix, category in _PREFIXES:
        if name.startswith(prefix):
            return category
    for suffix, category in _SUFFIXES:
        if name.endswith(suffix):
            return category
    if "cache" in name.lower():
        return "cache"
    return None


@dataclass
class _Span:
    name: str
    start: int  # ns
    end: int
    args: dict[str, Any]
    children: list["_Span"] = field(default_factory=list)

    @property
    def compile_id(self) -> str | None:
        value = self.args.get("compile_id")
        return None if value in (None, "None") else str(value)


def _spans(events: Iterable[dict[str, Any]], start: int, end: int) -> tuple[list[_Span], list[dict[str, Any]]]:
    """B/E pairs (matched by name, innermost first) and X events as spans inside [start, end]; instants apart."""
    spans: list[_Span] = []
    instants: list[dict[str, Any]] = []
    open_spans: dict[str, list[tuple[int, dict[str, Any]]]] = {}
    for event in events:
        phase, name = event.get("ph"), str(event.get("name", ""))
        ts = int(float(event.get("ts", 0)) * 1000)
        args = event.get("args") if isinstance(event.get("args"), dict) else {}
        if phase == "B":
            open_spans.setdefault(name, []).append((ts, dict(args)))
        elif phase == "E" and open_spans.get(name):
            begun, begin_args = open_spans[name].pop()
            spans.append(_Span(name, begun, ts, {**begin_args, **args}))
        elif phase == "X":
            spans.append(_Span(name, ts, ts + int(float(event.get("dur", 0)) * 1000), dict(args)))
        elif phase == "i":
            instants.append(event)
    clipped = [_Span(s.name, max(s.start, start), min(s.end, end), s.args) for s in spans]
    kept = [s for s in clipped if s.end > s.start]
    _note_cache_savings(kept, instants)
    return kept, instants


def _note_cache_savings(spans: list[_Span], instants: list[dict[str, Any]]) -> None:
    """An FX graph cache hit carries ``time_saved_ns`` (the compile the cache skipped): it goes into the
    args of the span that looked the cache up (one with a ``cache_state``: ``inductor_compile``, or
    ``backend_compile`` when AOTAutograd's cache hit) as ``cache_time_saved_s``: the innermost such span
    holding the hit's time, else the one starting nearest it (torch stamps a hit with its compile's start)."""
    lookups = [s for s in spans if "cache_state" in s.args]
    for event in instants:
        saved = (event.get("args") or {}).get("time_saved_ns") if isinstance(event.get("args"), dict) else None
        if not lookups or not isinstance(saved, (int, float)) or isinstance(saved, bool):
            continue
        ts = int(float(event.get("ts", 0)) * 1000)
        holding = [s for s in lookups if s.start <= ts <= s.end]
        owner = (min(holding, key=lambda s: s.end - s.start) if holding
                 else min(lookups, key=lambda s: abs(s.start - ts)))
        owner.args["cache_time_saved_s"] = round(saved / 1e9, 6)


def _nest(spans: list[_Span]) -> list[_Span]:
    """Spans as a forest: each under the innermost open span at its start, clipped to fit."""
    roots: list[_Span] = []
    stack: list[_Span] = []
    for span in sorted(spans, key=lambda s: (s.start, -s.end)):
        while stack and stack[-1].end <= span.start:
            stack.pop()
        siblings = stack[-1].children if stack else roots
        if siblings:
            span.start = max(span.start, siblings[-1].end)
        if stack:
            span.end = min(span.end, stack[-1].end)
        if span.end <= span.start:
            continue
        siblings.append(span)
        stack.append(span)
    return roots


def _merged(intervals: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for start, end in sorted(intervals):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def _overlap(intervals: list[tuple[int, int]], start: int, end: int) -> int:
    return sum(max(0, min(e, end) - max(s, start)) for s, e in intervals if s < end and e > start)


class _Builder:
    def __init__(self, graphs: list[Any], origin_ns: int) -> None:
        self.graphs = graphs
        self.origin_ns = origin_ns
        self.count = 0
        self.by_compile: dict[tuple[str, bool], list[str]] = {}
        for graph in graphs:
            key = (graph.compile_id or "", graph.kind == "backward")
            self.by_compile.setdefault(key, []).append(graph.id)
        self.used: dict[tuple[str, bool], int] = {}

    def phase(self, name: str, seconds: float, start_ns: int, **kwargs: Any) -> Phase:
        phase = Phase(f"p{self.count}", name, round(seconds, 6), round((start_ns - self.origin_ns) / 1e9, 6), **kwargs)
        self.count += 1
        return phase

    def graph_of(self, span: _Span) -> str | None:
        """inductor_compile spans are one graph each, in compile order per (compile id, forward/backward)."""
        key = (span.compile_id or "", bool(span.args.get("is_backward")))
        ids = self.by_compile.get(key, [])
        index = self.used.get(key, 0)
        self.used[key] = index + 1
        return ids[index] if index < len(ids) else None

    def convert(self, span: _Span, explorer: list[tuple[int, int]], parent_category: str,
                graph: str | None) -> Phase:
        category = category_of(span.name) or parent_category
        if span.name == "inductor_compile":
            graph = self.graph_of(span) or graph
        seconds = (span.end - span.start - _overlap(explorer, span.start, span.end)) / 1e9
        args = {k: v for k, v in span.args.items() if isinstance(v, (str, int, float, bool)) and k != "compile_id"}
        phase = self.phase(span.name, seconds, span.start, category=category, compile_id=span.compile_id,
                           graph=graph, args=args)
        phase.children = [self.convert(child, explorer, category, graph) for child in span.children]
        self.add_other(phase, span.end, category)
        return phase

    def add_other(self, phase: Phase, end_ns: int, category: str) -> None:
        if not phase.children:
            return
        rest = phase.seconds - sum(c.seconds for c in phase.children)
        if rest > 1e-6:
            last = phase.children[-1]
            start = self.origin_ns + int((last.start_s + last.seconds) * 1e9)
            phase.children.append(self.phase("other", rest, min(start, end_ns), category=category,
                                             compile_id=phase.compile_id, graph=phase.graph))


def _call_phase(builder: _Builder, call: CompileCall) -> tuple[Phase, list[dict[str, Any]]]:
    spans, instants = _spans(call.events, call.start_ns, call.end_ns)
    explorer = _merged((max(s, call.start_ns), min(e, call.end_ns)) for _, s, e in call.hooks if e > s)
    wall = (call.end_ns - call.start_ns) / 1e9
    node = builder.phase(call.kind, wall, call.start_ns)
    node.children = [builder.convert(span, explorer, "other", None) for span in _nest(spans)]
    if explorer:
        own = builder.phase("explorer", sum(e - s for s, e in explorer) / 1e9, explorer[0][0], category="explorer")
        per_hook: dict[str, list[tuple[int, int]]] = {}
        for name, start, end in call.hooks:
            per_hook.setdefault(name, []).append((start, end))
        for name, intervals in per_hook.items():
            inside = _merged((max(s, call.start_ns), min(e, call.end_ns)) for s, e in intervals if e > s)
            seconds = sum(e - s for s, e in inside) / 1e9
            if inside:
                own.children.append(builder.phase(name, seconds, inside[0][0], category="explorer"))
        own.children.sort(key=lambda p: -p.seconds)
        builder.add_other(own, call.end_ns, "explorer")
        _fit(own)
        node.children.append(own)
    builder.add_other(node, call.end_ns, "other")
    return node, instants


def _fit(phase: Phase) -> None:
    """Hook rows can overlap each other (a hook inside another): scale them to their merged total."""
    total = sum(c.seconds for c in phase.children)
    if total > phase.seconds > 0:
        for child in phase.children:
            child.seconds = round(child.seconds * phase.seconds / total, 6)


# ------------------------------------------------------------------------------------------ attribution


def _kernel_of(graph: Any, key: str) -> Any:
    for kernel in graph.kernels:
        if key in (kernel.id, kernel.name):
            return kernel
    return None


def _kernel_of_nodes(graph: Any, nodes: tuple[str, ...]) -> Any:
    """The kernel computing these post-grad nodes: a template or Triton kernel before an extern one."""
    wanted = set(nodes)
    found = [k for k in graph.kernels if wanted & set(k.post_grad_nodes)]
    found.sort(key=lambda k: k.language == "extern")
    return found[0] if found else None


def _kernels_of_shape(graph: Any, shape_text: Any) -> list[Any]:
    """The kernels computing a matrix product whose two operands have the shapes an autotuning logged
    (``autotune_shape``: ``"256x512, 512x384"``, a bias first for addmm), in graph order."""
    if not isinstance(shape_text, str) or not shape_text:
        return []
    wanted = [part.strip() for part in shape_text.split(",")][-2:]
    nodes = getattr(getattr(graph, "post_grad", None), "nodes", None) or []
    shapes = {n.name: "x".join(map(str, n.shape)) for n in nodes if n.shape is not None}
    found: list[Any] = []
    for node in nodes:
        operands = [shapes.get(name) for name in node.inputs][-2:]
        if "mm" in node.target and operands == wanted and (kernel := _kernel_of_nodes(graph, (node.name,))):
            if kernel not in found:
                found.append(kernel)
    return found


def _charge_kernels(builder_graphs: dict[str, Any], root: Phase, calls: list[CompileCall],
                    origin_ns: int) -> dict[tuple[str, str], KernelCompileTime]:
    """Phases torch timed for one kernel get its id (they and everything under them); their seconds go to
    that kernel: builds (``kernel_compile`` leaves) as its compile time, the rest as its autotuning."""
    kernels: dict[tuple[str, str], KernelCompileTime] = {}
    owners = sorted((t, g, nodes, n) for call in calls for t, g, nodes, n in call.autotune_owners)

    def owned(phase: Phase) -> tuple[str | None, Any, Any]:
        name = phase.args.get(_KERNEL_NAME)
        if isinstance(name, str) and name:
            # kernel names repeat across graphs: the graph of the phase's compile id and direction first
            backward = bool(phase.args.get("is_backward"))
            ranked = sorted(builder_graphs.items(), key=lambda item: (
                item[1].compile_id != phase.compile_id, (item[1].kind == "backward") != backward))
            for gid, graph in ranked:
                if phase.graph in (None, gid) and (kernel := _kernel_of(graph, name)) is not None:
                    return gid, kernel, None
        elif phase.name.endswith(_TEMPLATE_AUTOTUNE):
            end_ns = origin_ns + int((phase.start_s + phase.seconds) * 1e9)
            owner = next((o for o in owners if o[0] >= end_ns - 1000), None)
            graph = builder_graphs.get(f"g{owner[1]}") if owner else None
            timed = _kernel_of_nodes(graph, owner[2]) if graph is not None else None
            # the shapes torch logged with the autotuning name its matmul; the hook's note decides between
            # matmuls of one shape (Inductor tunes a shape once and reuses the choice)
            shaped = [(gid, k) for gid, g in builder_graphs.items() if phase.compile_id in (None, g.compile_id)
                      for k in _kernels_of_shape(g, phase.args.get("autotune_shape"))]
            if timed is not None and (not shaped or (graph.id, timed) in shaped):
                return graph.id, timed, owner
            if shaped:
                return shaped[0][0], shaped[0][1], owner
        return None, None, None

    def visit(phase: Phase) -> None:
        graph_id, kernel, owner = owned(phase)
        if kernel is None or graph_id is None:
            for child in phase.children:
                visit(child)
            return
        for inner in phase.walk():
            inner.kernel = kernel.id
        entry = kernels.get((graph_id, kernel.id))
        if entry is None:
            entry = kernels[(graph_id, kernel.id)] = KernelCompileTime(
                kernel.id, graph_id, fx_nodes=_charged_fx_nodes(builder_graphs[graph_id], kernel),
                user_lines=[tuple(line) for line in kernel.user_lines],
                candidates=_candidates(builder_graphs[graph_id], kernel, phase.args.get(_KERNEL_NAME)))
        leaves = [p for p in phase.walk() if not p.children]
        built = sum(p.seconds for p in leaves if p.category == "kernel_compile")
        entry.compile_s = round(entry.compile_s + built, 6)
        entry.autotune_s = round(entry.autotune_s + phase.seconds - built, 6)
        if owner is not None:
            entry.candidates = max(entry.candidates, owner[3])

    visit(root)
    return kernels


def _charge_kernel_builds(graphs: dict[str, Any], root: Phase, instants: list[dict[str, Any]],
                          kernels: dict[tuple[str, str], KernelCompileTime], origin_ns: int) -> dict[str, float]:
    """A graph's Triton kernels build in compile workers, in parallel, while the graph waits for them
    (``async_compile.wait``): torch times that wait per graph and each build per kernel, in its worker
    (``triton_kernel_info``). Each kernel is charged its share of the wait, by its build time, so the
    charges add up to the wait. Returns the seconds charged per graph (no longer the graph's own)."""
    compiles = [p for p in root.walk() if p.name == "inductor_compile" and p.graph in graphs]
    charged: dict[str, float] = {}
    for event in instants:
        args = event.get("args") if isinstance(event.get("args"), dict) else {}
        builds = args.get("builds_us") if event.get("name") == KERNEL_BUILDS else None
        if not isinstance(builds, dict) or not builds:
            continue
        at = (float(event.get("ts", 0)) * 1000 - origin_ns) / 1e9  # seconds from the report's start
        mine = [p for p in compiles if args.get("compile_id") in (None, p.compile_id)] or compiles
        holding = [p for p in mine if p.start_s <= at <= p.start_s + p.seconds + 1e-3]
        phase = holding[-1] if holding else min(mine, key=lambda p: abs(p.start_s + p.seconds - at), default=None)
        if phase is None:
            continue
        graph = graphs[phase.graph]
        wait = sum(p.seconds for p in phase.walk() if not p.children and p.category == "kernel_compile" and p.kernel is None)
        found = {name: (kernel, us) for name, us in builds.items() if (kernel := _kernel_of(graph, name)) is not None}
        total_us = sum(us for _, us in found.values())
        if wait <= 0 or total_us <= 0:
            continue
        for name, (kernel, us) in found.items():
            entry = kernels.get((graph.id, kernel.id))
            if entry is None:
                entry = kernels[(graph.id, kernel.id)] = KernelCompileTime(
                    kernel.id, graph.id, fx_nodes=_charged_fx_nodes(graph, kernel),
                    user_lines=[tuple(line) for line in kernel.user_lines], candidates=_candidates(graph, kernel, name))
            entry.compile_s = round(entry.compile_s + wait * us / total_us, 6)
            entry.build_s = round(entry.build_s + us / 1e6, 6)
        charged[graph.id] = charged.get(graph.id, 0.0) + wait
    return charged


def _candidates(graph: Any, kernel: Any, name: Any) -> int:
    return sum(1 for r in graph.autotune if r.kernel in (kernel.id, kernel.name, name))


def _outermost_kernel_phases(root: Phase) -> list[Phase]:
    found: list[Phase] = []

    def visit(phase: Phase) -> None:
        if phase.kernel is not None:
            found.append(phase)
            return
        for child in phase.children:
            visit(child)

    visit(root)
    return found


class _Charges:
    def __init__(self) -> None:
        self.rows: dict[str, Charge] = {}

    def add(self, key: str, kernel_s: float, spread_s: float, graph: str, file: str | None = None,
            line: int | None = None) -> None:
        row = self.rows.get(key)
        if row is None:
            row = self.rows[key] = Charge(key, 0.0, file=file, line=line)
        row.kernel_s += kernel_s
        row.spread_s += spread_s
        row.seconds = row.kernel_s + row.spread_s
        if graph not in row.graphs:
            row.graphs.append(graph)

    def sorted(self) -> list[Charge]:
        rows = sorted(self.rows.values(), key=lambda r: -r.seconds)
        for row in rows:
            row.seconds, row.kernel_s, row.spread_s = (round(row.seconds, 6), round(row.kernel_s, 6),
                                                       round(row.spread_s, 6))
        return [r for r in rows if r.seconds > 0]


def _charged_fx_nodes(graph: Any, kernel: Any) -> list[str]:
    """The FX nodes a kernel's compile seconds are charged to: those of what it computes, not of views it reads."""
    return computing_fx_nodes(kernel, {n.name: n for n in graph.post_grad.nodes})


def _computing_nodes(graph: Any) -> list[Any]:
    return [n for n in graph.fx.nodes if n.op in ("call_function", "call_method", "call_module")]


def _attribute(report_root: Phase, graphs: list[Any], kernel_times: dict[tuple[str, str], KernelCompileTime],
               frames: dict[str, Any], built: dict[str, float]) -> tuple[list[Charge], list[Charge], list[Charge]]:
    """Charge every second under a graph or a frame to FX nodes, then to their lines and modules
    (``built``: seconds of each graph's wait for its kernel builds, already charged to its kernels)."""
    by_id = {g.id: g for g in graphs}
    nodes, lines, modules = _Charges(), _Charges(), _Charges()

    def charge(graph: Any, fx_nodes: list[Any], kernel_s: float, spread_s: float) -> None:
        if not fx_nodes:
            return
        k, s = kernel_s / len(fx_nodes), spread_s / len(fx_nodes)
        for node in fx_nodes:
            nodes.add(f"{graph.id}/{node.name}", k, s, graph.id)
            if node.user_line:
                file, line = node.user_line
                lines.add(f"{file}:{line}", k, s, graph.id, file, line)
            if node.module is not None:
                modules.add(node.module, k, s, graph.id)

    for entry in kernel_times.values():
        graph = by_id[entry.graph]
        named = {n.name: n for n in graph.fx.nodes}
        charge(graph, [named[n] for n in entry.fx_nodes if n in named], entry.seconds, 0.0)
        entry.module = _module_of([named[n] for n in entry.fx_nodes if n in named])
    kernel_seconds = {g: built.get(g, 0.0) for g in by_id}
    for phase in _outermost_kernel_phases(report_root):
        if phase.graph in kernel_seconds:
            kernel_seconds[phase.graph] += phase.seconds
    for phase in report_root.walk():
        if phase.name == "inductor_compile" and phase.graph in by_id:
            graph = by_id[phase.graph]
            charge(graph, _computing_nodes(graph), 0.0, max(0.0, phase.seconds - kernel_seconds[phase.graph]))
            kernel_seconds[phase.graph] = 0.0  # charged once, against its first inductor_compile
    for call in report_root.children:
        for top in call.children:
            if top.compile_id is None or top.name in ("explorer", "other"):
                continue
            outside = top.seconds - _charged_elsewhere(top)
            frame_graphs = [g for g in graphs if g.compile_id == top.compile_id and g.kind != "backward"]
            if frame_graphs:
                graph = frame_graphs[0]
                charge(graph, _computing_nodes(graph), 0.0, max(0.0, outside))
            elif (frame := frames.get(top.compile_id)) is not None and frame.filename and frame.line \
                    and not frame.filename.startswith(_EXPLORER_DIR):  # the capture's own entry function
                key = f"{frame.filename}:{frame.line}"
                lines.add(key, 0.0, max(0.0, outside), top.compile_id, frame.filename, frame.line)
    return lines.sorted(), modules.sorted(), nodes.sorted()


def _charged_elsewhere(phase: Phase) -> float:
    """Seconds under ``phase`` already charged to a graph (inductor_compile) or to a kernel."""
    if phase.name == "inductor_compile" or phase.kernel is not None:
        return phase.seconds
    return sum(_charged_elsewhere(child) for child in phase.children)


def _module_of(nodes: list[Any]) -> str | None:
    modules = [n.module for n in nodes if n.module is not None]
    return max(set(modules), key=modules.count) if modules else None


# ------------------------------------------------------------------------------------------ recompiles, advice


def _compile_seconds(root: Phase) -> dict[str, float]:
    """Seconds of each compile id's top-level phases (its frame compile and its lazily compiled backwards)."""
    totals: dict[str, float] = {}
    for call in root.children:
        for top in call.children:
            if top.compile_id is not None and top.name not in ("explorer", "other"):
                totals[top.compile_id] = totals.get(top.compile_id, 0.0) + top.seconds
    return totals


def _recompiles(dynamo: Any, totals: dict[str, float]) -> list[RecompileCost]:
    return [RecompileCost(r.compile_id, r.function, list(r.reasons), round(totals.get(r.compile_id, 0.0), 6),
                          list(r.graphs)) for r in getattr(dynamo, "recompiles", [])]


AUTOTUNE_SHARE = 0.25  # autotuning above this share of the compile is worth a suggestion
KERNEL_COMPILE_SHARE = 0.3
RECOMPILE_SHARE = 0.1


def _suggestions(report: CompileTimeReport, dynamo: Any, instants: list[dict[str, Any]]) -> list[Suggestion]:
    found: list[Suggestion] = []
    total = report.seconds or 1.0
    split = report.categories()
    autotune = split.get("autotune", 0.0)
    if autotune >= AUTOTUNE_SHARE * total:
        tuned = [k for k in report.kernels if k.autotune_s]
        candidates = sum(k.candidates for k in tuned)
        found.append(Suggestion(
            "autotuning", f"autotuning took {autotune:.1f} s ({autotune / total:.0%} of the compile): {len(tuned)} "
            f"kernels x {candidates / max(1, len(tuned)):.0f} candidates on average. Autotune fewer ops "
            "(max_autotune_gemm only, or mode='max-autotune-no-cudagraphs' on the layers that matter), keep the "
            "autotune cache warm between runs, or set max_autotune_gemm_backends to fewer backends.",
            autotune, [f"{k.graph}/{k.kernel}: {k.autotune_s:.2f} s, {k.candidates} candidates" for k in report.top_kernels(5)
                       if k.autotune_s]))
    shapes = [r for r in report.recompiles if any("size mismatch" in reason or "stride mismatch" in reason
                                                 for reason in r.reasons)]
    recompile_s = sum(r.seconds for r in shapes)
    if shapes and recompile_s >= RECOMPILE_SHARE * total:
        found.append(Suggestion(
            "recompiles", f"{len(shapes)} recompile(s) for a new shape cost {recompile_s:.1f} s: mark the dimension "
            "dynamic (torch._dynamo.mark_dynamic(x, dim), or torch.compile(dynamic=True)) so one graph serves "
            "every size", recompile_s, [f"{r.compile_id} {r.function}: {r.reasons[0]} ({r.seconds:.2f} s)" for r in shapes]))
    kernel_compile = split.get("kernel_compile", 0.0)
    states = [i.get("name", "") for i in instants if "cache" in str(i.get("name", ""))]
    misses = [s for s in states if s.endswith(("_miss", "_disabled", "_bypass"))]
    if kernel_compile >= KERNEL_COMPILE_SHARE * total or (misses and not [s for s in states if s.endswith("_hit")]):
        found.append(Suggestion(
            "cold_cache", f"building kernels took {kernel_compile:.1f} s ({kernel_compile / total:.0%}); this compile ran "
            "with cold caches. Inductor's FX graph cache and kernel caches skip this on the next run of the same "
            "program: keep TORCHINDUCTOR_CACHE_DIR on a disk that persists between jobs (or ship "
            "torch.compiler.save_cache_artifacts() to fresh machines).",
            kernel_compile, sorted(set(states))[:6] + [f"kernel_compile: {kernel_compile:.2f} s"]))
    breaks = getattr(dynamo, "graph_breaks", [])
    frames = report.frames()
    if breaks and len(frames) > 1:
        resumed = [f for f in frames if any(b.resume == f.compile_id for b in breaks)]
        seconds = sum(f.seconds for f in resumed)
        found.append(Suggestion(
            "graph_breaks", f"graph breaks at {len({(b.user_line, b.reason) for b in breaks})} place(s) split the code "
            f"into {len(frames)} frame compiles; the "
            f"frames after a break cost {seconds:.2f} s and their graphs cannot fuse across the break. Remove the "
            "break (its reason and line are in the evidence), or move it out of the compiled region.",
            seconds, list(dict.fromkeys(f"{b.user_line[0]}:{b.user_line[1]}: {b.reason}" if b.user_line else b.reason
                                        for b in breaks))))
    return found


# ------------------------------------------------------------------------------------------ the report


def build(calls: list[CompileCall], graphs: list[Any], dynamo: Any = None, rank: str | None = None) -> CompileTimeReport:
    """The report of ``calls`` (in order), charging to ``graphs`` (GraphCapture objects, ids g0...)."""
    if not calls:
        raise ValueError("no compile calls recorded: a CompileTimeReport needs the events of at least one call")
    source = "log" if all(c.kind == "log" for c in calls) else "capture"
    origin = min(c.start_ns for c in calls)
    builder = _Builder(graphs, origin)
    root = builder.phase("compile", 0.0, origin)
    instants: list[dict[str, Any]] = []
    for call in calls:
        node, found = _call_phase(builder, call)
        root.children.append(node)
        instants += found
    root.seconds = round(sum(c.seconds for c in root.children), 6)
    by_id = {g.id: g for g in graphs}
    kernel_times = _charge_kernels(by_id, root, calls, origin)
    built = _charge_kernel_builds(by_id, root, instants, kernel_times, origin)
    frames = {f.compile_id: f for f in getattr(dynamo, "frames", [])}
    lines, modules, nodes = _attribute(root, graphs, kernel_times, frames, built)
    notes = [_SPREAD_NOTE]
    if any(k.language == "cpp" for g in graphs for k in g.kernels):
        notes.append(_CPP_NOTE)
    report = CompileTimeReport(source, root, sorted(kernel_times.values(), key=lambda k: -k.seconds), lines, modules,
                               nodes, _recompiles(dynamo, _compile_seconds(root)), notes=notes, rank=rank)
    report.suggestions = _suggestions(report, dynamo, instants)
    return report
