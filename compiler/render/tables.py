"""The kernels and autotune tables (compiler/render/table_rows.py) as rich tables, for the terminal view."""

from __future__ import annotations

import math
from dataclasses import dataclass

from rich import box
from rich.cells import cell_len
from rich.console import JustifyMethod
from rich.table import Table
from rich.text import Text

from ..model.formatting import where
from .table_rows import AutotuneGroup, KernelRow

_BAR = 10  # characters of the widest bar


def _bar(fraction: float, style: str) -> Text:
    return Text("█" * max(1, round(_BAR * fraction)) if fraction > 0 else "", style=style)


def _user_lines(row: KernelRow) -> str:
    shown = [where(u) for u in row.user_lines[:3]]
    return ", ".join(shown) + (f" +{len(row.user_lines) - 3}" if len(row.user_lines) > 3 else "")


USER_LINES_MIN = 16  # the fewest columns the user lines may have before the table drops to its narrow form
USER_LINE_MIN = 9  # ... and the narrow form's first user line ("model.py:1") before it drops that too
_GAP = 3  # between two columns: their padding (0, 1) and the box's divider, a space in SIMPLE_HEAD
_EDGES = 2  # the box's left and right edges (no padding there: pad_edge=False)


@dataclass
class _Column:
    """One column of the kernels table: its header and one cell per row (the table is laid out from these,
    so every width is known before rich sees it)."""

    header: str
    cells: list[str | Text]
    justify: JustifyMethod = "left"

    @property
    def width(self) -> int:
        return max([cell_len(self.header)] + [c.cell_len if isinstance(c, Text) else cell_len(c) for c in self.cells])


def _verdict(row: KernelRow, wide: bool) -> str:
    """ok, or which error leaves tolerance: the kernel's own (local) or only what its inputs carried."""
    if row.ok is not False and row.divergence is None:
        return {True: "ok", None: "-"}[row.ok]
    kind = row.divergence or "propagated"
    return f"DIVERGES ({kind})" if wide else ("no, local" if kind == "local" else "no, prop.")


def _kernel_columns(rows: list[KernelRow], form: str, timed: bool, checked: bool) -> list[_Column]:
    """The kernels table's columns in one of three forms: ``wide``, every count and the bar; ``narrow``,
    what answers "which kernel, how slow, whose line"; ``ids``, the kernel and its numbers only."""
    wide = form == "wide"
    columns = [_Column("kernel", [Text(r.id + (" ◆ first divergent" if r.first_divergent else ""),
                                       style="bold red" if r.first_divergent else "") for r in rows])]
    if form != "ids":
        columns.append(_Column("language" if wide else "kind", [r.language for r in rows]))
    if wide:
        columns += [_Column("lines", [str(r.lines) for r in rows], "right"),
                    _Column("nodes", [str(r.nodes) for r in rows], "right")]
    if timed:
        columns += [_Column("ms", ["" if r.ms is None else f"{r.ms:.4f}" for r in rows], "right"),
                    _Column("share", ["" if r.share is None else f"{r.share:.1%}" for r in rows], "right")]
    if checked:
        columns += [_Column("max rel", ["" if r.max_rel is None else f"{r.max_rel:.3g}" for r in rows], "right"),
                    _Column("ok", [Text(_verdict(r, wide), style="red" if r.divergence == "local" else "")
                                   for r in rows])]
    if wide:
        columns.append(_Column("user lines", [_user_lines(r) for r in rows]))
    elif form == "narrow":
        columns.append(_Column("user line", [where(r.user_lines[0]) if r.user_lines else "" for r in rows]))
    if timed and wide:
        top = max((r.ms or 0.0 for r in rows), default=0.0) or 1.0
        columns.append(_Column("", [_bar((r.ms or 0.0) / top, "cyan") for r in rows]))
    return columns


def kernels_table(rows: list[KernelRow], title: str, width: int | None = None) -> Table:
    """id, language, lines, nodes, time (ms, share, bar) and error, user lines; time and error columns only
    when some row has them, so an unprofiled trace shows no empty columns. Every kernel id is whole (people
    copy it into ``g.kernel(...)``) and every row one line: on a terminal of ``width`` columns the user lines
    get what is left; where that is fewer than ``USER_LINES_MIN`` the line and node counts and the bar go and
    each row shows its first user line, and where even that does not fit, the kind and user line go."""
    timed = any(r.ms is not None for r in rows)
    checked = any(r.ok is not None for r in rows)
    columns, room = _kernel_columns(rows, "wide", timed, checked), None
    if width is not None:
        for form, least in (("wide", USER_LINES_MIN), ("narrow", USER_LINE_MIN), ("ids", 0)):
            columns = _kernel_columns(rows, form, timed, checked)
            room = _room_for_user_lines(columns, width)
            if room >= least:
                break
    table = Table(title=title, box=box.SIMPLE_HEAD, pad_edge=False)
    for column in columns:
        user_lines = column.header.startswith("user line")
        table.add_column(column.header, justify=column.justify, no_wrap=True, overflow="ellipsis",
                         max_width=room if user_lines else None, min_width=None if user_lines else column.width)
    for index in range(len(rows)):
        table.add_row(*(column.cells[index] for column in columns))
    return table


def _room_for_user_lines(columns: list[_Column], width: int) -> int:
    """Columns left for the user lines on a terminal ``width`` wide, every other column at its full width."""
    others = [c for c in columns if not c.header.startswith("user line")]
    return width - _EDGES - sum(c.width for c in others) - _GAP * (len(columns) - 1)


def autotune_table(group: AutotuneGroup) -> Table:
    """One kernel's choices, fastest first: ratio to the best (✔ the chosen one), time, the config as one
    column per key that differs between choices (the others in the caption), and a bar."""
    keys = group.config_keys
    named = any(choice.name for choice in group.choices)
    shared = ", ".join(f"{k}={v}" for k, v in group.shared_config.items())
    table = Table(title=f"autotune {group.kernel} ({group.source}, {len(group.choices)} choices)",
                  caption=f"all choices: {shared}" if shared else None, box=box.SIMPLE_HEAD, pad_edge=False)
    if named:
        table.add_column("choice", no_wrap=True, min_width=max(len(c.name) for c in group.choices))
    table.add_column("x best", justify="right", no_wrap=True, min_width=8)  # "1.00 ✔": ✔ marks the chosen one
    table.add_column("ms", justify="right", no_wrap=True, min_width=6)
    for key in keys:
        table.add_column(key, justify="right", no_wrap=True, min_width=len(key))
    table.add_column("", no_wrap=True)
    finite = [c.ratio for c in group.choices if math.isfinite(c.ratio)]
    worst = max(finite, default=1.0)
    for choice in sorted(group.choices, key=lambda c: c.ratio):
        failed = not math.isfinite(choice.ratio)
        cells: list[str | Text] = [choice.name] if named else []
        ratio = Text("" if failed else f"{choice.ratio:.2f}")
        ratio.append(" ✔" if choice.chosen else "\u2007\u2007", style="bold green")  # figure spaces keep the digits aligned
        cells += [ratio, "failed" if failed else f"{choice.time_ms:.4f}"]
        cells += [choice.config.get(key, "") for key in keys]
        cells.append(_bar(0.0 if failed else choice.ratio / worst, "green" if choice.chosen else "cyan"))
        table.add_row(*cells, style="bold" if choice.chosen else "")
    return table
