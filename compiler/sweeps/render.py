"""A sweep as a table: rich in a terminal, HTML in a notebook without the widget (and in static pages)."""

from __future__ import annotations

import html
from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text

from ..model.formatting import fmt_bytes
from ..model.slots import html_of, rich_of
from .result import Sweep, SweepRow


def _num(value: float | None, fmt: str) -> str:
    return "" if value is None else format(value, fmt)


def columns(sweep: Sweep) -> list[str]:
    shapes = any(r.shapes for r in sweep.rows)
    memory = "peak memory" if sweep.device.startswith("cuda") else "planned peak"
    return (["#", "settings"] + (["shapes"] if shapes else []) +
            ["status", "compile s", "run ms", "× best", memory, "max error", "numerics", "kernels", "graphs",
             "recompiles", "worker", "error"])


def cells(sweep: Sweep, row: SweepRow) -> list[str]:
    shapes = any(r.shapes for r in sweep.rows)
    ratio = sweep.ratio(row.index)
    numerics = {True: "ok", False: "DIVERGES", None: ""}[row.ok]
    where = " · ".join(part for part in (row.worker, row.gpu) if part)
    error = f"{row.stage}: {row.error}" if row.error else ""
    memory = fmt_bytes(row.memory_bytes) if row.memory_bytes is not None else ""
    return ([str(row.index) + (" ★" if row.index == sweep.best else ""), row.settings] + ([row.shape] if shapes else []) +
            [row.status, _num(row.compile_s, ".2f"), _num(row.run_ms, ".3f"), _num(ratio, ".2f"), memory,
             _num(row.max_error, ".2e"), numerics, _num(row.kernels, "d"), _num(row.graphs, "d"), _num(row.recompiles, "d"),
             where, error])


@rich_of.register
def _(sweep: Sweep) -> Any:
    table = Table(title=repr(sweep))
    for name in columns(sweep):
        table.add_column(name, overflow="fold")
    for row in sweep.rows:
        style = "bold green" if row.index == sweep.best else "red" if row.status == "failed" else None
        table.add_row(*cells(sweep, row), style=style)
    return Group(table, Text("★ the fastest point whose numerics held", style="dim"))


@rich_of.register
def _(row: SweepRow) -> Any:
    return Text(repr(row))


def html_table(sweep: Sweep) -> str:
    """The table as plain HTML, the best row in bold, failed rows in red."""
    head = "".join(f"<th style='text-align:left'>{html.escape(c)}</th>" for c in columns(sweep))
    body = []
    for row in sweep.rows:
        style = " style='font-weight:bold;background:#e8f5e9'" if row.index == sweep.best else \
            " style='color:#b71c1c'" if row.status == "failed" else ""
        body.append(f"<tr{style}>" + "".join(f"<td>{html.escape(c)}</td>" for c in cells(sweep, row)) + "</tr>")
    return (f"<div class='ie-sweep'><b>{html.escape(repr(sweep))}</b><table><thead><tr>{head}</tr></thead>"
            f"<tbody>{''.join(body)}</tbody></table><small>★ the fastest point whose numerics held</small></div>")


@html_of.register
def _(sweep: Sweep) -> str:
    return html_table(sweep)
