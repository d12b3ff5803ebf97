"""A trace cut into the parts the views load one at a time.

The first view needs a summary (header, graph list, stage counts) and the graph on screen; the rest
comes when it is opened: a stage's data when its tab is clicked, a kernel's source (and IR) when the
kernel is shown. The live widget serves parts over custom messages (binary buffers), the static HTML
embeds them compressed and decodes them on demand: one path for both.

Part keys (``g0`` is a graph id):

The summary also carries a view's ``culprits`` (compiler/model/contract.py ``CULPRITS``: the levels of a
bisect's culprit, for a compilation shown from its ``BisectResult``), which is not a part.

- ``sources`` and every other top-level key beyond the header (``profiles``, ``numerics``, ``dynamo``,
  ``export`` for an AOT compilation: the Export stage, which the summary announces with its counts)
- ``g0/fx``, ``g0/post_grad``: ``{"code", "nodes"}`` (nodes trimmed to what views read)
- ``g0/fx_outline``, ``g0/post_grad_outline``: what the first drawing of a graph reads, in columns
  (see ``outline``): a 100,000-node graph's outline is a few MB where its part is about 27 MB, so the
  graph is drawn before the whole part has been encoded, sent and parsed. ``keys()`` (what an export
  embeds) lists the FX one only: views open on the FX stage, and the post-grad part has come with the
  provenance index by the time that stage is opened (a view asking for a missing outline reads the part)
- ``g0/loop_ir`` (without bodies) and ``g0/loop_ir_bodies`` (``{name: body}``)
- ``g0/fused``: ``{"fused", "not_fused", "user_lines"}`` (``user_lines``: each group's count of the user's lines
  its kernels compute, which tells the "what if" box whether a loop of one scheduler node can be cut at lines)
- ``g0/kernels``: kernel records without their heavy fields, plus ``source_lines`` (the source's
  line count, a column of the kernels table); ``g0/kernel/<id>``: those fields (``source``, ``ir``)
- ``g0/wrapper``, ``g0/autotune`` (a failed choice's infinite ``time_ms`` as ``"inf"``: parts are
  strict JSON), and ``g0/<key>`` for any other key a graph carries (``memory``...)
- ``compile_time_chart`` and ``compile_time_chrome`` (compile_time_parts.py): the Compile time stage's
  icicle and its Chrome trace, made from the ``compile_time`` report when asked for
- ``g0/roofline`` (roofline.py): the graph's kernels as roofline points, from the trace's reports
"""

from __future__ import annotations

import gc
import json
import math
import weakref
from typing import Any, Iterator, Mapping, Sequence

from compiler.model.contract import (CULPRITS, FX_NODE_KEYS, PG_NODE_KEYS, TRACE_SCHEMA, TRACE_VERSION, FxPart,
                                     GraphCounts, OutlinePart, PostGradPart, TraceSummary,
                                     collector_paused, stage_counts, unpacked)

from . import compile_time_parts
from .dynamo_digest import dynamo_digest
from .payload import TraceError, as_trace
from .roofline import roofline

HEADER_KEYS = ("schema", "version", "meta", "inputs", "outputs")
GRAPH_HEADER_KEYS = ("id", "index", "kind", "dynamo_graph", "compile_id", "timings")
STAGE_PARTS = ("fx", "post_grad", "loop_ir", "fused", "kernels", "wrapper", "autotune")
GRAPH_STAGES = ("fx", "post_grad")  # the stages drawn as graphs, each with an outline part
OUTLINE_FIELDS = ("name", "op", "target", "shape", "dtype", "module", "inputs")  # what a first drawing reads
CODED_FIELDS = ("op", "target", "shape", "dtype", "module")
_GRAPH_CONSUMED = set(GRAPH_HEADER_KEYS) | set(STAGE_PARTS) | {"not_fused", "loop_ir_bodies"}
HEAVY_KERNEL_KEYS = ("source", "ir")


