"""g.cudagraphs and c.cudagraph_times <-> their typed records (compiler/model/contract.py, SCHEMA.md)."""

from __future__ import annotations

from typing import Any

from ..model.contract import (CudaGraphEventRecord, CudaGraphPartitionRecord, CudaGraphSkipRecord, CudaGraphsRecord,
                              CudaGraphTimeRecord, PartitionReasonRecord)
from ..model.cudagraphs import (CudaGraphEvent, CudaGraphPartition, CudaGraphSkip, CudaGraphTime, EventKind,
                                GraphCudaGraphs, PartitionReason, SkipKind)
from ..model.records import json_float


def _line(line: tuple[str, int] | None) -> list[Any] | None:
    return [line[0], line[1]] if line else None


def _load_line(value: Any) -> tuple[str, int] | None:
    return (str(value[0]), int(value[1])) if value else None


def _reason(r: PartitionReason) -> PartitionReasonRecord:
    return {"node": r.node, "reason": r.reason, "op": r.op, "post_grad": r.post_grad, "kernels": list(r.kernels),
            "line": _line(r.line)}


def _partition(p: CudaGraphPartition, replays: bool) -> CudaGraphPartitionRecord:
    return {"index": p.index, "captured": p.captured, "replays": replays, "function": p.function, "nodes": list(p.nodes),
            "kernels": list(p.kernels), "launches": list(p.launches), "post_grad_nodes": list(p.post_grad_nodes),
            "reasons": [_reason(r) for r in p.reasons]}


def _skip(s: CudaGraphSkip) -> CudaGraphSkipRecord:
    return {"kind": s.kind.value, "message": s.message, "when": s.when, "node": s.node, "inputs": list(s.inputs),
            "kernels": list(s.kernels), "line": _line(s.line), "partition": s.partition}


def _event(e: CudaGraphEvent) -> CudaGraphEventRecord:
    return {"kind": e.kind.value, "partition": e.partition, "count": e.count, "cuda_graph": e.cuda_graph,
            "reason": e.reason, "pool_bytes": e.pool_bytes, "run": e.run}


def to_json(g: GraphCudaGraphs, events: bool = True) -> CudaGraphsRecord:
    """``events=False``: what the compile decided only (the warm-capture store keeps no run's events, nor the
    skip the tree decided at a run: the next capture's run decides it again)."""
    skip = g.skip if g.skip is not None and (events or g.skip.when == "compile") else None
    kept = GraphCudaGraphs(g.device, g.partitions, skip)  # what the record says, for its derived fields
    return {"device": g.device, "state": kept.state.value,
            "partitions": [_partition(p, kept.replays(p)) for p in g.partitions],
            "skip": _skip(skip) if skip is not None else None,
            "events": [_event(e) for e in g.events] if events else [],
            "user_inputs": dict(g.user_inputs), "notes": list(g.notes)}


def from_json(data: Any) -> GraphCudaGraphs | None:
    if not data:
        return None
    skip = data.get("skip")
    return GraphCudaGraphs(
        device=str(data.get("device", "")),
        partitions=[CudaGraphPartition(
            index=int(p["index"]), captured=bool(p["captured"]), function=p.get("function"),
            nodes=list(p.get("nodes", [])), kernels=list(p.get("kernels", [])), launches=list(p.get("launches", [])),
            post_grad_nodes=list(p.get("post_grad_nodes", [])),
            reasons=[PartitionReason(node=str(r["node"]), reason=str(r["reason"]), op=str(r.get("op", "")),
                                     post_grad=str(r.get("post_grad", "")), kernels=tuple(r.get("kernels", [])),
                                     line=_load_line(r.get("line"))) for r in p.get("reasons", [])],
        ) for p in data.get("partitions", [])],
        skip=CudaGraphSkip(kind=_enum(SkipKind, skip.get("kind"), SkipKind.OTHER), message=str(skip.get("message", "")),
                           when=str(skip.get("when", "compile")), node=skip.get("node"),
                           inputs=list(skip.get("inputs", [])), kernels=list(skip.get("kernels", [])),
                           line=_load_line(skip.get("line")), partition=skip.get("partition")) if skip else None,
        events=[CudaGraphEvent(kind=_enum(EventKind, e.get("kind"), EventKind.EAGER), partition=e.get("partition"),
                               count=int(e.get("count", 1)), cuda_graph=e.get("cuda_graph"),
                               reason=str(e.get("reason", "")), pool_bytes=e.get("pool_bytes"),
                               run=str(e.get("run", ""))) for e in data.get("events", [])],
        user_inputs={str(k): int(v) for k, v in (data.get("user_inputs") or {}).items()},
        notes=[str(n) for n in data.get("notes", [])],
    )


def _enum(cls: Any, value: Any, default: Any) -> Any:
    """A tag read back; one this version does not know (a newer writer's) reads as ``default``."""
    try:
        return cls(value)
    except ValueError:
        return default


def time_to_json(t: CudaGraphTime) -> CudaGraphTimeRecord:
    return {"with_ms": json_float(t.with_ms), "without_ms": json_float(t.without_ms),  # type: ignore[typeddict-item]
            "saved_ms": json_float(t.saved_ms), "calls": t.calls, "created": t.created}  # type: ignore[typeddict-item]


def time_from_json(data: Any) -> CudaGraphTime:
    return CudaGraphTime(with_ms=float(data["with_ms"]), without_ms=float(data["without_ms"]),
                         calls=int(data.get("calls", 0)), created=str(data.get("created", "")))
