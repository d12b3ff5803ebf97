"""What the front end reads of a trace (compiler/SCHEMA.md): checks, and the fields views show.

Views never see the trace whole: widgets/parts.py cuts it into parts loaded on demand. This module
says which traces can be shown and which node fields reach the browser (node ``users`` and ``stack``
do not: no view reads them).
"""

from __future__ import annotations

from typing import Any, Mapping

SCHEMA_NAME = "inductor-explorer/trace"
SCHEMA_VERSION = 2

STAGES = ("dynamo", "fx", "post_grad", "loop_ir", "fused", "kernels", "wrapper", "memory", "autotune",
          "compile_time")
SELECTION_KINDS = ("fx", "post_grad", "loop_ir", "fused", "kernel", "kernel_line", "wrapper_line", "user_line")

FX_NODE_KEYS = ("name", "op", "target", "args", "shape", "dtype", "inputs", "user_line", "module", "post_grad",
                "kernels")
PG_NODE_KEYS = ("name", "op", "target", "args", "shape", "dtype", "inputs", "user_line", "module", "fx", "loop_ir",
                "kernels")


class TraceError(ValueError):
    """The object given is not a trace this version of the widgets can show."""


def as_trace(trace: Any) -> Mapping[str, Any]:
    """The trace mapping of ``trace``: a dict, or an object with ``trace_view()`` / ``to_json()``."""
    if not isinstance(trace, Mapping):
        if hasattr(trace, "trace_view"):
            trace = trace.trace_view()
        elif hasattr(trace, "to_json"):
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
