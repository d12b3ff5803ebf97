"""``Diff.to_json()``: a diff as the explorer widget's ``diff`` trait and a sweep page's embedded diffs read it,
declared in compiler/model/contract.py (``DiffPayload``; compiler/SCHEMA.md does not cover it: a diff is made
on demand, never saved in a trace)."""

from __future__ import annotations

import math
from dataclasses import asdict
from typing import Any

from ..model import slots
from ..model.contract import DiffPayload
from ..model.diff import Diff


@slots.diff_json.fill
def to_json(d: Diff) -> DiffPayload:
    return _strict({
        "a": d.a, "b": d.b, "torch": list(d.torch), "run_ms": list(d.run_ms), "summary": d.summary,
        "toggles": [{"name": k, "a": a, "b": b} for k, (a, b) in d.toggles.items()],
        "graphs": [{**asdict(g), "changed": g.changed} for g in d.graphs],
        "timings": [{"stage": k, "a": a, "b": b} for k, (a, b) in d.timings.items()],
        "outputs": asdict(d.outputs),
    })


def _strict(value: Any) -> Any:
    """Strict JSON for the widget: infinite or NaN errors become strings."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {k: _strict(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_strict(v) for v in value]
    return value
