"""Terminal (rich) and notebook (HTML) renderings of a ``Diff``: the summary line, one row per kernel pair
(with each side's numerics error where either was checked), then the source diff of every changed pair."""

from __future__ import annotations

import html
from typing import Any

from rich.console import Group
from rich.syntax import Syntax
from rich.table import Table

from ..model.diff import Diff
from ..model.slots import html_of, rich_of


def _e(value: float | None) -> str:
    return "–" if value is None else f"{value:.3g}"


@rich_of.register
def _(d: Diff) -> Any:
    table = Table(title=f"{d.a} -> {d.b}", show_lines=False)
    errors = any(k.error_a is not None or k.error_b is not None for k in d.kernels)
    for column in ("graph", "kernel a", "kernel b", "status", "nodes") + (("error a", "error b") if errors else ()):
        table.add_column(column)
    for g in d.graphs:
        for k in g.kernels:
            table.add_row(g.graph, f"{k.a or ''} {k.a_language or ''}", f"{k.b or ''} {k.b_language or ''}",
                          k.status, ", ".join(k.nodes), *((_e(k.error_a), _e(k.error_b)) if errors else ()))
    parts: list[Any] = [d.summary, table]
    for k in d.kernels:
        if k.status == "changed" and k.source_diff:
            parts.append(Syntax(k.source_diff, "diff", theme="ansi_light"))
    return Group(*parts)


@html_of.register
def _(d: Diff) -> str:
    esc = html.escape
    rows = "".join(
        f"<tr><td>{esc(g.graph)}</td><td>{esc(k.status)}</td><td><code>{esc(k.a or '')}</code> {esc(k.a_language or '')}</td>"
        f"<td><code>{esc(k.b or '')}</code> {esc(k.b_language or '')}</td><td>{esc(', '.join(k.nodes))}</td></tr>"
        for g in d.graphs for k in g.kernels)
    diffs = "".join(
        f"<details><summary>{esc(k.a or '')} &rarr; {esc(k.b or '')}</summary><pre>{esc(k.source_diff)}</pre></details>"
        for k in d.kernels if k.source_diff and k.status == "changed")
    return (f"<div><p><strong>{esc(d.a)} &rarr; {esc(d.b)}</strong>: {esc(d.summary)}</p>"
            "<table><tr><th>graph</th><th>status</th><th>kernel a</th><th>kernel b</th><th>nodes</th></tr>"
            f"{rows}</table>{diffs}</div>")
