"""Terminal (rich) and notebook (HTML) renderings of run reports, registered on the model's rich_of / html_of."""

from __future__ import annotations

import html
from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text

from ..model.formatting import where
from ..model.numerics import KernelNumerics, NumericsReport
from ..model.profile import Profile
from ..model.slots import html_of, rich_of
from . import call_tree
from .core import table_html
from .fit import Column, Fitted

_TOP = 15


def _bar(fraction: float, width: int = 20) -> str:
    filled = max(0, min(width, round(fraction * width)))
    return "█" * filled + "·" * (width - filled)


def _profile_rows(p: Profile) -> list[list[str]]:
    fractions = p.fraction
    return [[key, p.kernels[key].language, f"{ms:.4f}", f"{p.kernel_calls.get(key, 0):g}",
             f"{fractions.get(key, 0.0):.1%}", _bar(fractions.get(key, 0.0))] for key, ms in p.top_kernels(_TOP)]


def _line_rows(p: Profile) -> list[list[str]]:
    return [[where(line), f"{ms:.4f}", f"{(ms / p.total_ms if p.total_ms else 0):.1%}"] for line, ms in p.top_lines(_TOP)]


@rich_of.register
def _(p: Profile) -> Any:
    kernels = Table(title=f"top kernels ({len(p.kernel_ms)} in all)")
    for column in ("kernel", "language", "ms / run", "calls", "share", ""):
        kernels.add_column(column, justify="right" if column in ("ms / run", "calls", "share") else "left")
    for row in _profile_rows(p):
        kernels.add_row(*row)
    lines = Table(title="top source lines")
    for column in ("line", "ms / run", "share"):
        lines.add_column(column)
    for row in _line_rows(p):
        lines.add_row(*row)
    head = Text(f"{p.device}, {p.runs} runs: {p.total_ms:.4f} ms per run in the compiled graphs, "
                f"wall {p.wall_ms:.4f} ms", style="bold")
    rest = ", ".join(f"{name} {ms:.4f}" for name, ms in list(p.unattributed.items())[:5])
    note = Text(f"unattributed {p.unattributed_ms:.4f} ms" + (f": {rest}" if rest else ""), style="dim")
    tree = call_tree.rendered(p)
    return Group(head, kernels, lines, *([tree] if tree is not None else []), note,
                 *(Text(f"note: {n}", style="yellow") for n in p.notes))


@html_of.register
def _(p: Profile) -> str:
    head = (f"<b>{html.escape(p.device)}, {p.runs} runs</b>: {p.total_ms:.4f} ms per run in the compiled graphs, "
            f"wall {p.wall_ms:.4f} ms; unattributed {p.unattributed_ms:.4f} ms")
    return ("<div>" + head + table_html(["kernel", "language", "ms / run", "calls", "share", ""], _profile_rows(p))
            + table_html(["line", "ms / run", "share"], _line_rows(p))
            + "".join(f"<p>note: {html.escape(n)}</p>" for n in p.notes) + "</div>")


def _g(value: float | None) -> str:
    return "–" if value is None else f"{value:.3g}"


_STATE = {True: "ok", False: "DIVERGES", None: "not compared"}
_NUMERICS_HEAD = ["kernel", "language", "", "error", "max abs", "max rel", "outside tol", "local max rel",
                  "local outside tol", "compiled vs f64", "eager vs f64", "notes"]


def _share(value: float | None) -> str:
    return "–" if value is None else f"{value:.1%}"


def _numerics_row(row: KernelNumerics) -> list[str]:
    """One kernel: its state, which error leaves tolerance (local: its own; propagated: carried in its
    inputs), and both errors."""
    return [row.key, row.language, _STATE[row.ok], row.divergence.value if row.divergence else "",
            _g(row.max_abs), _g(row.max_rel), _share(row.mismatched), _g(row.local_max_rel),
            _share(row.local_mismatched), _g(row.compiled_vs_float64), _g(row.eager_vs_float64),
            "; ".join(row.notes)[:120]]


def _first_divergent_text(r: NumericsReport) -> str:
    if r.first_divergent is None:
        return r.verdict
    nodes = r.first_divergent_nodes
    lines = ", ".join(where(u) for u in nodes.get("user_lines", []))
    return f"{r.verdict} (FX nodes {', '.join(nodes.get('fx', []))}; your lines {lines})"


_ERROR_KINDS = ("error: local, the kernel's own output leaves tolerance when it is run on the compiled program's "
                "own inputs to it; propagated, only the error its inputs carried from the kernels before it does")


# the steps at which the numerics table gives a column up on a narrow terminal (fit.py): the notes are cut
# first, then the figures a reader can do without go, then the kernel id goes on to a second line
_NUMERICS_DROP = {"compiled vs f64": 1, "eager vs f64": 2, "language": 3, "max abs": 4, "outside tol": 5,
                  "local outside tol": 5, "local max rel": 6, "notes": 7}
_NUMERICS_RIGHT = {"max abs", "max rel", "outside tol", "local max rel", "local outside tol", "compiled vs f64",
                   "eager vs f64"}


def _numerics_table(r: NumericsReport) -> Fitted:
    rows = [_numerics_row(row) for row in r.kernels.values()]
    cells = list(zip(*rows)) if rows else [()] * len(_NUMERICS_HEAD)
    columns = [Column(head, list(values), "right" if head in _NUMERICS_RIGHT else "left",
                      least={"kernel": 24, "notes": 16}.get(head), cut_from=6 if head == "kernel" else 0,
                      drop=_NUMERICS_DROP.get(head, 0),
                      cut="id" if head == "kernel" else "ellipsis")
               for head, values in zip(_NUMERICS_HEAD, cells)]
    return Fitted(columns, f"kernels against {r.reference}, in execution order",
                  ["bold red" if row.key == r.first_divergent else None for row in r.kernels.values()])


@rich_of.register
def _(r: NumericsReport) -> Any:
    parts: list[Any] = [Text(_first_divergent_text(r), style="bold"), _numerics_table(r), Text(_ERROR_KINDS, style="dim")]
    parts += [Text(note, style="dim") for note in r.notes]
    return Group(*parts)


@html_of.register
def _(r: NumericsReport) -> str:
    notes = "".join(f"<p>{html.escape(n)}</p>" for n in [_ERROR_KINDS, *r.notes])
    return (f"<div><b>{html.escape(_first_divergent_text(r))}</b>"
            + table_html(_NUMERICS_HEAD, [_numerics_row(row) for row in r.kernels.values()]) + notes + "</div>")
