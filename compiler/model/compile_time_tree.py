"""Nested spans of one call that compiled -> its subtree of Phases: each span a phase of its category
(compiler/model/phases.py), the explorer's own time taken out of every torch phase it ran inside and
shown as one ``explorer`` row (or as the row of its own phase: a capture's ``startup``, a warm capture's
``served``), and an ``other`` child wherever children do not cover their parent.
"""

from __future__ import annotations

from typing import Any

from .compile_time import CompileCall, Phase
from .compile_time_events import Span, merged, nest, overlap, spans_of, without
from .phases import category_of, hook_category


class PhaseBuilder:
    """Makes the report's phases, with ids in the order they are made (p0, p1, ...: what the widget links
    by), and hands each ``inductor_compile`` span the graph it compiled."""

    def __init__(self, graphs: list[Any], origin_ns: int) -> None:
        self.graphs = graphs
        self.origin_ns = origin_ns
        self.count = 0
        self.by_compile: dict[tuple[str, bool], list[str]] = {}
        for graph in graphs:
            key = (graph.compile_id or "", graph.kind == "backward")
            self.by_compile.setdefault(key, []).append(graph.id)
        self.used: dict[tuple[str, bool], int] = {}

    def phase(self, name: str, seconds: float, start_ns: int, **kwargs: Any) -> Phase:
        phase = Phase(f"p{self.count}", name, round(seconds, 6), round((start_ns - self.origin_ns) / 1e9, 6), **kwargs)
        self.count += 1
        return phase

    def graph_of(self, span: Span) -> str | None:
        """inductor_compile spans are one graph each, in compile order per (compile id, forward/backward)."""
        key = (span.compile_id or "", bool(span.args.get("is_backward")))
        ids = self.by_compile.get(key, [])
        index = self.used.get(key, 0)
        self.used[key] = index + 1
        return ids[index] if index < len(ids) else None

    def convert(self, span: Span, explorer: list[tuple[int, int]], parent_category: str,
                graph: str | None) -> Phase:
        category = category_of(span.name) or parent_category
        if span.name == "inductor_compile":
            graph = self.graph_of(span) or graph
        seconds = (span.end - span.start - overlap(explorer, span.start, span.end)) / 1e9
        args = {k: v for k, v in span.args.items() if isinstance(v, (str, int, float, bool)) and k != "compile_id"}
        phase = self.phase(span.name, seconds, span.start, category=category, compile_id=span.compile_id,
                           graph=graph, args=args)
        phase.children = [self.convert(child, explorer, category, graph) for child in span.children]
        self.add_other(phase, span.end, category)
        return phase

    def add_other(self, phase: Phase, end_ns: int, category: str) -> None:
        if not phase.children:
            return
        rest = phase.seconds - sum(c.seconds for c in phase.children)
        if rest > 1e-6:
            last = phase.children[-1]
            start = self.origin_ns + int((last.start_s + last.seconds) * 1e9)
            phase.children.append(self.phase("other", rest, min(start, end_ns), category=category,
                                             compile_id=phase.compile_id, graph=phase.graph))


def call_phase(builder: PhaseBuilder, call: CompileCall) -> tuple[Phase, list[dict[str, Any]]]:
    spans, instants = spans_of(call.events, call.start_ns, call.end_ns)
    explorer = merged((max(s, call.start_ns), min(e, call.end_ns)) for _, s, e in call.hooks if e > s)
    wall = (call.end_ns - call.start_ns) / 1e9
    node = builder.phase(call.kind, wall, call.start_ns)
    node.children = [builder.convert(span, explorer, "other", None) for span in nest(spans)]
    node.children += own_rows(builder, call)
    builder.add_other(node, call.end_ns, "other")
    return node, instants


def own_rows(builder: PhaseBuilder, call: CompileCall) -> list[Phase]:
    """The explorer's own intervals of a call as one row per category (compiler/model/phases.py ``hooks``:
    ``startup``, ``served``, else ``explorer``), each with a child per interval name. A second is in one row
    only: an interval of a phase of its own is taken out of the ``explorer`` intervals around it (a served
    graph's stages loaded while the stages are collected)."""
    by_category: dict[str, list[tuple[str, int, int]]] = {}
    for name, start, end in call.hooks:
        start, end = max(start, call.start_ns), min(end, call.end_ns)
        if end > start:
            by_category.setdefault(hook_category(name), []).append((name, start, end))
    own = {cat: [(s, e) for _, s, e in hooks if cat != "explorer"] for cat, hooks in by_category.items()}
    theirs = merged(interval for cat, intervals in own.items() for interval in intervals)
    rows = []
    for category, hooks in by_category.items():
        mine = merged((s, e) for _, s, e in hooks)
        if category == "explorer":
            mine = without(mine, theirs)
        if not mine:
            continue
        row = builder.phase(category, sum(e - s for s, e in mine) / 1e9, mine[0][0], category=category)
        per_hook: dict[str, list[tuple[int, int]]] = {}
        for name, start, end in hooks:
            per_hook.setdefault(name, []).append((start, end))
        for name, intervals in per_hook.items():
            inside = merged(intervals)
            row.children.append(builder.phase(name, sum(e - s for s, e in inside) / 1e9, inside[0][0],
                                              category=category))
        row.children.sort(key=lambda p: -p.seconds)
        builder.add_other(row, call.end_ns, category)
        _fit(row)
        rows.append(row)
    return rows


def _fit(phase: Phase) -> None:
    """Hook rows can overlap each other (a hook inside another): scale them to their merged total."""
    total = sum(c.seconds for c in phase.children)
    if total > phase.seconds > 0:
        for child in phase.children:
            child.seconds = round(child.seconds * phase.seconds / total, 6)
