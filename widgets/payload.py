"""Turn a trace (compiler/SCHEMA.md) into the payload the front end reads.

The payload is the trace minus what no view shows (node `users` and `stack`,
unknown keys), so it is smaller to send to the browser and to embed in HTML.
It stays a plain JSON dict; building one for a 2,000-node graph takes a few
milliseconds, so it is rebuilt on every display rather than cached.
"""

from __future__ import annotations

from typing import Any, Mapping

SCHEMA_NAME = "inductor-explorer/trace"
SCHEMA_VERSION = 2

STAGES = ("fx", "post_grad", "loop_ir", "fused", "kernels", "wrapper", "autotune")
SELECTION_KINDS = ("fx", "post_grad", "loop_ir", "fused", "kernel", "kernel_line", "wrapper_line", "user_line")

_TOP_KEYS = ("schema", "version", "meta", "inputs", "outputs", "sources")
_GRAPH_KEYS = ("id", "index", "kind", "dynamo_graph", "timings", "loop_ir", "fused", "not_fused", "kernels", "wrapper", "autotune")
_FX_NODE_KEYS = ("name", "op", "target", "args", "shape", "dtype", "inputs", "user_line", "post_grad", "kernels")
_PG_NODE_KEYS = ("name", "op", "target", "args", "shape", "dtype", "inputs", "user_line", "fx", "loop_ir", "kernels")


class TraceError(ValueError):
    """The object given is not a trace this version of the widgets can show."""


def _as_trace(trace: Any) -> Mapping[str, Any]:
    if hasattr(trace, "to_json") and not isinstance(trace, Mapping):
        trace = trace.to_json()
    if not isinstance(trace, Mapping):
        raise TraceError(f"A trace dict (Compilation.to_json()) or an object with to_json() is required, not {type(trace).__name__}")
    schema = trace.get("schema", SCHEMA_NAME)
    if schema != SCHEMA_NAME:
        raise TraceError(f"Expected a trace with schema {SCHEMA_NAME!r}, got {schema!r}")
    version = trace.get("version", SCHEMA_VERSION)
    if not isinstance(version, int) or version > SCHEMA_VERSION:
        raise TraceError(
            f"Trace schema version {version!r} is newer than this viewer reads (version {SCHEMA_VERSION}); "
            "upgrade inductor-explorer to show it"
        )
    if not isinstance(trace.get("graphs", []), list):
        raise TraceError("Trace field 'graphs' must be a list")
    return trace


def _pick(d: Mapping[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    return {k: d[k] for k in keys if k in d}


def _fx_part(part: Any, keys: tuple[str, ...]) -> dict[str, Any]:
    if not isinstance(part, Mapping):
        return {"code": "", "nodes": []}
    return {"code": part.get("code", ""), "nodes": [_pick(n, keys) for n in part.get("nodes", [])]}


def payload_for(trace: Any) -> dict[str, Any]:
    """The dict ExplorerWidget and render_html send to the browser.

    Accepts a trace dict, a Compilation (anything with `to_json()`), or a payload
    (payloads are traces, so this is idempotent). Raises TraceError for a
    newer schema version or something that is not a trace.
    """
    trace = _as_trace(trace)
    out = _pick(trace, _TOP_KEYS)
    out.setdefault("schema", SCHEMA_NAME)
    out.setdefault("version", SCHEMA_VERSION)
    out.setdefault("meta", {})
    out.setdefault("sources", {})
    graphs = []
    for graph in trace.get("graphs", []):
        g = _pick(graph, _GRAPH_KEYS)
        g["fx"] = _fx_part(graph.get("fx"), _FX_NODE_KEYS)
        g["post_grad"] = _fx_part(graph.get("post_grad"), _PG_NODE_KEYS)
        graphs.append(g)
    out["graphs"] = graphs
    return out


def graph_ids(payload: Mapping[str, Any]) -> list[str]:
    return [str(g.get("id")) for g in payload.get("graphs", [])]
