"""The comparison a "what if" in the fused view shows: one ``c.what_if(...)`` result as plain JSON.

The widget never holds Python objects, so the answer to an "unfuse" press is cut down here to what the
panel beside the group draws (compiler/model/contract.py ``WhatIfComparison``): the verdict, one row per
kernel pair of the edited graph (paired by the FX nodes they compute, as ``explorer.diff`` pairs them) with
each side's bytes and, once measured, time, and the totals side by side. Read by duck typing (``WhatIf`` of compiler/model/what_if.py): widgets import
nothing of the compiler beyond its contract. Numbers stay numbers; the browser formats them.
"""

from __future__ import annotations

from typing import Any

from compiler.model.contract import WhatIfComparison, WhatIfKernelRow, WhatIfRefusal, WhatIfSideTotals


def _side_totals(side: Any) -> WhatIfSideTotals:
    return {
        "kernels": len(side.kernels),
        "bytes": side.bytes,
        "peak_bytes": side.peak_bytes,
        "ms": side.total_ms,
        "numerics_ok": side.numerics_ok,
        "max_rel": side.max_rel,
    }


def _kernel_rows(w: Any) -> list[WhatIfKernelRow]:
    """One row per kernel pair of the edited graph: status, each side's kernel, bytes and ms, the nodes."""
    return [{
        "status": change.status,
        "before": change.a or "", "before_bytes": a.bytes if a else None, "before_ms": a.ms if a else None,
        "after": change.b or "", "after_bytes": b.bytes if b else None, "after_ms": b.ms if b else None,
        "nodes": list(change.nodes),
    } for change, a, b in w.kernel_pairs()]


def what_if_payload(w: Any, group: str) -> WhatIfComparison:
    """What the fused view draws beside ``group`` for the WhatIf ``w`` (``c.what_if(unfuse=group)``)."""
    before, after = w.sides
    return {
        "group": group,
        "graph": w.graph,
        "label": w.edit.label,
        "verdict": w.verdict,
        "note": w.edit.note,
        "measured": bool(w.measured),
        "kernels": _kernel_rows(w),
        "totals": {"before": _side_totals(before), "after": _side_totals(after)},
    }


def what_if_error(error: BaseException, group: str) -> WhatIfRefusal:
    """The message shown instead of a comparison: a refused edit (WhatIfError, a ValueError) says why in its
    own words; anything else that failed names its type, since it is not a refusal but a failure."""
    message = str(error) if isinstance(error, ValueError) else f"{type(error).__name__}: {error}"
    return {"group": group, "error": message}
