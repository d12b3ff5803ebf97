"""Terminal (rich) and notebook (HTML) renderings of a TraceSet: divergence first, then each rank."""

from __future__ import annotations

import html
import re
from typing import Any

from rich.console import Group
from rich.text import Text

from ..model.slots import html_of, rich_of
from ..model.traceset import RankSummary, RankTrace, TraceSet
from .core import rich_table, table_html

_RANK_COLUMNS = ["rank", "torch", "compiles", "graphs", "graph breaks", "recompiles", "compile s", "problems"]
_DIRS = re.compile(r"^\S*/")  # "/path/to/model.py:13 reason" -> "model.py:13 reason"
_COMPILE_COLUMNS = ["compile id", "function", "graph", "nodes", "seconds", "graph breaks", "recompile reason"]


def _rank_row(s: RankSummary) -> list[str]:
    return [s.rank, s.torch or "?", str(len(s.compiles)), str(sum(1 for c in s.compiles if c.graph)),
            str(len(s.graph_breaks)), str(len(s.recompiles)), f"{s.seconds:.2f}", str(len(s.problems))]


def _compile_rows(s: RankSummary) -> list[list[str]]:
    return [[c.compile_id, c.function, (c.graph or "-")[:8], "" if c.graph_nodes is None else str(c.graph_nodes),
             f"{c.seconds:.2f}", "; ".join(_DIRS.sub("", b) for b in c.graph_breaks),
             " ".join((c.recompile_reasons or [""])[0].split())[:120]] for c in s.compiles]


@rich_of.register
def _(rank: RankTrace) -> Any:
    parts: list[Any] = [rich_table(repr(rank), _COMPILE_COLUMNS, _compile_rows(rank.summary))]
    parts += [Text(f"  {problem}", style="yellow") for problem in rank.summary.problems]
    return Group(*parts)


@rich_of.register
def _(ts: TraceSet) -> Any:
    parts: list[Any] = [Text(repr(ts), style="bold")]
    if ts.divergence:
        parts.append(Text(f"ranks diverge ({len(ts.divergence)}):", style="bold red"))
        for d in ts.divergence:
            parts.append(Text(f"  [{d.kind}] {d.summary}", style="red"))
            parts += [Text(f"      rank {rank}: {what}", style="dim") for rank, what in d.ranks.items()]
    else:
        parts.append(Text("the ranks compiled alike", style="green"))
    parts += [Text(f"  {problem}", style="yellow") for problem in ts.problems]
    parts.append(rich_table("ranks", _RANK_COLUMNS, [_rank_row(s) for s in ts.summaries]))
    parts += [rich_of(rank) for rank in ts]
    return Group(*parts)


@html_of.register
def _(rank: RankTrace) -> str:
    problems = "".join(f"<div>{html.escape(p)}</div>" for p in rank.summary.problems)
    return f"<div><b>{html.escape(repr(rank))}</b>" + table_html(_COMPILE_COLUMNS, _compile_rows(rank.summary)) + problems + "</div>"


@html_of.register
def _(ts: TraceSet) -> str:
    rows = [[d.kind, d.summary, "; ".join(f"rank {r}: {w}" for r, w in d.ranks.items())] for d in ts.divergence]
    divergence = table_html(["kind", "divergence", "per rank"], rows) if rows else "<p>the ranks compiled alike</p>"
    problems = "".join(f"<div>{html.escape(p)}</div>" for p in ts.problems)
    return (f"<div><h4>{html.escape(repr(ts))}</h4>{divergence}{problems}"
            + table_html(_RANK_COLUMNS, [_rank_row(s) for s in ts.summaries]) + "".join(html_of(r) for r in ts) + "</div>")
