"""Terminal (rich) and notebook (HTML) renderings of a ``Diff``: the summary line, one row per kernel pair
(with each side's time and numerics error where either was profiled or checked), then the source diff of
every changed pair. The title names each side's torch release: a diff across releases says so first."""

from __future__ import annotations

import html
from typing import Any

from rich.console import Group
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from ..model.diff import Diff, KernelChange
from ..model.slots import html_of, rich_of


def _e(value: float | None) -> str:
    return "–" if value is None else f"{value:.3g}"


def _lines(k: KernelChange) -> str:
    """``file.py:38, 39``: the user's lines a pair computes, the file's name once."""
    files: dict[str, list[str]] = {}
    for path, line in k.lines:
        files.setdefault(path.rsplit("/", 1)[-1], []).append(str(line))
    return "; ".join(f"{name}:{', '.join(lines)}" for name, lines in files.items())


def _compile_time(d: Diff) -> str | None:
    """Each side's whole compile time, where both recorded it."""
    a, b = d.timings.get("total", (None, None))
    return None if a is None or b is None else f"compile {a:.3g} s -> {b:.3g} s"


def _sides(d: Diff) -> tuple[str, str]:
    """Each side's label with the torch release it was compiled with."""
    return f"{d.a} (torch {d.torch[0] or '?'})", f"{d.b} (torch {d.torch[1] or '?'})"


def _across_releases(d: Diff) -> bool:
    """Two torch releases: kernels were paired by the user's lines they compute, so the table shows them
    (else it leaves the width to the kernels' names)."""
    return d.torch[0] != d.torch[1]


def _figures(d: Diff) -> list[tuple[str, str, str]]:
    """The per-pair figures some kernel has on either side: (column heading, field of a, field of b)."""
    present = [("ms", "ms_a", "ms_b"), ("error", "error_a", "error_b")]
    return [f for f in present if any(getattr(k, f[1]) is not None or getattr(k, f[2]) is not None for k in d.kernels)]


@rich_of.register
def _(d: Diff) -> Any:
    table = Table(title=Text(" -> ".join(_sides(d))), caption=_compile_time(d),  # Text: labels hold [toggles]
                  show_lines=False)
    figures = _figures(d)
    lines = _across_releases(d)
    for column in ("graph", "kernel a", "kernel b", "status", "nodes") + (("lines",) if lines else ()):
        table.add_column(column)
    for name, *_ in figures:
        table.add_column(f"{name} a")
        table.add_column(f"{name} b")
    for g in d.graphs:
        for k in g.kernels:
            values = [_e(getattr(k, side)) for _, *sides in figures for side in sides]
            table.add_row(g.ids, f"{k.a or ''} {k.a_language or ''}", f"{k.b or ''} {k.b_language or ''}",
                          k.status, ", ".join(k.nodes), *((_lines(k),) if lines else ()), *values)
    parts: list[Any] = [d.summary, table]
    for k in d.kernels:
        if k.status == "changed" and k.source_diff:
            parts.append(Syntax(k.source_diff, "diff", theme="ansi_light"))
    return Group(*parts)


@html_of.register
def _(d: Diff) -> str:
    esc = html.escape
    figures, lines = _figures(d), _across_releases(d)
    rows = "".join(
        f"<tr><td>{esc(g.ids)}</td><td>{esc(k.status)}</td><td><code>{esc(k.a or '')}</code> {esc(k.a_language or '')}</td>"
        f"<td><code>{esc(k.b or '')}</code> {esc(k.b_language or '')}</td><td>{esc(', '.join(k.nodes))}</td>"
        + (f"<td>{esc(_lines(k))}</td>" if lines else "")
        + "".join(f"<td>{_e(getattr(k, side))}</td>" for _, *sides in figures for side in sides) + "</tr>"
        for g in d.graphs for k in g.kernels)
    heads = "".join(f"<th>{name} a</th><th>{name} b</th>" for name, *_ in figures)
    diffs = "".join(
        f"<details><summary>{esc(k.a or '')} &rarr; {esc(k.b or '')}</summary><pre>{esc(k.source_diff)}</pre></details>"
        for k in d.kernels if k.source_diff and k.status == "changed")
    return (f"<div><p><strong>{' &rarr; '.join(map(esc, _sides(d)))}</strong>: {esc(d.summary)}</p>"
            f"<table><tr><th>graph</th><th>status</th><th>kernel a</th><th>kernel b</th><th>nodes</th>{'<th>lines</th>' if lines else ''}{heads}</tr>"
            f"{rows}</table>{diffs}</div>")
