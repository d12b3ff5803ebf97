"""Terminal (rich) and notebook (HTML) renderings of the Dynamo stage.

Registered on the model's ``rich_of`` / ``html_of`` (compiler/model/slots.py) when compiler.render is imported, so the stage
objects print through the same ``Rendered`` path as every other stage.
"""

from __future__ import annotations

import html
from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text
from rich.tree import Tree

from ..model.dynamo import DynamoStage, FrameMetrics, GraphBreak, Guard, Recompile, ShapeSymbol
from ..model.formatting import shorten, where
from ..model.slots import html_of, rich_of
from .core import table_html

_CODE_WIDTH = 110
_GUARDS_SHOWN = 12  # per kind, in the terminal
# Dynamo's metric name -> column title, in the order the metrics table shows them.
METRIC_COLUMNS = {
    "entire_frame_compile_time_s": "total s",
    "backend_compile_time_s": "backend s",
    "inductor_compile_time_s": "inductor s",
    "guard_count": "guards",
    "shape_env_guard_count": "shape guards",
    "graph_op_count": "graph ops",
    "num_graph_breaks": "breaks",
    "cache_size": "cache entries",
}


def _graphs(ids: list[str] | tuple[str, ...]) -> str:
    return ", ".join(ids) if ids else "-"


def frame_label(compile_id: str, function: str, filename: str | None, line: int | None) -> str:
    place = f" ({where((filename, line))})" if filename and line else ""
    return f"{compile_id} {function}{place}"


def metric_row(metrics: FrameMetrics) -> list[str]:
    cells = [metrics.compile_id, metrics.kind, metrics.function]
    for key in METRIC_COLUMNS:
        value = metrics.values.get(key)
        cells.append(f"{value:.3f}" if isinstance(value, float) else "" if value is None else str(value))
    return cells


# ------------------------------------------------------------------------------------------ rich


@rich_of.register
def _(guard: Guard) -> Any:
    text = Text(guard.kind, style="magenta")
    if guard.source:
        text.append(f" {guard.source}", style="bold")
    text.append(f"  {shorten(guard.code, _CODE_WIDTH, squash=True)}", style="cyan")
    if guard.user_line:
        text.append(f"  @ {where(guard.user_line)}", style="green")
        if guard.user_code:
            text.append(f"  {shorten(guard.user_code, 60, squash=True)}", style="dim")
    return text


@rich_of.register
def _(graph_break: GraphBreak) -> Any:
    head = Text(f"{where(graph_break.user_line) or '?'} ", style="green")
    head.append(graph_break.reason, style="bold red")
    head.append(f"  [{_graphs(graph_break.graphs_before)} | {_graphs(graph_break.graphs_after)}]", style="yellow")
    lines = [head]
    if graph_break.frame_skipped:
        lines.append(Text(f"  frame skipped, ran eagerly: {graph_break.frame_skipped}", style="bold yellow"))
    if graph_break.explanation:
        lines.append(Text(f"  {graph_break.explanation}", style="dim"))
    lines += [Text(f"  hint: {hint}", style="dim") for hint in graph_break.hints]
    return Group(*lines)


@rich_of.register
def _(symbol: ShapeSymbol) -> Any:
    return Text(repr(symbol))


@rich_of.register
def _(recompile: Recompile) -> Any:
    text = Text(f"{recompile.compile_id} {recompile.function}", style="bold")
    text.append(f" -> {_graphs(recompile.graphs)}", style="yellow")
    for reason in recompile.reasons:
        text.append(f"\n  {shorten(reason, _CODE_WIDTH, squash=True)}", style="red")
    return text


def symbols_table(symbols: list[ShapeSymbol]) -> Table:
    table = Table(title=f"symbols ({len(symbols)})")
    for column in ("compile id", "symbol", "source", "value", "range", "specialized", "guards", "created at"):
        table.add_column(column)
    for s in symbols:
        table.add_row(s.compile_id or "", s.name, s.source or "", s.value or ("unbacked" if s.unbacked else ""),
                      s.range, s.specialized or "", "; ".join(g.expr for g in s.guards), where(s.user_line))
    return table


def metrics_table(metrics: list[FrameMetrics]) -> Table:
    table = Table(title="Dynamo compilation metrics")
    for column in ["compile id", "kind", "function", *METRIC_COLUMNS.values()]:
        table.add_column(column)
    for m in metrics:
        table.add_row(*metric_row(m))
    return table


