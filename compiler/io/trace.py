"""Compilation <-> the versioned JSON trace (see SCHEMA.md). JSON only: loading runs no code."""

from __future__ import annotations

import base64
import functools
import sys
from concurrent.futures import ThreadPoolExecutor
from collections.abc import Mapping, Sequence
from typing import Any, Callable, Iterator

from ..model import cost, datasheet, progress, slots
from ..model.compilation import Compilation, Note
from ..model.contract import (KERNEL_IR_PACKED_KEYS, LOOP_IR_BODIES_PACKED_KEYS, OPTIONAL_GRAPH_KEYS, TRACE_SCHEMA,
                              TRACE_VERSION, WRAPPER_PACKED_KEYS, check, collector_paused, pack, packed,
                              stage_counts, unpack, unpacked)
from ..model.errors import TraceFormatError
from ..model.features import FeatureUse
from ..model.kernel_ir import KernelIR, RawKernelIR
from ..model.memory import MemoryBuffer, MemoryMeasurement, MemoryStep, MemoryTimeline
from ..model.records import from_dict, json_float, to_dict
from ..model.stages import (AutotuneRecord, FusedGroup, FxNode, FxStage, GraphCapture, Kernel, LoopIRNode, NotFused,
                            Wrapper)
from ..model.wrapper_fx import WrapperFx, WrapperFxNode
from . import compile_time as compile_time_json
from . import cudagraphs as cudagraphs_json
from . import dynamo as dynamo_json
from . import export as export_json
from .expression_text import check_text
from .reports import (counters_from_json, counters_to_json, numerics_from_json, numerics_to_json, profile_from_json,
                      profile_to_json)


def _fx_node(n: FxNode) -> dict[str, Any]:
    out = {
        "name": n.name, "op": n.op, "target": n.target, "args": n.args, "shape": n.shape, "dtype": n.dtype,
        "inputs": n.inputs, "users": n.users, "user_line": list(n.user_line) if n.user_line else None,
        "stack": [list(f) for f in n.stack], "module": n.module, "fx": n.fx, "post_grad": n.post_grad, "loop_ir": n.loop_ir,
        "kernels": n.kernels,
    }
    if n.subgraph:
        out["subgraph"] = n.subgraph
    return out


def _fx_stage(s: FxStage) -> dict[str, Any]:
    return {"code": s.code, "nodes": [_fx_node(n) for n in s.nodes]}


def _expressions(mapping: Any) -> dict[str, str]:
    sympy_io = _sympy_text()
    if isinstance(mapping, sympy_io.ExpressionMap):  # loaded and never looked at: its strings as they were
        return dict(mapping.texts)
    return {sympy_io.to_text(k): sympy_io.to_text(v) for k, v in mapping.items()}


def _sympy_text() -> Any:
    """compiler/io/sympy_text.py, imported when a loop IR is first built or written: sympy takes a third of
    a second to import, and opening a trace or a log builds no loop IR."""
    from . import sympy_text

    return sympy_text


def _loop_ir(n: LoopIRNode) -> dict[str, Any]:
    sympy_io = _sympy_text()
    return {
        "name": n.name, "kind": n.kind, "buffers": n.buffers, "buffer_nodes": n.buffer_nodes, "device": n.device,
        "dtype": n.dtype, "size": n.size, "stride": n.stride, "ranges": _expressions(n.ranges),
        "sizes": [[sympy_io.to_text(v) for v in part] for part in n.sizes], "indexing": _expressions(n.indexing),
        "reads": n.reads, "writes": n.writes, "body": n.body, "origins": n.origins,
        "extern_target": n.extern_target, "group": n.group, "eliminated": n.eliminated, "kernels": n.kernels,
        **({"inherited_origins": n.inherited_origins} if n.inherited_origins else {}),
    }


