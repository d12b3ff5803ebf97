"""Terminal (rich) and notebook (HTML) renderings of the CompileTimeReport: the phase tree, cut to the phases
that matter, then the costliest kernels, lines and modules, the recompiles and the suggestions."""

from __future__ import annotations

import html
from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text
from rich.tree import Tree

from ..model.compile_time import Charge, CompileTimeReport, Phase
from ..model.formatting import where
from ..model.phases import find
from ..model.slots import html_of, rich_of
from .core import table_html

SHOWN_SHARE = 0.02  # phases under this share of the whole are folded into one line per parent
TOP = 8


def _label(phase: Phase, total: float) -> Text:
    share = phase.seconds / total if total else 0.0
    text = Text(f"{phase.seconds:8.3f}s {share:5.1%}  ", style="bold" if share >= 0.1 else "")
    text.append(phase.name, style="dim" if phase.name in ("other", "explorer") else "cyan")
    link = phase.kernel or phase.graph or phase.compile_id
    if link:
        text.append(f"  {link}", style="magenta")
    cache = phase.args.get("cache_state")
    if cache:
        saved = phase.args.get("cache_time_saved_s")
        text.append(f"  cache {cache}" + (f", saved {saved:.2f}s" if isinstance(saved, (int, float)) else ""), style="yellow")
    return text


def phase_tree(report: CompileTimeReport | Phase, share: float = SHOWN_SHARE) -> Tree:
    """The tree under a report's root (or one phase), phases under ``share`` of it folded per parent."""
    top = report.root if isinstance(report, CompileTimeReport) else report
    total = top.seconds

    def add(node: Tree, phase: Phase) -> None:
        small = [c for c in phase.children if c.seconds < share * total]
        for child in phase.children:
            if child not in small:
                add(node.add(_label(child, total)), child)
        if small:
            node.add(Text(f"{sum(c.seconds for c in small):8.3f}s         {len(small)} smaller phases", style="dim"))

    tree = Tree(_label(top, total))
    add(tree, top)
    return tree


@rich_of.register
def _(phase: Phase) -> Any:
    return phase_tree(phase)


def _charges(title: str, rows: list[Charge], key: Any) -> Table:
    table = Table(title=title, title_justify="left")
    for column in ("", "seconds", "kernels s", "spread s", "graphs"):
        table.add_column(column, justify="right" if column.endswith("s") and column else "left")
    for row in rows:
        table.add_row(key(row), f"{row.seconds:.3f}", f"{row.kernel_s:.3f}", f"{row.spread_s:.3f}", ", ".join(row.graphs))
    return table


def by_phase(report: CompileTimeReport) -> Text:
    """The flat breakdown (every second in one phase, unlike c.timings' nested timers), by phase label."""
    split = sorted(report.categories().items(), key=lambda kv: -kv[1])
    named = ", ".join(f"{(phase.label if (phase := find(k)) else k)} {v:.2f}s" for k, v in split)
    return Text(f"by phase, adding up to {report.seconds:.2f}s: {named}")


@rich_of.register
def _(report: CompileTimeReport) -> Any:
    parts: list[Any] = [phase_tree(report)]
    parts.append(by_phase(report))
    if report.kernels:
        table = Table(title="kernels", title_justify="left")
        for column in ("kernel", "seconds", "autotune s", "compile s", "candidates", "module"):
            table.add_column(column)
        for k in report.top_kernels(TOP):
            table.add_row(f"{k.graph}/{k.kernel}", f"{k.seconds:.3f}", f"{k.autotune_s:.3f}", f"{k.compile_s:.3f}",
                          str(k.candidates), k.module or "")
        parts.append(table)
    if report.lines:
        parts.append(_charges("your lines", report.top_lines(TOP), lambda r: where((r.file, r.line))))
    if report.modules:
        parts.append(_charges("modules", report.top_modules(TOP), lambda r: r.key or "(root)"))
    for r in report.recompiles:
        parts.append(Text(f"recompile {r.compile_id} {r.function}: {r.seconds:.2f}s, "
                          f"{r.reasons[0] if r.reasons else '?'}", style="yellow"))
    for s in report.suggestions:
        parts.append(Text(f"suggestion ({s.kind}): {s.message}", style="green"))
        for line in s.evidence[:5]:
            parts.append(Text(f"    {line}", style="dim"))
    for note in report.notes:
        parts.append(Text(f"note: {note}", style="dim"))
    return Group(*parts)


@html_of.register
def _(report: CompileTimeReport) -> str:
    rows = []

    def add(phase: Phase, depth: int) -> None:
        if depth and phase.seconds < SHOWN_SHARE * report.seconds:
            return
        rows.append(["\u00a0" * 2 * depth + phase.name, f"{phase.seconds:.3f}", phase.kernel or phase.graph or
                     phase.compile_id or ""])
        for child in phase.children:
            add(child, depth + 1)

    add(report.root, 0)
    tips = "".join(f"<li>{html.escape(s.message)}</li>" for s in report.suggestions)
    return (table_html(["phase", "seconds", "graph / kernel / compile"], rows)
            + table_html(["line", "seconds", "kernels s", "spread s"],
                         [[where((c.file, c.line)), f"{c.seconds:.3f}", f"{c.kernel_s:.3f}", f"{c.spread_s:.3f}"]
                          for c in report.top_lines(TOP)])
            + (f"<ul>{tips}</ul>" if tips else ""))
