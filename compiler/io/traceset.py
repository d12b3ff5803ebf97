"""TraceSet JSON (schema ``inductor-explorer/traceset``): every rank's summary and compilations."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from ..model import slots
from ..model.contract import TRACESET_SCHEMA, TRACESET_VERSION, RankSummaryRecord, check
from ..model.errors import TraceFormatError
from ..model.traceset import CompileSummary, Divergence, RankSummary, RankTrace, TraceSet
from .compile_time import from_json as compile_time_from_json
from .compile_time import to_json as compile_time_to_json
from .trace import from_json as compilation_from_json


@slots.rank_summary_json.fill
def summary_to_json(s: RankSummary) -> RankSummaryRecord:
    return {**asdict(s), "seconds": s.seconds, "graphs": sum(1 for c in s.compiles if c.graph),
            "graph_break_count": len(s.graph_breaks), "recompile_count": len(s.recompiles)}


def summary_from_json(data: dict[str, Any]) -> RankSummary:
    return RankSummary(rank=str(data["rank"]), log=str(data.get("log", "")), torch=data.get("torch"),
                       compiles=[CompileSummary(**{k: c[k] for k in CompileSummary.__dataclass_fields__ if k in c})
                                 for c in data.get("compiles", [])],
                       problems=[str(p) for p in data.get("problems", [])])


@slots.traceset_json.fill
def to_json(ts: TraceSet) -> dict[str, Any]:
    return {
        "schema": TRACESET_SCHEMA, "version": TRACESET_VERSION, "path": ts.path, "problems": ts.problems,
        "divergence": [asdict(d) for d in ts.divergence],
        "ranks": [{"summary": summary_to_json(r.summary),
                   "compilations": {cid: r[cid].to_json() for cid in r.compile_ids},  # one in memory at a time
                   **({"compile_time": compile_time_to_json(r.compile_time)} if r.compile_time is not None else {})}
                  for r in ts.ranks.values()],
    }


def from_json(data: Any, origin: str = "traceset") -> TraceSet:
    """A saved TraceSet (``TraceSet.save``): JSON only, nothing evaluated."""
    check(data, TRACESET_SCHEMA, origin, TraceFormatError)
    ranks: dict[str, RankTrace] = {}
    try:
        for entry in data.get("ranks", []):
            summary = summary_from_json(entry["summary"])
            compilations = {str(cid): compilation_from_json(c, f"{origin} rank {summary.rank} {cid}")
                            for cid, c in (entry.get("compilations") or {}).items()}
            ranks[summary.rank] = RankTrace(summary, compilations=compilations,
                                            compile_time=compile_time_from_json(entry.get("compile_time")))
        found = [Divergence(str(d["kind"]), str(d["summary"]), {str(k): str(v) for k, v in d["ranks"].items()},
                            d.get("compile_id")) for d in data.get("divergence", [])]
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise TraceFormatError(f"malformed TraceSet {origin}: {type(exc).__name__}: {exc}") from exc
    return TraceSet(str(data.get("path", origin)), ranks, found, [str(p) for p in data.get("problems", [])])