def _kernel(k: Kernel, costs: dict[str, float | None], packed_texts: bool = False, raw_ir: bool = False,
            with_ir: bool = True) -> dict[str, Any]:
    out = {
        "id": k.id, "name": k.name, "language": k.language, "source": k.source, "group": k.group,
        "loop_ir": k.loop_ir, "post_grad_nodes": k.post_grad_nodes, "fx_nodes": k.fx_nodes,
        "user_lines": [list(u) for u in k.user_lines],
        "line_nodes": {str(line): names for line, names in k.line_nodes.items()},
        "wrapper_lines": k.wrapper_lines, "meta": _jsonable(k.meta),
        "cost": {key: json_float(v) for key, v in costs.items()},
    }
    if k.provenance_note:
        out["provenance_note"] = k.provenance_note
    if k.ir is not None and with_ir:
        out["ir"] = kernel_ir_to_json(k.ir, packed_texts=packed_texts, raw=raw_ir)
    return out


def _kernels(g: GraphCapture, **options: bool) -> list[dict[str, Any]]:
    """A graph's kernels as JSON, each with its ``cost``: bytes and FLOPs by compiler/model/cost.py, the one
    place they are computed (the views read them from the trace)."""
    costs = cost.kernel_costs(g)
    return [_kernel(k, costs[k.id], **options) for k in g.kernels]


def _wrapper(w: Wrapper, build_fx: bool = True) -> dict[str, Any]:
    """``build_fx=False``: the FX form only if it was built already (building it costs more than a compile)."""
    out: dict[str, Any] = {"source": w.source, "kernel_lines": {str(k): v for k, v in w.kernel_lines.items()}}
    if w.language != "python":
        out["language"] = w.language
    fx = w.fx if build_fx or w.fx_pending is None else None
    if fx is not None:
        out["fx"] = wrapper_fx_to_json(fx)
    return out


def _jsonable(value: Any) -> Any:
    """Plain JSON: non-string keys (Triton meta uses tuples) become strings, unknown objects their str."""
    if isinstance(value, dict):
        return {k if isinstance(k, str) else str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)


# Every key of a graph's JSON, and how it is made: one table for the eager dict and the lazy mapping.
_GRAPH_FIELDS: dict[str, Callable[[GraphCapture], Any]] = {
    "id": lambda g: g.id,
    "index": lambda g: g.index,
    "kind": lambda g: g.kind,
    "dynamo_graph": lambda g: g.dynamo_graph,
    "timings": lambda g: g.timings,
    "fx": lambda g: _fx_stage(g.fx),
    "post_grad": lambda g: _fx_stage(g.post_grad),
    "loop_ir": lambda g: [_loop_ir(n) for n in g.loop_ir],
    "fused": lambda g: [to_dict(f) for f in g.fused],
    "not_fused": lambda g: [to_dict(r) for r in g.not_fused],
    "kernels": lambda g: _kernels(g),
    "wrapper": lambda g: _wrapper(g.wrapper),
    "autotune": lambda g: [{**to_dict(a), "time_ms": json_float(a.time_ms)} for a in g.autotune],
    "features": lambda g: [_feature(f) for f in g.features],
    "compile_id": lambda g: g.compile_id,
    "memory": lambda g: timeline_to_json(g.memory) if g.memory is not None else None,
    "cudagraphs": lambda g: cudagraphs_json.to_json(g.cudagraphs) if g.cudagraphs is not None else None,
}


# A trace written to a file (or sent by a sweep worker) packs each kernel's IR texts, each wrapper (its
# source and FX form) and a graph's loop-IR body texts: SCHEMA.md, "Packed parts".
_PACKED_GRAPH_FIELDS = {**_GRAPH_FIELDS, "kernels": lambda g: _kernels(g, packed_texts=True),
                       "wrapper": lambda g: packed(_wrapper(g.wrapper), WRAPPER_PACKED_KEYS),
                       "loop_ir": lambda g: [{k: v for k, v in _loop_ir(n).items() if k != "body"} for n in g.loop_ir],
                       "loop_ir_bodies": lambda g: packed({"bodies": {n.name: n.body for n in g.loop_ir}},
                                                          LOOP_IR_BODIES_PACKED_KEYS)}