def group_user_lines(graph: Mapping[str, Any]) -> dict[str, int]:
    """Fused group name -> how many distinct user lines its kernels compute (``kernels[].user_lines``)."""
    lines: dict[str, set[tuple[str, int]]] = {}
    for kernel in graph.get("kernels") or []:
        if kernel.get("group"):
            found = lines.setdefault(kernel["group"], set())
            found.update((str(line[0]), int(line[1])) for line in kernel.get("user_lines") or [])
    return {group: len(found) for group, found in lines.items()}


def _light_kernel(kernel: Mapping[str, Any]) -> dict[str, Any]:
    """A kernel's row in the kernel table; its heavy keys are not read (a lazy trace builds ``ir`` on read)."""
    out = {k: kernel[k] for k in kernel if k not in HEAVY_KERNEL_KEYS}
    if isinstance(kernel.get("source"), str):
        out["source_lines"] = len(kernel["source"].splitlines())
    return out


def _autotune(records: list[Any]) -> list[Any]:
    def finite(record: Mapping[str, Any]) -> Mapping[str, Any]:
        t = record.get("time_ms")
        return {**record, "time_ms": str(t)} if isinstance(t, float) and not math.isfinite(t) else record

    return [finite(r) for r in records]


# Encoded outlines of graphs that outlive one TraceParts (a compilation's lazily serialized graphs are
# shown again by every widget made for it): id(graph) -> {key: bytes}, dropped with the graph.
_OUTLINES: dict[int, dict[str, bytes]] = {}


def _outline_cache(graph: Any) -> dict[str, bytes] | None:
    """The outlines kept for ``graph`` while it lives; None for a graph that cannot be watched (a dict)."""
    if id(graph) not in _OUTLINES:
        try:
            weakref.finalize(graph, _OUTLINES.pop, id(graph), None)
        except TypeError:
            return None
        _OUTLINES[id(graph)] = {}
    return _OUTLINES[id(graph)]


class PartError(KeyError):
    """No such part in this trace."""


def _nodes(part: Any, keys: tuple[str, ...]) -> FxPart | PostGradPart:
    if not isinstance(part, Mapping):
        return {"code": "", "nodes": []}
    return {"code": part.get("code", ""), "nodes": [{k: n[k] for k in keys if k in n} for n in part.get("nodes", [])]}


def _coded(values: list[Any]) -> tuple[list[Any], list[int]] | None:
    """(table of distinct values, index of each value in it) when the values are strings, None or lists of
    ints and strings (a shape), else None: a node's op, target, dtype, module and shape repeat a lot."""
    keys = [tuple(v) if type(v) is list else v for v in values]
    try:
        codes: dict[Any, int] = {}
        column = [codes.setdefault(k, len(codes)) for k in keys]
    except TypeError:  # a list holding a list
        return None
    # 1, 1.0 and True are one key: a column whose distinct values are not all strings, None or tuples of
    # ints and strings stays as it is. (A shape holding a bool, which FX never records, would read as an
    # int here; the full part that follows the outline has it exact.)
    for key in codes:
        if not (key is None or type(key) is str or (type(key) is tuple and all(type(e) in (int, str) for e in key))):
            return None
    return [list(k) if type(k) is tuple else k for k in codes], column


def outline(part: Any) -> OutlinePart:
    """What the first drawing of a graph stage reads, as columns: ``{"count": n, "columns": {field:
    [value of node 0, ...]}, "tables": {field: [value, ...]}}`` for each of OUTLINE_FIELDS; a field with a
    table (most nodes share their op, target, dtype, shape and module) has indices into it in its column.
    ``args``, ``user_line`` and the links to other stages are only in the full part, which the view loads
    right behind. Columns cost one list per field to make and to parse, where a list of node objects
    costs an object per node.
    """
    nodes = part.get("nodes", []) if isinstance(part, Mapping) else []
    nodes = [n for n in nodes if isinstance(n, Mapping)] if isinstance(nodes, list) else []
    columns: dict[str, list[Any]] = {}
    tables: dict[str, list[Any]] = {}
    for field in OUTLINE_FIELDS:
        values = [n.get(field) for n in nodes]
        coded = _coded(values) if field in CODED_FIELDS else None
        if coded is None:
            columns[field] = values
        else:
            tables[field], columns[field] = coded
    return {"count": len(nodes), "columns": columns, "tables": tables}


