"""The parts of the Compile time stage, made from the trace's ``compile_time`` report when the stage opens.

- ``compile_time_chart``: the phase tree as icicle blocks. Each block starts where its previous sibling
  ended inside its parent (children add up to their parent, compiler/SCHEMA.md "Compile time"), so a
  block's width is its seconds and every child sits under its parent; the browser only scales ``x_s``
  and ``seconds`` to pixels. The charges (kernels, lines, FX nodes, modules) come along, costliest first.
- ``compile_time_chrome``: the report as the Chrome / Perfetto trace ``c.compile_time.to_chrome_trace``
  writes (one complete event per phase), for the stage's download button. The part is the file's text,
  a JSON string: torch's args hold integers past 2**53 (``cache_event_time`` in ns) that the browser's
  JSON.parse would round, so the browser hands the text on without reading it.
"""

from __future__ import annotations

import json
from typing import Any, Iterator, Mapping

from compiler.model.contract import CompileTimeBlock, CompileTimeChart, CompileTimeDigest

CHART_KEY = "compile_time_chart"
CHROME_KEY = "compile_time_chrome"
CHARGES_SHOWN = 40  # rows of each charge list the chart sends (the report keeps them all)
_LINK_KEYS = ("graph", "kernel", "compile_id", "category")


def _blocks(phase: Mapping[str, Any], total: float) -> Iterator[CompileTimeBlock]:
    """(block, ...) depth first; a block's ``x_s`` is the seconds of everything left of it on its row."""
    stack: list[tuple[Mapping[str, Any], int, float]] = [(phase, 0, 0.0)]
    while stack:
        node, depth, x = stack.pop()
        seconds = float(node.get("seconds") or 0.0)
        block = {"id": str(node.get("id")), "name": str(node.get("name")), "depth": depth, "x_s": round(x, 9),
                 "seconds": seconds, "share": seconds / total if total > 0 else 0.0}
        block.update({k: node[k] for k in _LINK_KEYS if node.get(k)})
        args = node.get("args") or {}
        if args.get("cache_state"):  # an FX graph cache lookup, and what a hit saved
            block["cache"] = str(args["cache_state"])
            if isinstance(args.get("cache_time_saved_s"), (int, float)):
                block["cache_saved_s"] = float(args["cache_time_saved_s"])
        yield block
        children = [c for c in node.get("children") or [] if isinstance(c, Mapping)]
        starts, at = [], x
        for child in children:
            starts.append(at)
            at += float(child.get("seconds") or 0.0)
        stack.extend((child, depth + 1, start) for child, start in reversed(list(zip(children, starts))))


def chart(report: Mapping[str, Any]) -> CompileTimeChart:
    """What the icicle and its charge lists draw (see the module docstring)."""
    if not isinstance(report, Mapping) or not isinstance(report.get("root"), Mapping):
        raise ValueError("the compile_time report has no phase tree ('root'); it cannot be drawn")
    root = report["root"]
    total = float(root.get("seconds") or 0.0)
    return {
        "source": report.get("source", "capture"), "seconds": total, "explorer_s": report.get("explorer_s", 0.0),
        "categories": report.get("categories") or {}, "blocks": (blocks := list(_blocks(root, total))),
        "cache_saved_s": round(sum(b.get("cache_saved_s", 0.0) for b in blocks), 6),
        "kernels": sorted(report.get("kernels") or [], key=lambda k: -float(k.get("seconds") or 0.0))[:CHARGES_SHOWN],
        "lines": list(report.get("lines") or [])[:CHARGES_SHOWN],
        "nodes": list(report.get("nodes") or [])[:CHARGES_SHOWN],
        "modules": list(report.get("modules") or [])[:CHARGES_SHOWN],
        "recompiles": report.get("recompiles") or [], "suggestions": report.get("suggestions") or [],
        "notes": report.get("notes") or [], **({"rank": report["rank"]} if report.get("rank") is not None else {}),
    }


def chrome_trace(report: Mapping[str, Any]) -> dict[str, Any]:
    """The Chrome trace of the report's JSON: the same events compiler/io/compile_time.py writes from the
    report object (the widgets read JSON only)."""
    if not isinstance(report, Mapping) or not isinstance(report.get("root"), Mapping):
        raise ValueError("the compile_time report has no phase tree ('root'); there is no trace to write")
    rank = report.get("rank")
    pid = f"compile time ({report.get('source', 'capture')}{f', rank {rank}' if rank is not None else ''})"
    events: list[dict[str, Any]] = []
    stack = [report["root"]]
    while stack:
        phase = stack.pop()
        args = {"id": phase.get("id"), "category": phase.get("category", ""),
                **{k: phase[k] for k in ("graph", "kernel", "compile_id") if phase.get(k)}, **(phase.get("args") or {})}
        events.append({"name": phase.get("name"), "ph": "X", "ts": round(float(phase.get("start_s") or 0.0) * 1e6, 3),
                       "dur": round(float(phase.get("seconds") or 0.0) * 1e6, 3), "pid": pid, "tid": "compile",
                       "args": args})
        stack.extend(reversed([c for c in phase.get("children") or [] if isinstance(c, Mapping)]))
    return {"traceEvents": events, "displayTimeUnit": "ms"}


def chrome_trace_text(report: Mapping[str, Any]) -> str:
    """The ``compile_time_chrome`` part: the Chrome trace as the text of its file."""
    return json.dumps(chrome_trace(report))


def digest(report: Any) -> CompileTimeDigest | None:
    """What the summary says of the report before its stage opens: its total, the stage button's count.
    Only ``seconds`` is read, so a live compilation's report is not built until the stage opens."""
    if not isinstance(report, Mapping):
        return None
    seconds = report.get("seconds")
    if not isinstance(seconds, (int, float)):
        root = report.get("root")
        seconds = root.get("seconds") if isinstance(root, Mapping) else None
    return {"seconds": float(seconds)} if isinstance(seconds, (int, float)) else None