# A sweep worker's trace also leaves each kernel's IR unbuilt (SCHEMA.md, "Raw kernel IR").
_RAW_IR_GRAPH_FIELDS = {**_PACKED_GRAPH_FIELDS,
                        "kernels": lambda g: _kernels(g, packed_texts=True, raw_ir=True)}


# What the warm-capture store keeps of a graph: a sweep worker's form, with nothing built that was not built yet.
# A run's CUDA graph events are the run's, not the graph's: a graph served warm starts without them.
_STORED_GRAPH_FIELDS = {**_RAW_IR_GRAPH_FIELDS,
                        "wrapper": lambda g: packed(_wrapper(g.wrapper, build_fx=False), WRAPPER_PACKED_KEYS),
                        "cudagraphs": lambda g: (cudagraphs_json.to_json(g.cudagraphs, events=False)
                                                 if g.cudagraphs is not None else None)}


def _graph(g: GraphCapture, packed_parts: bool = False, raw_irs: bool = False,
           fields: dict[str, Callable[[GraphCapture], Any]] | None = None) -> dict[str, Any]:
    fields = fields or (_RAW_IR_GRAPH_FIELDS if raw_irs else _PACKED_GRAPH_FIELDS if packed_parts else _GRAPH_FIELDS)
    out = {key: make(g) for key, make in fields.items()}
    return {key: value for key, value in out.items() if value or key not in OPTIONAL_GRAPH_KEYS}


@slots.stored_graph_json.fill
def stored_graph_json(g: GraphCapture) -> dict[str, Any]:
    """One graph as the warm-capture store keeps it (compiler/pipeline/capture_store.py)."""
    return _graph(g, fields=_STORED_GRAPH_FIELDS)


@slots.stored_graph.fill
def stored_graph(data: dict[str, Any]) -> GraphCapture:
    """A graph the store kept, as a loaded trace's graph (its kernel IRs built when first read)."""
    return _load_graph(data, "a stored graph")


def _feature(f: FeatureUse) -> dict[str, Any]:
    return {**to_dict(f), "detail": _jsonable(f.detail)}


def _load_feature(f: dict[str, Any]) -> FeatureUse:
    return FeatureUse(system=str(f["system"]), summary=str(f.get("summary", "")), kernel=f.get("kernel"),
                      lines=tuple(f.get("lines", [])), nodes=tuple(f.get("nodes", [])),
                      wrapper_lines=tuple(f.get("wrapper_lines", [])), detail=dict(f.get("detail") or {}))


class LazyGraph(Mapping):
    """A graph's JSON, each key serialized the first time it is read (and kept).

    Views read one stage at a time: a widget showing a 100,000-node FX graph first should not serialize
    the loop IR, kernels and wrapper before drawing it. ``counts`` gives the size of every stage
    without serializing any.
    """

    def __init__(self, graph: GraphCapture) -> None:
        self._graph = graph
        self._made: dict[str, Any] = {}

    def __getitem__(self, key: str) -> Any:
        if key not in self._made:
            pending = self._graph.pending  # a loaded graph not built yet: its FX stages as the file held them
            as_loaded = pending.view_stage(key) if isinstance(pending, GraphJSON) else None
            self._made[key] = as_loaded if as_loaded is not None else _LAZY_GRAPH_FIELDS[key](self._graph)
        return self._made[key]

    def __iter__(self) -> Iterator[str]:
        return iter(_GRAPH_FIELDS)

    def __len__(self) -> int:
        return len(_GRAPH_FIELDS)

    def counts(self) -> dict[str, int]:
        return self._graph.counts()


