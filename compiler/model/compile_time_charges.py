"""Compile seconds charged to FX nodes, then to the user's lines and modules: a kernel's own seconds to
the nodes it computes, what torch timed per graph or frame spread over the graph's nodes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .compile_time import Charge, KernelCompileTime, Phase

_EXPLORER_DIR = str(Path(__file__).resolve().parents[1])  # compiler/: frames of the capture's own code


def _outermost_kernel_phases(root: Phase) -> list[Phase]:
    found: list[Phase] = []

    def visit(phase: Phase) -> None:
        if phase.kernel is not None:
            found.append(phase)
            return
        for child in phase.children:
            visit(child)

    visit(root)
    return found


class ChargeRows:
    def __init__(self) -> None:
        self.rows: dict[str, Charge] = {}

    def add(self, key: str, kernel_s: float, spread_s: float, graph: str, file: str | None = None,
            line: int | None = None) -> None:
        row = self.rows.get(key)
        if row is None:
            row = self.rows[key] = Charge(key, 0.0, file=file, line=line)
        row.kernel_s += kernel_s
        row.spread_s += spread_s
        row.seconds = row.kernel_s + row.spread_s
        if graph not in row.graphs:
            row.graphs.append(graph)

    def sorted(self) -> list[Charge]:
        rows = sorted(self.rows.values(), key=lambda r: -r.seconds)
        for row in rows:
            row.seconds, row.kernel_s, row.spread_s = (round(row.seconds, 6), round(row.kernel_s, 6),
                                                       round(row.spread_s, 6))
        return [r for r in rows if r.seconds > 0]

def _computing_nodes(graph: Any) -> list[Any]:
    return [n for n in graph.fx.nodes if n.op in ("call_function", "call_method", "call_module")]


def attribute(report_root: Phase, graphs: list[Any], kernel_times: dict[tuple[str, str], KernelCompileTime],
               frames: dict[str, Any], built: dict[str, float]) -> tuple[list[Charge], list[Charge], list[Charge]]:
    """Charge every second under a graph or a frame to FX nodes, then to their lines and modules
    (``built``: seconds of each graph's wait for its kernel builds, already charged to its kernels)."""
    by_id = {g.id: g for g in graphs}
    nodes, lines, modules = ChargeRows(), ChargeRows(), ChargeRows()

    def charge(graph: Any, fx_nodes: list[Any], kernel_s: float, spread_s: float) -> None:
        if not fx_nodes:
            return
        k, s = kernel_s / len(fx_nodes), spread_s / len(fx_nodes)
        for node in fx_nodes:
            nodes.add(f"{graph.id}/{node.name}", k, s, graph.id)
            if node.user_line:
                file, line = node.user_line
                lines.add(f"{file}:{line}", k, s, graph.id, file, line)
            if node.module is not None:
                modules.add(node.module, k, s, graph.id)

    for entry in kernel_times.values():
        graph = by_id[entry.graph]
        named = {n.name: n for n in graph.fx.nodes}
        charge(graph, [named[n] for n in entry.fx_nodes if n in named], entry.seconds, 0.0)
        entry.module = _module_of([named[n] for n in entry.fx_nodes if n in named])
    kernel_seconds = {g: built.get(g, 0.0) for g in by_id}
    for phase in _outermost_kernel_phases(report_root):
        if phase.graph in kernel_seconds:
            kernel_seconds[phase.graph] += phase.seconds
    for phase in report_root.walk():
        if phase.name == "inductor_compile" and phase.graph in by_id:
            graph = by_id[phase.graph]
            charge(graph, _computing_nodes(graph), 0.0, max(0.0, phase.seconds - kernel_seconds[phase.graph]))
            kernel_seconds[phase.graph] = 0.0  # charged once, against its first inductor_compile
    for call in report_root.children:
        for top in call.children:
            if top.compile_id is None or top.name in ("explorer", "other"):
                continue
            outside = top.seconds - _charged_elsewhere(top)
            frame_graphs = [g for g in graphs if g.compile_id == top.compile_id and g.kind != "backward"]
            if frame_graphs:
                graph = frame_graphs[0]
                charge(graph, _computing_nodes(graph), 0.0, max(0.0, outside))
            elif (frame := frames.get(top.compile_id)) is not None and frame.filename and frame.line \
                    and not frame.filename.startswith(_EXPLORER_DIR):  # the capture's own entry function
                key = f"{frame.filename}:{frame.line}"
                lines.add(key, 0.0, max(0.0, outside), top.compile_id, frame.filename, frame.line)
    return lines.sorted(), modules.sorted(), nodes.sorted()


def _charged_elsewhere(phase: Phase) -> float:
    """Seconds under ``phase`` already charged to a graph (inductor_compile) or to a kernel."""
    if phase.name == "inductor_compile" or phase.kernel is not None:
        return phase.seconds
    return sum(_charged_elsewhere(child) for child in phase.children)


def _module_of(nodes: list[Any]) -> str | None:
    modules = [n.module for n in nodes if n.module is not None]
    return max(set(modules), key=modules.count) if modules else None
