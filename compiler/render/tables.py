"""The kernels and autotune tables (compiler/render/table_rows.py) as rich tables, for the terminal view."""

from __future__ import annotations

import math

from rich import box
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


NARROW = 120  # below this many columns the kernels table keeps only what answers "which kernel, how slow, whose line"


def kernels_table(rows: list[KernelRow], title: str, width: int | None = None) -> Table:
    """id, language, lines, nodes, time (ms, share, bar) and error, user lines; time and error columns only
    when some row has them, so an unprofiled trace shows no empty columns. On a terminal narrower than
    ``NARROW`` (``width``) the line and node counts and the bar go, and each row shows its first user
    line: every header stays whole."""
    narrow = width is not None and width < NARROW
    timed = any(r.ms is not None for r in rows)
    checked = any(r.ok is not None for r in rows)
    # narrow: expanded, so the user line column takes what is left and no fixed column is cut
    table = Table(title=title, box=box.SIMPLE_HEAD, pad_edge=False, expand=narrow)
    table.add_column("kernel", no_wrap=True, overflow="ellipsis",
                     min_width=min(20 if narrow else 32, max((len(r.id) for r in rows), default=6)),
                     max_width=24 if narrow else 44)
    table.add_column("kind" if narrow else "language", no_wrap=True, min_width=6 if narrow else 8)
    if not narrow:
        table.add_column("lines", justify="right", no_wrap=True, min_width=5)
        table.add_column("nodes", justify="right", no_wrap=True, min_width=5)
    if timed:
        table.add_column("ms", justify="right", no_wrap=True, min_width=6)
        table.add_column("share", justify="right", no_wrap=True, min_width=5)
    if checked:
        table.add_column("max rel", justify="right", no_wrap=True, min_width=7)
        table.add_column("ok", no_wrap=True, min_width=2 if narrow else 8)
    table.add_column("user line" if narrow else "user lines", ratio=1, no_wrap=narrow, overflow="ellipsis",
                     min_width=9)
    if timed and not narrow:
        table.add_column("", no_wrap=True)
    top = max((r.ms or 0.0 for r in rows), default=0.0) or 1.0
    for row in rows:
        cells: list[str | Text] = [Text(row.id + (" ◆ first divergent" if row.first_divergent else ""),
                                        style="bold red" if row.first_divergent else ""), row.language]
        if not narrow:
            cells += [str(row.lines), str(row.nodes)]
        if timed:
            cells += ["" if row.ms is None else f"{row.ms:.4f}", "" if row.share is None else f"{row.share:.1%}"]
        if checked:
            cells += ["" if row.max_rel is None else f"{row.max_rel:.3g}",
                      Text({True: "ok", False: "no" if narrow else "DIVERGES", None: "-"}[row.ok],
                           style="red" if row.ok is False else "")]
        cells.append(where(row.user_lines[0]) if narrow and row.user_lines else _user_lines(row))
        if timed and not narrow:
            cells.append(_bar((row.ms or 0.0) / top, "cyan"))
        table.add_row(*cells)
    return table


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