class LazyKernel(Mapping):
    """A kernel's JSON whose ``ir`` is serialized when a view first reads it: a live capture builds a
    kernel's IR (nvdisasm, about 0.5 s) on first read, so the kernel table must not read every one."""

    def __init__(self, kernel: Kernel, costs: dict[str, float | None]) -> None:
        self._kernel = kernel
        self._record = _kernel(kernel, costs, with_ir=False)
        self._keys = (*self._record, "ir") if kernel.ir is not None else tuple(self._record)

    def __getitem__(self, key: str) -> Any:
        if key == "ir" and "ir" in self._keys and "ir" not in self._record:
            self._record["ir"] = kernel_ir_to_json(self._kernel.ir)
        return self._record[key]

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)


def _lazy_kernels(g: GraphCapture) -> list[LazyKernel]:
    costs = cost.kernel_costs(g)
    return [LazyKernel(k, costs[k.id]) for k in g.kernels]


_LAZY_GRAPH_FIELDS = {**_GRAPH_FIELDS, "kernels": _lazy_kernels}


class LazyProfiles(Sequence):
    """A compilation's profiles as JSON for views, each made when first read: a profile's line totals
    spread its kernels over the graphs' nodes, which builds a loaded graph's stages, and the first view
    reads none of them (the part is made when the view asks for it)."""

    def __init__(self, profiles: list[Any]) -> None:
        self._profiles = profiles
        self._json: dict[int, dict[str, Any]] = {}

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self[i] for i in range(len(self))[index]]
        index = range(len(self))[index]  # a negative index counts from the end; one out of range raises
        if index not in self._json:
            self._json[index] = profile_to_json(self._profiles[index])
        return self._json[index]

    def __len__(self) -> int:
        return len(self._profiles)


def _lazy(g: GraphCapture) -> LazyGraph:
    """A graph's lazy JSON, made once: stages are not changed after capture, so what was serialized
    for one view is reused by the next (switching back to a compilation in a session)."""
    if g._json is None:
        g._json = LazyGraph(g)
    return g._json


@slots.trace_json.fill
def to_json(c: Compilation, lazy: bool = False, packed_parts: bool = False, raw_irs: bool = False) -> dict[str, Any]:
    """The trace dict; ``lazy=True`` leaves every graph as a LazyGraph (for views that read parts);
    ``packed_parts=True`` packs kernel IR texts and wrappers, as files hold them; ``raw_irs=True`` (a
    sweep worker's trace, packed) leaves each kernel's IR as the capture copied it.

    A whole trace holds every kernel's Triton IR and every wrapper's FX form, so what a live capture left
    for first use (SASS, line maps, the FX conversion) is built here first, as progress steps; with
    ``raw_irs`` the IR is built where the trace is read instead."""
    if not lazy:
        complete_wrapper_fx(c)
        if not raw_irs:
            complete_kernel_irs(c)
    out = {
        "schema": TRACE_SCHEMA,
        "version": TRACE_VERSION,
        "meta": {
            "function": c.function, "device": c.device, "device_name": c.device_name, "torch": c.torch,
            "triton": c.triton, "python": c.python, "created": c.created, "toggles": _jsonable(c.toggles),
            "inductor_overrides": _jsonable(c.inductor_overrides), "backward": c.backward, "timings": c.timings,
            **({"device_peaks": peaks} if (peaks := datasheet.peaks_json(c.device_name)) else {}),
        },
        "inputs": c.inputs,
        "outputs": c.output_specs,
        "sources": {file: {str(line): text for line, text in lines.items()} for file, lines in c.sources.items()},
        "graphs": [_lazy(g) if lazy else _graph(g, packed_parts, raw_irs) for g in c.graphs],
        "profiles": LazyProfiles(c.profiles) if lazy else [profile_to_json(p) for p in c.profiles],
        "numerics": [numerics_to_json(r) for r in c.numerics],
        "counters": [counters_to_json(r) for r in c.counter_reports],
        **({"dynamo": dynamo_json.to_json(c.dynamo)} if c.dynamo else {}),
        **({"origin": _jsonable(c.origin)} if c.origin else {}),
        **({"export": export_json.to_json(c.export)} if c.export is not None else {}),
    }
    if c.library_files:
        out["library_files"] = dict(c.library_files)
    compile_time = compile_time_json.of(c, lazy=lazy)
    if compile_time is not None:
        out["compile_time"] = compile_time
    if c.notes:
        out["notes"] = [to_dict(n) for n in c.notes]
    if c.cudagraph_times:
        out["cudagraph_times"] = [cudagraphs_json.time_to_json(t) for t in c.cudagraph_times]
    return out


