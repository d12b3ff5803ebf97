"""The few facts of a trace's Dynamo stage that the first view shows before the stage is opened.

The graph picker marks the graphs that run after a graph break, and the stage button shows how
many guards and breaks there are; both come with the summary, so the (possibly large) ``dynamo``
part is fetched only when the Dynamo stage itself is opened.
"""

from __future__ import annotations

from typing import Any, Mapping

from compiler.model.contract import DynamoDigest


def _where(user_line: Any) -> str:
    if isinstance(user_line, (list, tuple)) and len(user_line) >= 2:
        return f"{str(user_line[0]).rsplit('/', 1)[-1]}:{user_line[1]}"
    return "?"


def dynamo_digest(dynamo: Mapping[str, Any]) -> DynamoDigest:
    """Counts per section, graph id -> why it starts after a break (``graphs_after`` of each break), and
    the frames Dynamo skipped ("function: why"), which ran eagerly."""
    guards = dynamo.get("guards") or {}
    breaks = [b for b in dynamo.get("graph_breaks") or [] if isinstance(b, Mapping)]
    after_break: dict[str, str] = {}
    for graph_break in breaks:
        for gid in graph_break.get("graphs_after") or []:
            after_break.setdefault(str(gid), f"{graph_break.get('reason', 'graph break')} at {_where(graph_break.get('user_line'))}")
    return {
        "frames": len(dynamo.get("frames") or []),
        "skipped_frames": [f"{f.get('function') or '?'}: {f['skipped']}" for f in dynamo.get("frames") or []
                           if isinstance(f, Mapping) and f.get("skipped")],
        "guards": sum(len(group) for group in guards.values() if isinstance(group, list)) if isinstance(guards, Mapping) else 0,
        "graph_breaks": len(breaks),
        "symbols": len(dynamo.get("symbols") or []),
        "recompiles": len(dynamo.get("recompiles") or []),
        "after_break": after_break,
    }