@rich_of.register
def _(stage: DynamoStage) -> Any:
    tree = Tree(Text(repr(stage), style="bold"))
    frames = tree.add(Text(f"frames ({len(stage.frames)})"))
    for f in stage.frames:
        label = f"{frame_label(f.compile_id, f.function, f.filename, f.line)} -> {_graphs(f.graphs)}"
        frames.add(Text(f"{label}  skipped, ran eagerly: {f.skipped}", style="yellow") if f.skipped else label)
    if stage.graph_breaks:
        breaks = tree.add(Text(f"graph breaks ({len(stage.graph_breaks)})", style="red"))
        for graph_break in stage.graph_breaks:
            breaks.add(rich_of(graph_break))
    if stage.recompiles:
        recompiles = tree.add(Text(f"recompiles ({len(stage.recompiles)})"))
        for recompile in stage.recompiles:
            recompiles.add(rich_of(recompile))
    guards = tree.add(Text(f"guards ({len(stage.guards)}) by kind"))
    for kind, group in stage.guards_by_kind().items():
        branch = guards.add(Text(f"{kind} ({len(group)})", style="magenta"))
        for guard in group[:_GUARDS_SHOWN]:
            branch.add(rich_of(guard))
        if len(group) > _GUARDS_SHOWN:
            branch.add(Text(f"... {len(group) - _GUARDS_SHOWN} more", style="dim"))
    if stage.symbols:
        tree.add(symbols_table(stage.symbols))
    if stage.compile_metrics:
        tree.add(metrics_table(stage.compile_metrics))
    return tree


# ------------------------------------------------------------------------------------------ HTML


@html_of.register
def _(guard: Guard) -> str:
    return f"<code>{html.escape(str(rich_of(guard)))}</code>"


@html_of.register
def _(graph_break: GraphBreak) -> str:
    lines = [f"{where(graph_break.user_line) or '?'} {graph_break.reason}  "
             f"[{_graphs(graph_break.graphs_before)} | {_graphs(graph_break.graphs_after)}]"]
    lines += [f"  frame skipped, ran eagerly: {graph_break.frame_skipped}"] if graph_break.frame_skipped else []
    lines += [f"  {graph_break.explanation}"] if graph_break.explanation else []
    lines += [f"  hint: {hint}" for hint in graph_break.hints]
    return f"<pre>{html.escape(chr(10).join(lines))}</pre>"


@html_of.register
def _(stage: DynamoStage) -> str:
    parts = [f"<h4>{html.escape(repr(stage))}</h4>",
             table_html(["compile id", "function", "graphs", "ran eagerly because"],
                    [[f.compile_id, frame_label(f.compile_id, f.function, f.filename, f.line), _graphs(f.graphs),
                      f.skipped] for f in stage.frames])]
    if stage.graph_breaks:
        parts.append("<details open><summary>graph breaks</summary>" + table_html(
            ["user line", "reason", "explanation", "graphs before", "graphs after", "frame skipped"],
            [[where(b.user_line), b.reason, b.explanation, _graphs(b.graphs_before), _graphs(b.graphs_after),
              b.frame_skipped] for b in stage.graph_breaks]) + "</details>")
    if stage.recompiles:
        parts.append("<details open><summary>recompiles</summary>" + table_html(
            ["compile id", "function", "reasons", "graphs"],
            [[r.compile_id, r.function, " / ".join(r.reasons), _graphs(r.graphs)] for r in stage.recompiles]) + "</details>")
    for kind, group in stage.guards_by_kind().items():
        parts.append(f"<details><summary>{html.escape(kind)} guards ({len(group)})</summary>" + table_html(
            ["source", "code", "user line", "user code"],
            [[g.source or "", g.code, where(g.user_line), g.user_code] for g in group]) + "</details>")
    if stage.symbols:
        parts.append("<details open><summary>symbols</summary>" + table_html(
            ["compile id", "symbol", "source", "value", "range", "specialized", "guards", "created at"],
            [[s.compile_id or "", s.name, s.source or "", s.value or "", s.range, s.specialized or "",
              "; ".join(g.expr for g in s.guards), where(s.user_line)] for s in stage.symbols]) + "</details>")
    if stage.compile_metrics:
        parts.append("<details><summary>Dynamo compilation metrics</summary>" + table_html(
            ["compile id", "kind", "function", *METRIC_COLUMNS.values()],
            [metric_row(m) for m in stage.compile_metrics]) + "</details>")
    return "<div>" + "".join(parts) + "</div>"
