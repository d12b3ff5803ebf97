"""Terminal (rich) and notebook (HTML) renderings of a ``WhatIf`` and a ``FusionReport``.

A WhatIf reads like ``explorer.diff``: the verdict, then one row per kernel pair of the edited graph (paired by
the FX nodes they compute) with each side's bytes and, once measured, time; then the totals side by side
(kernels, bytes, planned peak memory, time per call, numerics against eager) and the lines whose time moved.
"""

from __future__ import annotations

import html
from typing import Any

from rich.console import Group

from ..model.formatting import fmt_bytes, where
from ..model.slots import html_of, rich_of
from ..model.what_if import FusionReport, Side, WhatIf
from .core import rich_table, table_html


def _ms(value: float | None) -> str:
    return "–" if value is None else f"{value:.4f}"


def _b(value: float | None) -> str:
    return "–" if value is None else fmt_bytes(value)


def _numerics(side: Side) -> str:
    if side.numerics_ok is None:
        return "–"
    worst = f", max rel {side.max_rel:.3g}" if side.max_rel is not None else ""
    return ("within tolerance" if side.numerics_ok else "diverges") + worst


def kernel_rows(w: WhatIf) -> list[tuple[str, ...]]:
    """(status, kernel before, bytes, ms, kernel after, bytes, ms, nodes) per kernel pair of the edited graph."""
    return [(change.status, change.a or "", _b(a.bytes if a else None), _ms(a.ms if a else None),
             change.b or "", _b(b.bytes if b else None), _ms(b.ms if b else None), ", ".join(change.nodes))
            for change, a, b in w.kernel_pairs()]


def total_rows(w: WhatIf) -> list[tuple[str, str, str]]:
    before, after = w.sides
    return [
        ("kernels", str(len(before.kernels)), str(len(after.kernels))),
        ("bytes moved", _b(before.bytes), _b(after.bytes)),
        ("peak memory (planned)", _b(before.peak_bytes), _b(after.peak_bytes)),
        ("ms per call", _ms(before.total_ms), _ms(after.total_ms)),
        ("numerics vs eager", _numerics(before), _numerics(after)),
    ]


def line_rows(w: WhatIf, top: int = 5) -> list[tuple[str, str, str]]:
    """The user's lines whose time moved most (measured sides only)."""
    before, after = w.sides[0].line_ms, w.sides[1].line_ms
    lines = sorted(set(before) | set(after), key=lambda line: -abs(after.get(line, 0.0) - before.get(line, 0.0)))
    libraries = getattr(w.before, "library_files", {})
    return [(where(line, libraries), _ms(before.get(line)), _ms(after.get(line))) for line in lines[:top]]


_KERNEL_COLUMNS = ("status", "before", "bytes", "ms", "after", "bytes", "ms", "nodes")


@rich_of.register
def _(w: WhatIf) -> Any:
    parts: list[Any] = [w.verdict, rich_table(f"{w.before.function} {w.graph}: {w.edit.label}", _KERNEL_COLUMNS,
                                              kernel_rows(w)),
                        rich_table(None, ("", "before", "after"), total_rows(w))]
    lines = line_rows(w)
    if lines:
        parts.append(rich_table("lines whose time moved", ("line", "ms before", "ms after"), lines))
    if w.edit.note:
        parts.append(w.edit.note)
    return Group(*parts)


@html_of.register
def _(w: WhatIf) -> str:
    lines = line_rows(w)
    note = f"<p>{html.escape(w.edit.note)}</p>" if w.edit.note else ""
    return (f"<div><p><strong>{html.escape(w.verdict)}</strong></p>{table_html(_KERNEL_COLUMNS, kernel_rows(w))}"
            f"{table_html(('', 'before', 'after'), total_rows(w))}"
            f"{table_html(('line', 'ms before', 'ms after'), lines) if lines else ''}{note}</div>")


def report_rows(r: FusionReport) -> list[tuple[str, ...]]:
    return [(row.group, ", ".join(row.nodes), f"{row.kernels[0]} -> {row.kernels[1]}" if row.error is None else "–",
             _b(row.bytes_saved), _ms(row.ms_saved), row.error or "") for row in r.rows]


_REPORT_COLUMNS = ("fusion", "nodes", "kernels fused -> apart", "bytes it saves", "ms it saves", "refused")


@rich_of.register
def _(r: FusionReport) -> Any:
    return rich_table(f"what each fusion of {r.function} {r.graph} is worth ({r.how})", _REPORT_COLUMNS, report_rows(r))


@html_of.register
def _(r: FusionReport) -> str:
    return (f"<div><p><strong>what each fusion of {html.escape(r.function)} {html.escape(r.graph)} is worth</strong> "
            f"({html.escape(r.how)})</p>{table_html(_REPORT_COLUMNS, report_rows(r))}</div>")