# ---------------------------------------------------------------------------------------------- load


def _need(data: Any, key: str, kind: type | tuple[type, ...], where: str) -> Any:
    if not isinstance(data, dict) or key not in data:
        raise TraceFormatError(f"malformed trace: {where} has no {key!r}")
    value = data[key]
    if not isinstance(value, kind):
        raise TraceFormatError(f"malformed trace: {where}.{key} should be {getattr(kind, '__name__', kind)}, "
                               f"got {type(value).__name__}")
    return value


def from_json(data: Any, origin: str = "trace") -> Compilation:
    check(data, TRACE_SCHEMA, origin, TraceFormatError)
    meta = _need(data, "meta", dict, origin)
    try:
        as_written = data.get("version") == TRACE_VERSION  # its FX stages are what views read, key for key
        graphs = [_load_graph(g, f"graphs[{i}]", lazy=True, as_written=as_written)
                  for i, g in enumerate(_need(data, "graphs", list, origin))]
        return Compilation(
            function=str(meta.get("function", "?")), device=str(meta.get("device", "?")),
            device_name=str(meta.get("device_name", "?")), torch=str(meta.get("torch", "?")),
            triton=meta.get("triton"), python=str(meta.get("python", "?")), created=str(meta.get("created", "")),
            toggles=dict(meta.get("toggles") or {}), inductor_overrides=dict(meta.get("inductor_overrides") or {}),
            backward=bool(meta.get("backward", False)), timings=dict(meta.get("timings") or {}),
            inputs=list(data.get("inputs") or []), output_specs=list(data.get("outputs") or []), graphs=graphs,
            sources={f: {int(k): str(v) for k, v in lines.items()} for f, lines in (data.get("sources") or {}).items()},
            profiles=[profile_from_json(p) for p in data.get("profiles") or []],
            numerics=[numerics_from_json(r) for r in data.get("numerics") or []],
            counter_reports=[counters_from_json(r) for r in data.get("counters") or []],
            library_files={str(f): str(lib) for f, lib in (data.get("library_files") or {}).items()},
            dynamo=dynamo_json.from_json(data.get("dynamo")), origin=dict(data.get("origin") or {}),
            export=export_json.from_json(data.get("export")),
            compile_time_report=compile_time_json.from_json(data.get("compile_time")),
            notes=[from_dict(Note, n) for n in data.get("notes") or []],
            cudagraph_times=[cudagraphs_json.time_from_json(t) for t in data.get("cudagraph_times") or []],
        )
    except TraceFormatError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise TraceFormatError(f"malformed trace {origin}: {type(exc).__name__}: {exc}") from exc


def _names(values: Any) -> list[str]:
    """A list of ids from the trace, each id string shared with its other occurrences (sys.intern): the
    same node names recur in thousands of inputs/users/provenance lists."""
    return [sys.intern(v) for v in values] if values else []


