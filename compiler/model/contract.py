"""The trace contract (compiler/SCHEMA.md) as code: what crosses from the compiler to the views.

One module that both sides import, and that imports nothing but the standard library (not torch, not
sympy, not the rest of ``compiler``), so ``widgets`` can read it without the compiler: the schema name
and version of every file kind, the one check every reader runs, how packed parts are packed, and the
keys of every record the trace holds. Adding a field to a record means adding it here, writing it in
``compiler/io/trace.py`` and documenting it in SCHEMA.md; the unit tests say which one was missed.
"""

from __future__ import annotations

import base64
import contextlib
import gc
import json
import zlib
from collections.abc import Mapping
from typing import Any, Iterator

# --------------------------------------------------------------------------------- file kinds

TRACE_SCHEMA = "inductor-explorer/trace"  # one Compilation (Compilation.save)
TRACE_VERSION = 2
TRACESET_SCHEMA = "inductor-explorer/traceset"  # a multi-rank job (TraceSet.save)
TRACESET_VERSION = 1
SWEEP_SCHEMA = "inductor-explorer/sweep"  # a sweep's table and every point's trace (Sweep.save)
SWEEP_VERSION = 1

# schema name -> (the newest version this code reads and writes, what a file of it is, in words)
SCHEMAS: dict[str, tuple[int, str]] = {
    TRACE_SCHEMA: (TRACE_VERSION, "an inductor-explorer trace"),
    TRACESET_SCHEMA: (TRACESET_VERSION, "a saved TraceSet"),
    SWEEP_SCHEMA: (SWEEP_VERSION, "a saved sweep"),
}


class ContractError(ValueError):
    """Data that is not the file kind it was given as, or of a newer schema version than this code reads.

    ``compiler.TraceFormatError`` and ``widgets.TraceError`` derive from it, so each side raises its own
    error from the one check below."""


def check(data: Any, schema: str, origin: str, error: type[ContractError] = ContractError,
          missing_ok: bool = False) -> int:
    """The version of ``data``, a file of kind ``schema`` (a key of SCHEMAS) read from ``origin``; raises
    ``error`` saying what was wrong and what to do when ``data`` is not one, or is newer than this code.

    ``missing_ok``: a mapping without ``schema`` / ``version`` keys is taken as the current version (the
    views accept a bare dict built by hand)."""
    newest, what = SCHEMAS[schema]
    if not isinstance(data, Mapping):
        raise error(f"{origin} is not {what}: expected a JSON object with schema {schema!r}, "
                    f"got {type(data).__name__}")
    found = data.get("schema", schema if missing_ok else None)
    if found != schema:
        raise error(f"{origin} is not {what} (its schema is {found!r}, expected {schema!r}); "
                    f"open it with the reader of its own schema")
    version = data.get("version", newest if missing_ok else None)
    if not isinstance(version, int) or isinstance(version, bool):
        raise error(f"malformed {origin}: its 'version' should be an int, got {version!r}; "
                    f"the file was not written by inductor-explorer or was cut short")
    if version > newest:
        raise error(f"{origin} uses {schema} schema version {version}, newer than this inductor-explorer reads "
                    f"({newest}); upgrade inductor-explorer to open it")
    return version


# ------------------------------------------------------------------------------ packed parts
# SCHEMA.md, "Packed parts": a record's heaviest keys as one string, their JSON zlib-compressed (level 6)
# and base64-encoded. Kernel IR and wrapper texts are most of a large trace and compress about 8x.

KERNEL_IR_PACKED_KEYS = ("stages", "line_map")
WRAPPER_PACKED_KEYS = ("source", "kernel_lines", "fx")
LOOP_IR_BODIES_PACKED_KEYS = ("bodies",)  # graphs[].loop_ir_bodies: {"bodies": {loop-IR node name: body}}


def pack(value: Any) -> str:
    """``value``'s compact JSON, zlib-compressed and base64-encoded."""
    body = json.dumps(value, separators=(",", ":")).encode("utf-8")
    return base64.b64encode(zlib.compress(body, 6)).decode("ascii")


def unpack(text: str, error: type[ContractError] = ContractError) -> Any:
    """What ``pack`` made ``text`` from; ``error`` when it does not decompress."""
    try:
        return json.loads(zlib.decompress(base64.b64decode(text)))
    except (ValueError, TypeError, zlib.error) as exc:
        raise error(f"malformed trace: a packed part does not decompress ({exc})") from exc