def _counts(graph: Mapping[str, Any]) -> GraphCounts:
    counts = getattr(graph, "counts", None)
    if callable(counts):  # a lazily serialized graph knows its sizes without serializing
        return counts()
    return stage_counts(graph, TraceError)


def _dumps(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")


class TraceParts:
    """Parts of one trace (a dict, or a mapping that serializes its graphs lazily), made on request."""

    def __init__(self, trace: Any) -> None:
        self.trace = as_trace(trace)
        self.graphs = {str(g.get("id")): g for g in self.trace.get("graphs", [])}
        self._kernels: dict[str, dict[str, Any]] = {}  # graph id -> kernel id -> record, made on first use
        self._outlines: dict[str, dict[str, bytes]] = {}  # graph id -> encoded outlines, for dict graphs

    def kernel(self, gid: str, kernel_id: str) -> Mapping[str, Any] | None:
        """One kernel record of a graph, through an index built once (an export asks for every kernel)."""
        if gid not in self._kernels:
            self._kernels[gid] = {str(k.get("id")): k for k in self.graphs[gid].get("kernels") or []}
        return self._kernels[gid].get(kernel_id)

    def summary(self) -> TraceSummary:
        """The ``summary`` trait (compiler/model/contract.py ``TraceSummary``): what the first view needs."""
        out = {k: self.trace[k] for k in HEADER_KEYS if k in self.trace}
        out.setdefault("schema", TRACE_SCHEMA)
        out.setdefault("version", TRACE_VERSION)
        out.setdefault("meta", {})
        out["parts"] = self.top_keys()
        graphs = []
        for graph in self.graphs.values():
            head = {k: graph[k] for k in GRAPH_HEADER_KEYS if k in graph}
            head["counts"] = _counts(graph)
            head["parts"] = [k for k in graph if k not in _GRAPH_CONSUMED]
            graphs.append(head)
        out["graphs"] = graphs
        if isinstance(self.trace.get("dynamo"), Mapping):
            out["dynamo"] = dynamo_digest(self.trace["dynamo"])
        compile_time = compile_time_parts.digest(self.trace.get("compile_time"))
        if compile_time is not None:
            out["compile_time"] = compile_time
        if isinstance(self.trace.get(CULPRITS), list):
            out[CULPRITS] = self.trace[CULPRITS]
        exported = self.trace.get("export")
        if isinstance(exported, Mapping):  # an AOT compilation: its Export stage's button and count
            out["export"] = {"inputs": len(exported.get("inputs") or []),
                             "dynamic_dims": len(exported.get("range_constraints") or {})}
        return out

    def top_keys(self) -> list[str]:
        return [k for k in self.trace if k not in HEADER_KEYS and k not in ("graphs", CULPRITS)]

    def keys(self) -> Iterator[str]:
        """Every part key (the static export embeds them all)."""
        yield from self.top_keys()
        if "compile_time" in self.trace:
            yield from (compile_time_parts.CHART_KEY, compile_time_parts.CHROME_KEY)
        for gid, graph in self.graphs.items():
            for stage in STAGE_PARTS:
                yield f"{gid}/{stage}"
            yield f"{gid}/roofline"
            yield f"{gid}/fx_outline"  # the stage a view opens on; another graph stage falls back to its part
            yield f"{gid}/loop_ir_bodies"
            for kernel in graph.get("kernels") or []:
                yield f"{gid}/kernel/{kernel['id']}"
            yield from (f"{gid}/{k}" for k in graph if k not in _GRAPH_CONSUMED)

    def get(self, key: str) -> Any:
        """The part ``key``: what compiler/model/contract.py ``part_declaration(key)`` says it holds."""
        with collector_paused():
            return self._make(key)

    def _make(self, key: str) -> Any:
        if key in self.trace and key not in HEADER_KEYS and key not in ("graphs", CULPRITS):
            value = self.trace[key]  # a lazily built record (the compile-time report, profiles) becomes its JSON now
            if isinstance(value, Mapping) and not isinstance(value, dict):
                return dict(value)
            return list(value) if isinstance(value, Sequence) and not isinstance(value, (list, str)) else value
        derived = {compile_time_parts.CHART_KEY: compile_time_parts.chart,
                   compile_time_parts.CHROME_KEY: compile_time_parts.chrome_trace_text}.get(key)
        if derived is not None and "compile_time" in self.trace:
            try:
                return derived(self.trace["compile_time"])
            except ValueError as error:
                raise PartError(str(error)) from error
        gid, sep, rest = key.partition("/")
        graph = self.graphs.get(gid)
        if not sep or graph is None:
            raise PartError(f"no part {key!r} in this trace")
        if rest.startswith("kernel/"):
            kernel = self.kernel(gid, rest[len("kernel/"):])
            if kernel is None:
                raise PartError(f"no kernel {rest[len('kernel/'):]!r} in graph {gid}")
            return {k: unpacked(kernel[k], TraceError) if k == "ir" else kernel[k]
                    for k in HEAVY_KERNEL_KEYS if k in kernel}
        make = {
            "fx": lambda: _nodes(graph.get("fx"), FX_NODE_KEYS),
            "post_grad": lambda: _nodes(graph.get("post_grad"), PG_NODE_KEYS),
            "fx_outline": lambda: outline(graph.get("fx")),
            "post_grad_outline": lambda: outline(graph.get("post_grad")),
            "loop_ir": lambda: [{k: v for k, v in n.items() if k != "body"} for n in graph.get("loop_ir") or []],
            "loop_ir_bodies": lambda: (unpacked(graph["loop_ir_bodies"], TraceError).get("bodies") or {}
                                       if "loop_ir_bodies" in graph
                                       else {n["name"]: n.get("body", "") for n in graph.get("loop_ir") or []}),
            "fused": lambda: {"fused": graph.get("fused") or [], "not_fused": graph.get("not_fused") or [],
                              "user_lines": group_user_lines(graph)},
            "kernels": lambda: [_light_kernel(kernel) for kernel in graph.get("kernels") or []],
            "wrapper": lambda: unpacked(graph.get("wrapper"), TraceError) or {"source": "", "kernel_lines": {}},
            "autotune": lambda: _autotune(graph.get("autotune") or []),
            "roofline": lambda: roofline(self.trace, graph),
        }.get(rest)
        if make is not None:
            return make()
        if rest in graph and rest not in _GRAPH_CONSUMED:
            return graph[rest]
        raise PartError(f"no part {key!r} in this trace")

    def encoded(self, key: str) -> bytes:
        """The part as compact UTF-8 JSON (strict: no NaN). A graph's outline is encoded once per graph."""
        gid, _, rest = key.partition("/")
        if rest.endswith("_outline") and rest[: -len("_outline")] in GRAPH_STAGES and gid in self.graphs:
            cache = _outline_cache(self.graphs[gid])
            if cache is None:
                cache = self._outlines.setdefault(gid, {})
            if rest not in cache:
                cache[rest] = self._encode(key)
            return cache[rest]
        return self._encode(key)

    def _encode(self, key: str) -> bytes:
        if not gc.isenabled():  # an export pauses the collector once around every part
            return _dumps(self._make(key))
        with collector_paused():
            return _dumps(self._make(key))
