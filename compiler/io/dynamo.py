"""DynamoStage <-> the trace's optional ``dynamo`` key (SCHEMA.md, "Dynamo stage").

Guards are stored grouped by kind (what the Dynamo view lists), graph breaks with the graphs on
either side, symbols as a table, Dynamo's metrics per frame compile. Plain JSON; loading runs no code.
"""

from __future__ import annotations

from typing import Any

from ..model.dynamo import (DynamoFrame, DynamoStage, FrameMetrics, GraphBreak, Guard, Recompile, ShapeGuard,
                            ShapeSymbol, UserLine)


def _line(value: UserLine | None) -> list[Any] | None:
    return [value[0], value[1]] if value else None


def _user_line(value: Any) -> UserLine | None:
    return (str(value[0]), int(value[1])) if isinstance(value, (list, tuple)) and len(value) == 2 else None


def to_json(stage: DynamoStage) -> dict[str, Any]:
    return {
        "frames": [{"compile_id": f.compile_id, "function": f.function, "filename": f.filename, "line": f.line,
                    "graphs": list(f.graphs), **({"skipped": f.skipped} if f.skipped else {})} for f in stage.frames],
        "guards": {kind: [{"code": g.code, "source": g.source, "user_line": _line(g.user_line),
                           "user_code": g.user_code, "compile_id": g.compile_id} for g in guards]
                   for kind, guards in stage.guards_by_kind().items()},
        "graph_breaks": [{"reason": b.reason, "explanation": b.explanation, "hints": b.hints,
                          "user_line": _line(b.user_line), "stack": [list(f) for f in b.stack],
                          "compile_id": b.compile_id, "resume": b.resume, "graphs_before": b.graphs_before,
                          "graphs_after": b.graphs_after, **({"frame_skipped": b.frame_skipped} if b.frame_skipped else {})}
                         for b in stage.graph_breaks],
        "symbols": [{"name": s.name, "source": s.source, "value": s.value, "initial_range": s.initial_range,
                     "range": s.range, "unbacked": s.unbacked, "specialized": s.specialized,
                     "specialization_reason": s.specialization_reason,
                     "guards": [{"expr": g.expr, "user_line": _line(g.user_line)} for g in s.guards],
                     "user_line": _line(s.user_line), "compile_id": s.compile_id} for s in stage.symbols],
        "recompiles": [{"compile_id": r.compile_id, "reasons": r.reasons, "function": r.function, "graphs": r.graphs}
                       for r in stage.recompiles],
        "compile_metrics": [{"compile_id": m.compile_id, "kind": m.kind, "values": m.values}
                            for m in stage.compile_metrics],
    }


def from_json(data: Any) -> DynamoStage:
    """The stage from a trace's ``dynamo`` key; an absent or empty key gives an empty stage."""
    if not isinstance(data, dict):
        return DynamoStage()
    guards = [Guard(kind=str(kind), code=str(g.get("code", "")), source=g.get("source"),
                    user_line=_user_line(g.get("user_line")), user_code=str(g.get("user_code", "")),
                    compile_id=g.get("compile_id"))
              for kind, group in (data.get("guards") or {}).items() for g in group]
    return DynamoStage(
        frames=[DynamoFrame(str(f["compile_id"]), str(f.get("function", "")), f.get("filename"), f.get("line"),
                            tuple(f.get("graphs", [])), str(f.get("skipped") or "")) for f in data.get("frames", [])],
        guards=guards,
        graph_breaks=[GraphBreak(reason=str(b.get("reason", "")), explanation=str(b.get("explanation", "")),
                                 hints=[str(h) for h in b.get("hints", [])], user_line=_user_line(b.get("user_line")),
                                 stack=[(str(f[0]), int(f[1]), str(f[2])) for f in b.get("stack", [])],
                                 compile_id=b.get("compile_id"), resume=b.get("resume"),
                                 graphs_before=list(b.get("graphs_before", [])),
                                 graphs_after=list(b.get("graphs_after", [])),
                                 frame_skipped=str(b.get("frame_skipped") or "")) for b in data.get("graph_breaks", [])],
        symbols=[ShapeSymbol(name=str(s["name"]), source=s.get("source"), value=s.get("value"),
                             initial_range=str(s.get("initial_range", "")), range=str(s.get("range", "")),
                             unbacked=bool(s.get("unbacked", False)), specialized=s.get("specialized"),
                             specialization_reason=str(s.get("specialization_reason", "")),
                             guards=[ShapeGuard(str(g["expr"]), _user_line(g.get("user_line"))) for g in s.get("guards", [])],
                             user_line=_user_line(s.get("user_line")), compile_id=s.get("compile_id"))
                 for s in data.get("symbols", [])],
        recompiles=[Recompile(str(r["compile_id"]), [str(x) for x in r.get("reasons", [])], str(r.get("function", "")),
                              list(r.get("graphs", []))) for r in data.get("recompiles", [])],
        compile_metrics=[FrameMetrics(str(m["compile_id"]), str(m.get("kind", "frame")), dict(m.get("values") or {}))
                         for m in data.get("compile_metrics", [])],
    )