def _load_node(n: dict[str, Any]) -> FxNode:
    user_line = n.get("user_line")
    return FxNode(
        name=sys.intern(n["name"]), op=sys.intern(n["op"]), target=sys.intern(n["target"]), args=n.get("args", ""),
        shape=n.get("shape"), dtype=n.get("dtype") and sys.intern(n["dtype"]), inputs=_names(n.get("inputs")),
        users=_names(n.get("users")),
        user_line=(sys.intern(user_line[0]), user_line[1]) if user_line else None,
        stack=[(sys.intern(f[0]), f[1], sys.intern(f[2])) for f in n.get("stack", [])],
        module=n.get("module") and sys.intern(n["module"]), fx=_names(n.get("fx")),
        post_grad=_names(n.get("post_grad")), loop_ir=_names(n.get("loop_ir")), kernels=_names(n.get("kernels")),
        subgraph=n.get("subgraph"),
    )


def _load_stage(stage: str, s: dict[str, Any]) -> FxStage:
    return FxStage(stage=stage, code=s.get("code", ""), nodes=[_load_node(n) for n in s.get("nodes", [])])


def _load_loop_ir(n: dict[str, Any], bodies: dict[str, str]) -> LoopIRNode:
    sympy_io = _sympy_text()
    expr = sympy_io.from_text
    return LoopIRNode(
        name=n["name"], kind=n["kind"], buffers=list(n.get("buffers", [])),
        buffer_nodes=dict(n.get("buffer_nodes") or {}), device=n.get("device"),
        dtype=n.get("dtype"), size=list(n.get("size", [])), stride=list(n.get("stride", [])),
        ranges=sympy_io.ExpressionMap(dict(n.get("ranges", {})), symbol_keys=True),
        sizes=[[expr(v) for v in part] for part in n.get("sizes", [])],
        indexing=sympy_io.ExpressionMap(dict(n.get("indexing", {})), symbol_keys=False),
        reads=list(n.get("reads", [])), writes=list(n.get("writes", [])), body=n.get("body") or bodies.get(n["name"], ""),
        origins=list(n.get("origins", [])), inherited_origins=list(n.get("inherited_origins", [])),
        extern_target=n.get("extern_target"), group=n.get("group"),
        eliminated=bool(n.get("eliminated", False)), kernels=list(n.get("kernels", [])),
    )


def _load_kernel(k: dict[str, Any]) -> Kernel:
    return Kernel(
        id=k["id"], name=k["name"], language=k["language"], source=k["source"], group=k.get("group"),
        loop_ir=list(k.get("loop_ir", [])), post_grad_nodes=list(k.get("post_grad_nodes", [])),
        fx_nodes=list(k.get("fx_nodes", [])), user_lines=[tuple(u) for u in k.get("user_lines", [])],
        line_nodes={int(line): list(names) for line, names in k.get("line_nodes", {}).items()},
        wrapper_lines=list(k.get("wrapper_lines", [])), meta=dict(k.get("meta", {})),
        provenance_note=k.get("provenance_note"),
        ir=kernel_ir_from_json(k["ir"], k["source"], k["name"]) if k.get("ir") is not None else None,
    )


def _load_graph(g: dict[str, Any], where: str, lazy: bool = False, as_written: bool = False) -> GraphCapture:
    """One graph of a trace; with ``lazy``, its stages are built when first read (GraphJSON): what is
    checked at load (the header, and that no loop-IR expression holds anything but arithmetic) is checked
    now, so a file that would be refused still is."""
    if not isinstance(g, dict):
        raise TraceFormatError(f"malformed trace: {where} should be an object")
    header = {"index": _need(g, "index", int, where), "kind": _need(g, "kind", str, where),
              "dynamo_graph": int(g.get("dynamo_graph", 0)), "timings": dict(g.get("timings", {})),
              "compile_id": g.get("compile_id"), "cudagraphs": cudagraphs_json.from_json(g.get("cudagraphs"))}
    for stage in ("fx", "post_grad"):
        _need(g, stage, dict, where)
    if not lazy:
        return GraphCapture(**header, **_stages(g, where))
    for node in g.get("loop_ir", []):
        for text in (*node.get("ranges", {}), *node.get("ranges", {}).values(), *node.get("indexing", {}).values(),
                     *(v for part in node.get("sizes", []) for v in part)):
            check_text(text)
    return GraphCapture(**header, fx=None, post_grad=None, loop_ir=None, fused=None, kernels=None, wrapper=None,
                        pending=GraphJSON(g, where, as_written))


