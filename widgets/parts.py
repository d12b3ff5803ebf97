"""A trace cut into the parts the views load one at a time.

The first view needs a summary (header, graph list, stage counts) and the graph on screen; the rest
comes when it is opened: a stage's data when its tab is clicked, a kernel's source (and IR) when the
kernel is shown. The live widget serves parts over custom messages (binary buffers), the static HTML
embeds them compressed and decodes them on demand: one path for both.

Part keys (``g0`` is a graph id):

- ``sources`` and every other top-level key beyond the header (``profiles``, ``numerics``, ``dynamo``...)
- ``g0/fx``, ``g0/post_grad``: ``{"code", "nodes"}`` (nodes trimmed to what views read)
- ``g0/loop_ir`` (without bodies) and ``g0/loop_ir_bodies`` (``{name: body}``)
- ``g0/fused``: ``{"fused", "not_fused"}``
- ``g0/kernels``: kernel records without their heavy fields, plus ``source_lines`` (the source's
  line count, a column of the kernels table); ``g0/kernel/<id>``: those fields (``source``, ``ir``)
- ``g0/wrapper``, ``g0/autotune`` (a failed choice's infinite ``time_ms`` as ``"inf"``: parts are
  strict JSON), and ``g0/<key>`` for any other key a graph carries (``memory``...)
"""

from __future__ import annotations

import base64
import json
import math
import zlib
from typing import Any, Iterator, Mapping

from .dynamo_digest import dynamo_digest
from .payload import FX_NODE_KEYS, PG_NODE_KEYS, SCHEMA_NAME, SCHEMA_VERSION, as_trace

HEADER_KEYS = ("schema", "version", "meta", "inputs", "outputs")
GRAPH_HEADER_KEYS = ("id", "index", "kind", "dynamo_graph", "compile_id", "timings")
STAGE_PARTS = ("fx", "post_grad", "loop_ir", "fused", "kernels", "wrapper", "autotune")
_GRAPH_CONSUMED = set(GRAPH_HEADER_KEYS) | set(STAGE_PARTS) | {"not_fused"}
HEAVY_KERNEL_KEYS = ("source", "ir")


