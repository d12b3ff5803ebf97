"""The kernels and autotune tables (compiler/render/table_rows.py) as rich tables, for the terminal view."""

from __future__ import annotations

import math

from rich import box
from rich.table import Table
from rich.text import Text

from ..model.formatting import where
from .fit import Column, fitted_table, layout
from .table_rows import AutotuneGroup, KernelRow

_BAR = 10  # characters of the widest bar


def _bar(fraction: float, style: str) -> Text:
    return Text("█" * max(1, round(_BAR * fraction)) if fraction > 0 else "", style=style)


def _user_lines(row: KernelRow) -> str:
    shown = [where(u) for u in row.user_lines[:3]]
    return ", ".join(shown) + (f" +{len(row.user_lines) - 3}" if len(row.user_lines) > 3 else "")


USER_LINES_MIN = 16  # the fewest columns the user lines may be cut to before the table takes its narrow form
USER_LINE_MIN = 12  # ... and the narrow form's first user line ("…model.py:12": its start is cut, not its number)
KERNEL_MIN = 24  # the narrowest a kernel id column gets: a longer id goes on to a second line, never cut
_KERNEL_CUT, _USER_LINE_CUT = 1, 2  # the narrow form first breaks long ids, then cuts the first user line


def _verdict(row: KernelRow, wide: bool) -> str:
    """ok, or which error leaves tolerance: the kernel's own (local) or only what its inputs carried."""
    if row.ok is not False and row.divergence is None:
        return {True: "ok", None: "-"}[row.ok]
    kind = row.divergence or "propagated"
    return f"DIVERGES ({kind})" if wide else ("no, local" if kind == "local" else "no, prop.")


def _kernel_columns(rows: list[KernelRow], form: str, timed: bool, checked: bool) -> list[Column]:
    """The kernels table's columns in one of three forms: ``wide``, every count and the bar, each id on one
    line; ``narrow``, what answers "which kernel, how slow, whose line", a long id on two lines if it must;
    ``ids``, the kernel and its numbers only."""
    wide = form == "wide"
    columns = [Column("kernel", [Text(r.id + (" ◆ first divergent" if r.first_divergent else ""),
                                      style="bold red" if r.first_divergent else "") for r in rows],
                      least=None if wide else KERNEL_MIN, cut_from=_KERNEL_CUT, cut="id")]
    if form != "ids":
        columns.append(Column("language" if wide else "kind", [r.language for r in rows]))
    if wide:
        columns += [Column("lines", [str(r.lines) for r in rows], "right"),
                    Column("nodes", [str(r.nodes) for r in rows], "right")]
    if timed:
        columns += [Column("ms", ["" if r.ms is None else f"{r.ms:.4f}" for r in rows], "right"),
                    Column("share", ["" if r.share is None else f"{r.share:.1%}" for r in rows], "right")]
    if checked:
        columns += [Column("max rel", ["" if r.max_rel is None else f"{r.max_rel:.3g}" for r in rows], "right"),
                    Column("ok", [Text(_verdict(r, wide), style="red" if r.divergence == "local" else "")
                                  for r in rows])]
    if wide:
        columns.append(Column("user lines", [_user_lines(r) for r in rows], least=USER_LINES_MIN))
    elif form == "narrow":
        columns.append(Column("user line", [where(r.user_lines[0]) if r.user_lines else "" for r in rows],
                              least=USER_LINE_MIN, cut_from=_USER_LINE_CUT, cut="head"))
    if timed and wide:
        top = max((r.ms or 0.0 for r in rows), default=0.0) or 1.0
        columns.append(Column("", [_bar((r.ms or 0.0) / top, "cyan") for r in rows]))
    return columns


def kernels_table(rows: list[KernelRow], title: str, width: int | None = None) -> Table:
    """id, language, lines, nodes, time (ms, share, bar) and error, user lines; time and error columns only
    when some row has them, so an unprofiled trace shows no empty columns. Every kernel id is whole (people
    copy it into ``g.kernel(...)``): on a terminal of ``width`` columns the user lines get what is left;
    where that is fewer than ``USER_LINES_MIN`` the line and node counts and the bar go and each row shows
    its first user line, an id too long for what is left then going on to a second line (never cut);
    where even that does not fit, the kind and user line go."""
    timed = any(r.ms is not None for r in rows)
    checked = any(r.ok is not None for r in rows)
    columns = _kernel_columns(rows, "wide", timed, checked)
    if width is not None:
        for form in ("wide", "narrow", "ids"):
            columns = _kernel_columns(rows, form, timed, checked)
            if layout(columns, width) is not None:
                break
    return fitted_table(columns, width, title)


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
