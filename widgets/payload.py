"""What the front end accepts as a trace (compiler/SCHEMA.md): the check every view runs first.

The contract itself (schema names and versions, the fields views read, packed parts) is
compiler/model/contract.py, which imports nothing else of the compiler: widgets read it and nothing
more of ``compiler``. Views never see the trace whole: widgets/parts.py cuts it into parts loaded on
demand.
"""

from __future__ import annotations

from typing import Any, Mapping

from compiler.model.contract import TRACE_SCHEMA, ContractError, check


class TraceError(ContractError):
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
    check(trace, TRACE_SCHEMA, "the trace given", TraceError, missing_ok=True)
    if not isinstance(trace.get("graphs", []), list):
        raise TraceError("Trace field 'graphs' must be a list")
    return trace
