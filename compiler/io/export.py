"""The export stage of an AOT compilation as JSON (the trace's optional ``export`` key, SCHEMA.md)."""

from __future__ import annotations

from typing import Any

from ..model.export import ExportStage


def to_json(stage: ExportStage) -> dict[str, Any]:
    return {"graph": stage.graph, "inputs": stage.inputs, "outputs": stage.outputs,
            "range_constraints": stage.range_constraints, "dynamic_shapes": stage.dynamic_shapes,
            "strict": stage.strict, "package_path": stage.package_path}


def from_json(data: Any) -> ExportStage | None:
    if not isinstance(data, dict):
        return None
    return ExportStage(graph=str(data.get("graph", "")), inputs=list(data.get("inputs") or []),
                       outputs=list(data.get("outputs") or []),
                       range_constraints={str(k): list(v) for k, v in (data.get("range_constraints") or {}).items()},
                       dynamic_shapes=str(data.get("dynamic_shapes", "")), strict=bool(data.get("strict", False)),
                       package_path=str(data.get("package_path", "")))