def _light_kernel(kernel: Mapping[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in kernel.items() if k not in HEAVY_KERNEL_KEYS}
    if isinstance(kernel.get("source"), str):
        out["source_lines"] = len(kernel["source"].splitlines())
    return out


def _autotune(records: list[Any]) -> list[Any]:
    def finite(record: Mapping[str, Any]) -> Mapping[str, Any]:
        t = record.get("time_ms")
        return {**record, "time_ms": str(t)} if isinstance(t, float) and not math.isfinite(t) else record

    return [finite(r) for r in records]


def _unpacked(record: Any) -> Any:
    """A part as views read it: a saved trace packs a kernel's IR texts (``ir.packed``) and a graph's
    wrapper (``wrapper.packed``) as zlib-compressed JSON in base64 (compiler/SCHEMA.md, "Packed parts")."""
    if not isinstance(record, Mapping) or "packed" not in record:
        return record
    body = json.loads(zlib.decompress(base64.b64decode(record["packed"])))
    return {**{k: v for k, v in record.items() if k != "packed"}, **body}


class PartError(KeyError):
    """No such part in this trace."""


def _nodes(part: Any, keys: tuple[str, ...]) -> dict[str, Any]:
    if not isinstance(part, Mapping):
        return {"code": "", "nodes": []}
    return {"code": part.get("code", ""), "nodes": [{k: n[k] for k in keys if k in n} for n in part.get("nodes", [])]}


def _counts(graph: Mapping[str, Any]) -> dict[str, int]:
    counts = getattr(graph, "counts", None)
    if callable(counts):  # a lazily serialized graph knows its sizes without serializing
        return counts()
    size = lambda value: len(value) if isinstance(value, list) else 0  # noqa: E731
    wrapper = _unpacked(graph.get("wrapper") or {})
    return {"fx": size((graph.get("fx") or {}).get("nodes")), "post_grad": size((graph.get("post_grad") or {}).get("nodes")),
            "loop_ir": size(graph.get("loop_ir")), "fused": size(graph.get("fused")),
            "kernels": size(graph.get("kernels")),
            "externs": sum(1 for k in graph.get("kernels") or [] if k.get("language") == "extern"),
            "wrapper": len(str(wrapper.get("source", "")).splitlines()) if wrapper.get("source") else 0,
            "memory": size((graph.get("memory") or {}).get("steps")),
            "autotune": size(graph.get("autotune"))}


class TraceParts:
    """Parts of one trace (a dict, or a mapping that serializes its graphs lazily), made on request."""

    def __init__(self, trace: Any) -> None:
        self.trace = as_trace(trace)
        self.graphs = {str(g.get("id")): g for g in self.trace.get("graphs", [])}
        self._kernels: dict[str, dict[str, Any]] = {}  # graph id -> kernel id -> record, made on first use

    def kernel(self, gid: str, kernel_id: str) -> Mapping[str, Any] | None:
        """One kernel record of a graph, through an index built once (an export asks for every kernel)."""
        if gid not in self._kernels:
            self._kernels[gid] = {str(k.get("id")): k for k in self.graphs[gid].get("kernels") or []}
        return self._kernels[gid].get(kernel_id)

    def summary(self) -> dict[str, Any]:
        out = {k: self.trace[k] for k in HEADER_KEYS if k in self.trace}
        out.setdefault("schema", SCHEMA_NAME)
        out.setdefault("version", SCHEMA_VERSION)
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
        return out

    def top_keys(self) -> list[str]:
        return [k for k in self.trace if k not in HEADER_KEYS and k != "graphs"]

    def keys(self) -> Iterator[str]:
        """Every part key (the static export embeds them all)."""
        yield from self.top_keys()
        for gid, graph in self.graphs.items():
            for stage in STAGE_PARTS:
                yield f"{gid}/{stage}"
            yield f"{gid}/loop_ir_bodies"
            for kernel in graph.get("kernels") or []:
                yield f"{gid}/kernel/{kernel['id']}"
            yield from (f"{gid}/{k}" for k in graph if k not in _GRAPH_CONSUMED)

    def get(self, key: str) -> Any:
        if key in self.trace and key not in HEADER_KEYS and key != "graphs":
            return self.trace[key]
        gid, sep, rest = key.partition("/")
        graph = self.graphs.get(gid)
        if not sep or graph is None:
            raise PartError(f"no part {key!r} in this trace")
        if rest.startswith("kernel/"):
            kernel = self.kernel(gid, rest[len("kernel/"):])
            if kernel is None:
                raise PartError(f"no kernel {rest[len('kernel/'):]!r} in graph {gid}")
            return {k: _unpacked(kernel[k]) if k == "ir" else kernel[k] for k in HEAVY_KERNEL_KEYS if k in kernel}
        make = {
            "fx": lambda: _nodes(graph.get("fx"), FX_NODE_KEYS),
            "post_grad": lambda: _nodes(graph.get("post_grad"), PG_NODE_KEYS),
            "loop_ir": lambda: [{k: v for k, v in n.items() if k != "body"} for n in graph.get("loop_ir") or []],
            "loop_ir_bodies": lambda: {n["name"]: n.get("body", "") for n in graph.get("loop_ir") or []},
            "fused": lambda: {"fused": graph.get("fused") or [], "not_fused": graph.get("not_fused") or []},
            "kernels": lambda: [_light_kernel(kernel) for kernel in graph.get("kernels") or []],
            "wrapper": lambda: _unpacked(graph.get("wrapper")) or {"source": "", "kernel_lines": {}},
            "autotune": lambda: _autotune(graph.get("autotune") or []),
        }.get(rest)
        if make is not None:
            return make()
        if rest in graph and rest not in _GRAPH_CONSUMED:
            return graph[rest]
        raise PartError(f"no part {key!r} in this trace")

    def encoded(self, key: str) -> bytes:
        """The part as compact UTF-8 JSON (strict: no NaN)."""
        return json.dumps(self.get(key), ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")