def _stages(g: dict[str, Any], where: str) -> dict[str, Any]:
    """Every stage of a graph's JSON, built."""
    wrapper = unpacked(g.get("wrapper") or {}, TraceFormatError)
    bodies = unpacked(g.get("loop_ir_bodies") or {}, TraceFormatError).get("bodies") or {}
    try:
        return {
            "fx": _load_stage("fx", g["fx"]), "post_grad": _load_stage("post_grad", g["post_grad"]),
            "loop_ir": [_load_loop_ir(n, bodies) for n in g.get("loop_ir", [])],
            "fused": [from_dict(FusedGroup, f) for f in g.get("fused", [])],
            "kernels": [_load_kernel(k) for k in g.get("kernels", [])],
            "wrapper": Wrapper(source=wrapper.get("source", ""),
                               kernel_lines={int(k): v for k, v in (wrapper.get("kernel_lines") or {}).items()},
                               language=str(wrapper.get("language", "python")),
                               fx=wrapper_fx_from_json(wrapper["fx"]) if wrapper.get("fx") is not None else None),
            "autotune": [from_dict(AutotuneRecord, {"source": "", **a}, time_ms=float, chosen=bool)
                         for a in g.get("autotune", [])],
            "not_fused": [from_dict(NotFused, r) for r in g.get("not_fused", [])],
            "features": [_load_feature(f) for f in g.get("features", [])],
            "memory": timeline_from_json(g["memory"]) if g.get("memory") is not None else None,
        }
    except TraceFormatError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise TraceFormatError(f"malformed trace: {where}: {type(exc).__name__}: {exc}") from exc


class GraphJSON:
    """A loaded graph's JSON while its stages are unbuilt (``GraphCapture.pending``): called, it builds
    them; it counts them for summaries; and it gives views the FX stages as the file held them, which
    for a trace of this version are what serializing the built stages would give (the views' first
    drawing reads the FX stage, and nothing else of the graph is built for it)."""

    def __init__(self, data: dict[str, Any], where: str, as_written: bool) -> None:
        self.data = data
        self.where = where
        self.as_written = as_written

    def __call__(self) -> dict[str, Any]:
        with collector_paused():
            return _stages(self.data, self.where)

    def counts(self) -> dict[str, int]:
        return stage_counts(self.data, TraceFormatError)

    def view_stage(self, key: str) -> dict[str, Any] | None:
        return self.data[key] if self.as_written and key in ("fx", "post_grad") else None


def complete_wrapper_fx(c: Compilation) -> None:
    """Convert every wrapper still pending to FX (Inductor's converter, one graph after another)."""
    pending = [g for g in c.graphs if g.wrapper.fx_pending is not None]
    for done, graph in enumerate(pending):
        progress.step("saving", done=done, total=len(pending), detail=f"the wrapper of {graph.id} as FX")
        graph.wrapper.complete()


@slots.complete_kernel_irs.fill
def complete_kernel_irs(*compilations: Compilation) -> None:
    """Build every pending k.ir (nvdisasm runs in subprocesses, so threads overlap them)."""
    pending = [k.ir for c in compilations for g in c.graphs for k in g.kernels
               if k.ir is not None and k.ir.pending is not None]
    _build_in_parallel(KernelIR.complete, pending)


def _build_in_parallel(build: Callable[[Any], None], kernels: list[Any]) -> None:
    """``build`` each kernel's IR in a thread pool, as a progress step: nvdisasm runs in subprocesses,
    so the threads overlap them."""
    if not kernels:
        return
    progress.step("kernel IR", detail=f"disassembling and mapping the Triton IR of {len(kernels)} kernels")
    with ThreadPoolExecutor(max_workers=min(8, len(kernels))) as pool:
        list(pool.map(build, kernels))