def packed(record: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    """``record`` with ``keys`` moved into one string, ``packed`` (a record with none of them as it is)."""
    if not any(record.get(key) for key in keys):
        return record
    out = {k: v for k, v in record.items() if k not in keys}
    out["packed"] = pack({key: record[key] for key in keys if key in record})
    return out


def unpacked(record: Any, error: type[ContractError] = ContractError) -> Any:
    """``record`` with its ``packed`` keys back in place (anything without ``packed`` as it is)."""
    if not isinstance(record, Mapping) or "packed" not in record:
        return record
    return {**{k: v for k, v in record.items() if k != "packed"}, **unpack(record["packed"], error)}


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic garbage collector off while a trace is loaded or cut into parts.

    Both allocate hundreds of thousands of objects while millions (the trace) stay alive, and none of
    them forms a cycle: each full pass of the collector would scan all of them again for nothing (half
    the load time of a large trace, seconds for a part of a 100,000-node graph). Work that makes many
    parts (an export) pauses it once around all of them: switching it back on after each part would let
    the next allocations pay for the passes put off meanwhile."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


# ------------------------------------------------------------------------- the records' keys
# Every key each record of a trace holds, in the order they are written (SCHEMA.md documents each one).
# Keys in an OPTIONAL_* set are left out when empty.

TRACE_KEYS = ("schema", "version", "meta", "inputs", "outputs", "sources", "graphs", "profiles", "numerics",
              "counters", "dynamo", "origin", "export", "library_files", "compile_time", "notes")
OPTIONAL_TRACE_KEYS = frozenset({"dynamo", "origin", "export", "library_files", "compile_time", "notes"})
META_KEYS = ("function", "device", "device_name", "torch", "triton", "python", "created", "toggles",
             "inductor_overrides", "backward", "timings", "device_peaks")
OPTIONAL_META_KEYS = frozenset({"device_peaks"})  # only for a GPU compiler/model/datasheet.py lists
GRAPH_KEYS = ("id", "index", "kind", "dynamo_graph", "timings", "fx", "post_grad", "loop_ir", "fused", "not_fused",
              "kernels", "wrapper", "autotune", "features", "compile_id", "memory")
OPTIONAL_GRAPH_KEYS = frozenset({"features", "compile_id", "memory", "loop_ir_bodies"})
FX_STAGE_KEYS = ("code", "nodes")
FX_NODE_KEYS_ALL = ("name", "op", "target", "args", "shape", "dtype", "inputs", "users", "user_line", "stack",
                    "module", "fx", "post_grad", "loop_ir", "kernels", "subgraph")
OPTIONAL_FX_NODE_KEYS = frozenset({"subgraph"})
LOOP_IR_KEYS = ("name", "kind", "buffers", "buffer_nodes", "device", "dtype", "size", "stride", "ranges", "sizes",
                "indexing", "reads", "writes", "body", "origins", "extern_target", "group", "eliminated", "kernels",
                "inherited_origins")
OPTIONAL_LOOP_IR_KEYS = frozenset({"inherited_origins"})
FUSED_KEYS = ("name", "kind", "nodes", "origins", "kernels")
NOT_FUSED_KEYS = ("node1", "node2", "reason")
KERNEL_KEYS = ("id", "name", "language", "source", "group", "loop_ir", "post_grad_nodes", "fx_nodes", "user_lines",
               "line_nodes", "wrapper_lines", "meta", "cost", "provenance_note", "ir")
# a kernel's "cost": {"bytes", "flops"}, computed once by compiler/model/cost.py; absent in traces saved before it
KERNEL_COST_KEYS = ("bytes", "flops")
OPTIONAL_KERNEL_KEYS = frozenset({"provenance_note", "ir"})
WRAPPER_KEYS = ("source", "kernel_lines", "language", "fx")
OPTIONAL_WRAPPER_KEYS = frozenset({"language", "fx"})  # language: absent for "python"
AUTOTUNE_KEYS = ("kernel", "choice", "time_ms", "chosen", "source")
FEATURE_KEYS = ("system", "summary", "kernel", "lines", "nodes", "wrapper_lines", "detail")
NOTE_KEYS = ("kind", "source", "message")

# where each record sits in a trace (as SCHEMA.md names it) -> its keys
RECORDS: dict[str, tuple[str, ...]] = {
    "": TRACE_KEYS, "meta": META_KEYS, "graphs[]": GRAPH_KEYS, "graphs[].fx": FX_STAGE_KEYS,
    "graphs[].fx.nodes[]": FX_NODE_KEYS_ALL, "graphs[].loop_ir[]": LOOP_IR_KEYS, "graphs[].fused[]": FUSED_KEYS,
    "graphs[].not_fused[]": NOT_FUSED_KEYS, "graphs[].kernels[]": KERNEL_KEYS, "graphs[].wrapper": WRAPPER_KEYS,
    "graphs[].autotune[]": AUTOTUNE_KEYS, "graphs[].features[]": FEATURE_KEYS, "notes[]": NOTE_KEYS,
}

# ------------------------------------------------------------------------- what the views read
# Views never see the trace whole (widgets/parts.py cuts it into parts): these are the fields that
# reach the browser. Node ``users`` and ``stack`` do not: no view reads them.

STAGES = ("export", "dynamo", "fx", "post_grad", "loop_ir", "fused", "kernels", "wrapper", "memory", "autotune",
          "compile_time")
SELECTION_KINDS = ("fx", "post_grad", "loop_ir", "fused", "kernel", "kernel_line", "wrapper_line", "user_line")
FX_NODE_KEYS = ("name", "op", "target", "args", "shape", "dtype", "inputs", "user_line", "module", "post_grad",
                "kernels")
PG_NODE_KEYS = ("name", "op", "target", "args", "shape", "dtype", "inputs", "user_line", "module", "fx", "loop_ir",
                "kernels")


def stage_counts(graph: Mapping[str, Any], error: type[Exception]) -> dict[str, int]:
    """How big each stage of a graph's JSON is, as a summary shows it, without reading its nodes
    (``error``: what a wrapper whose packed part does not decompress raises)."""
    size = lambda value: len(value) if isinstance(value, list) else 0  # noqa: E731
    wrapper = unpacked(graph.get("wrapper") or {}, error)
    return {"fx": size((graph.get("fx") or {}).get("nodes")), "post_grad": size((graph.get("post_grad") or {}).get("nodes")),
            "loop_ir": size(graph.get("loop_ir")), "fused": size(graph.get("fused")),
            "kernels": size(graph.get("kernels")),
            "externs": sum(1 for k in graph.get("kernels") or [] if k.get("language") == "extern"),
            "wrapper": len(str(wrapper.get("source", "")).splitlines()) if wrapper.get("source") else 0,
            "memory": size((graph.get("memory") or {}).get("steps")),
            "autotune": size(graph.get("autotune"))}

