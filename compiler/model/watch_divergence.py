"""Where the ranks of a job did not recompile or break alike, from each rank's watch report
(``ts.watch_divergence()``): the rank that recompiled a frame, at which step and why, where the others did
not; the rank that broke a graph at a line where the others did not.

The TraceSet's own divergence (compiler/model/traceset.py) compares what its index sees: different graphs
per compile id, a different number of recompiles. This one names each recompile and break that not every
rank had, with the step a watched run marked in its log (None for a run that was not watched).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .formatting import where
from .watch import WatchReport


@dataclass
class WatchDivergence:
    """A recompile or graph break that some ranks had and the others did not: the fields of the TraceSet's
    ``Divergence`` (kind, summary, ranks, compile_id), and the step, the reason and the ranks that had it."""

    kind: str  # recompile | graph_break
    summary: str
    ranks: dict[str, str]  # rank -> what that rank did
    compile_id: str | None = None
    step: int | None = None  # the step it happened in (None: the log has no step marks)
    reason: str = ""  # Dynamo's recompile reason, or the break's
    had: tuple[str, ...] = ()  # the ranks that had it

    def __repr__(self) -> str:
        return f"Divergence({self.kind}: {self.summary})"


def _ranks_text(ranks: list[str]) -> str:
    return ("rank " if len(ranks) == 1 else "ranks ") + ", ".join(ranks)


def _at(step: int | None) -> str:
    return f" at step {step}" if step is not None else ""


def _recompiles(reports: dict[str, WatchReport]) -> list[WatchDivergence]:
    found: dict[tuple[Any, ...], dict[str, Any]] = {}
    for rank, report in reports.items():
        for event in report.recompiles:
            found.setdefault((event.function, event.step, event.reason), {}).setdefault(rank, event)
    out = []
    for (function, step, reason), by_rank in found.items():
        if len(by_rank) == len(reports):
            continue
        had = list(by_rank)
        first = next(iter(by_rank.values()))
        line = where((first.file, first.line)) if first.file and first.line else ""
        summary = (f"{_ranks_text(had)} recompiled {function}{_at(step)}{f' ({line})' if line else ''} where "
                   f"the others did not: {reason}")
        what = {rank: (f"recompiled{_at(step)} ({by_rank[rank].compile_id}): {reason}" if rank in by_rank else
                       f"did not recompile {function}{_at(step)}") for rank in reports}
        out.append(WatchDivergence("recompile", summary, what, first.compile_id, step, reason, tuple(had)))
    return out


def _breaks(reports: dict[str, WatchReport]) -> list[WatchDivergence]:
    found: dict[tuple[Any, ...], dict[str, tuple[Any, int | None]]] = {}
    for rank, report in reports.items():
        steps = {c.compile_id: c.step for c in report.compiles}
        for entry in report.graph_breaks:
            step = min((s for s in (steps.get(c) for c in entry.compile_ids) if s is not None), default=None)
            found.setdefault((entry.filename, entry.line, entry.reason), {}).setdefault(rank, (entry, step))
    out = []
    for (filename, line, reason), by_rank in found.items():
        if len(by_rank) == len(reports):
            continue
        had = list(by_rank)
        first, step = next(iter(by_rank.values()))
        place = where((filename, line)) if filename and line else first.function or "?"
        summary = f"{_ranks_text(had)} broke the graph at {place}{_at(step)} where the others did not: {reason}"
        what = {rank: (f"broke{_at(by_rank[rank][1])} ({', '.join(by_rank[rank][0].compile_ids)})" if rank in by_rank
                       else "no break there") for rank in reports}
        out.append(WatchDivergence("graph_break", summary, what, first.compile_ids[0] if first.compile_ids else None,
                                   step, reason, tuple(had)))
    return out


def watch_divergence(reports: dict[str, WatchReport]) -> list[WatchDivergence]:
    """Each recompile (same function, step and reason) and each graph break (same line and reason) that
    not every rank had; empty for fewer than two ranks."""
    if len(reports) < 2:
        return []
    return _recompiles(reports) + _breaks(reports)