# ------------------------------------------------------------------------- parts kept as dataclass dicts


def kernel_ir_to_json(ir: KernelIR, packed_texts: bool = False, raw: bool = False) -> dict[str, Any]:
    """``raw=True``: an IR the capture left unbuilt stays so, as ``{"raw": packed}`` (SCHEMA.md, "Raw kernel IR")."""
    if raw and isinstance(ir.pending, RawKernelIR):
        copied = ir.pending.raw
        cubin = copied.get("cubin")
        return {"raw": pack({**copied, "cubin": base64.b64encode(cubin).decode("ascii") if cubin else None,
                             "arch": ir.pending.arch})}
    if raw and isinstance(ir.pending, functools.partial) and ir.pending.func is _raw_ir_built:
        return {"raw": ir.pending.args[0]}  # read raw from a trace and still unopened: written back as it came
    out = to_dict(ir, skip=("pending",))
    return packed(out, KERNEL_IR_PACKED_KEYS) if packed_texts else out


def kernel_ir_from_json(data: dict[str, Any], source: str = "", name: str = "") -> KernelIR:
    """A packed IR is unpacked when it is first read, a raw one built then (loading a trace stays cheap).
    ``source`` and ``name``: the kernel's, which a raw IR's line maps point into."""
    if "raw" in data:
        return KernelIR(pending=functools.partial(_raw_ir_built, data["raw"], source, name))
    if "packed" not in data:
        return from_dict(KernelIR, data)
    return KernelIR(pending=lambda: from_dict(KernelIR, unpacked(data, TraceFormatError)))


def _raw_ir_built(text: str, source: str, name: str) -> KernelIR:
    """The KernelIR of a raw one as a trace holds it (packed, its cubin in base64)."""
    raw = unpack(text, TraceFormatError)
    if not isinstance(raw, dict):
        raise TraceFormatError("malformed trace: a raw kernel IR should be an object")
    raw["cubin"] = base64.b64decode(raw["cubin"]) if raw.get("cubin") else None
    return RawKernelIR(raw, source, name, raw.pop("arch", None))()


def with_raw_irs_built(trace: dict[str, Any]) -> dict[str, Any]:
    """``trace`` (a sweep worker's) with every raw kernel IR built and packed, as a trace file holds it.
    The dict is changed in place and returned."""
    raw = [kernel for graph in trace.get("graphs") or [] for kernel in graph.get("kernels") or []
           if isinstance(kernel.get("ir"), dict) and "raw" in kernel["ir"]]

    def build(kernel: dict[str, Any]) -> None:
        built = _raw_ir_built(kernel["ir"]["raw"], kernel.get("source", ""), kernel.get("name", ""))
        kernel["ir"] = kernel_ir_to_json(built, packed_texts=True)

    _build_in_parallel(build, raw)
    return trace


def timeline_to_json(timeline: MemoryTimeline) -> dict[str, Any]:
    return to_dict(timeline, skip=("graph",))


def timeline_from_json(data: dict[str, Any]) -> MemoryTimeline:
    return from_dict(
        MemoryTimeline, data,
        steps=lambda items: [from_dict(MemoryStep, s) for s in items],
        buffers=lambda items: [from_dict(MemoryBuffer, b) for b in items],
        measured=lambda m: from_dict(MemoryMeasurement, m),
    )


def wrapper_fx_to_json(fx: WrapperFx) -> dict[str, Any]:
    return to_dict(fx, skip=("module",))


def wrapper_fx_from_json(data: dict[str, Any]) -> WrapperFx:
    return from_dict(WrapperFx, data, nodes=lambda items: [from_dict(WrapperFxNode, n) for n in items])
