"""TraceSet: the compilations of a multi-rank job, per rank and compile id, and where the ranks diverge.

``load_trace(dir)`` indexes every rank's TORCH_TRACE log (compiler/pipeline/trace_import.py) and summarizes
each compile from the index alone, so the cross-rank summary is ready before any graph is parsed:
ranks that compiled different graphs (Dynamo's printed graph has a checksum in the log), recompiled,
broke graphs at other lines, or spent much longer compiling. ``ts[rank][compile_id]`` builds that
compile's Compilation when asked for, from its byte ranges in the log; the last few built, and those
someone holds, stay in memory (OpenedCompilations), so memory follows what is open, not the job. A
TraceSet saves to one JSON file (every compilation built, one at a time) and loads back without the logs.
"""

from __future__ import annotations

import statistics
import weakref
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

from . import slots
from .compilation import Compilation
from .formatting import did_you_mean
from .slots import Rendered

SLOW_RATIO = 1.5  # a rank compiling this much longer than the median rank is reported...
SLOW_SECONDS = 1.0  # ...when it is also at least this many seconds longer
KEEP_OPENED = 4  # compilations read from logs that stay in memory when nobody holds them


@dataclass
class CompileSummary:
    """One compile of one rank, as the index sees it (no graph parsed)."""

    compile_id: str
    function: str
    graph: str | None = None  # checksum of Dynamo's printed graph (None: no graph)
    graph_nodes: int | None = None
    seconds: float = 0.0
    graph_breaks: list[str] = field(default_factory=list)  # "file:line reason"
    recompile_reasons: list[str] = field(default_factory=list)


@dataclass
class RankSummary:
    rank: str
    log: str
    torch: str | None
    compiles: list[CompileSummary]
    problems: list[str] = field(default_factory=list)

    @property
    def seconds(self) -> float:
        return round(sum(c.seconds for c in self.compiles), 6)

    @property
    def graph_breaks(self) -> list[str]:
        return [b for c in self.compiles for b in c.graph_breaks]

    @property
    def recompiles(self) -> list[CompileSummary]:
        return [c for c in self.compiles if c.recompile_reasons]

    def to_json(self) -> dict[str, Any]:
        return slots.rank_summary_json(self)


@dataclass
class Divergence:
    """One way the ranks did not compile alike."""

    kind: str  # graph | recompile | graph_break | compile_time | compile_phase (ts.compile_time_divergence())
    summary: str
    ranks: dict[str, str]  # rank -> what that rank did
    compile_id: str | None = None

    def __repr__(self) -> str:
        return f"Divergence({self.kind}: {self.summary})"


def divergence(summaries: list[RankSummary], slow_ratio: float = SLOW_RATIO,
               slow_seconds: float = SLOW_SECONDS) -> list[Divergence]:
    """Where the ranks differ: graphs per compile id, recompiles, graph breaks, compile time."""
    if len(summaries) < 2:
        return []
    found: list[Divergence] = []
    compile_ids = list(dict.fromkeys(c.compile_id for s in summaries for c in s.compiles))
    for compile_id in compile_ids:
        seen = {s.rank: next((c for c in s.compiles if c.compile_id == compile_id), None) for s in summaries}
        graphs = {rank: c.graph if c else None for rank, c in seen.items()}
        if len(set(graphs.values())) > 1:
            function = next(c.function for c in seen.values() if c)
            what = {rank: (f"{c.graph_nodes} nodes, graph {c.graph[:8]}" if c and c.graph else
                           "no graph" if c else "not compiled") for rank, c in seen.items()}
            groups = _groups(graphs)
            sides = " vs ".join(("ranks " if len(g) > 1 else "rank ") + ", ".join(g) for g in groups)
            found.append(Divergence("graph", f"{compile_id} {function}: ranks compiled different graphs ({sides})",
                                    what, compile_id))
    recompiles = {s.rank: s.recompiles for s in summaries}
    if len({len(r) for r in recompiles.values()}) > 1:
        what = {rank: ("; ".join(f"{c.compile_id}: {c.recompile_reasons[0] if c.recompile_reasons else '?'}"
                                 for c in r) or "no recompile") for rank, r in recompiles.items()}
        counts = ", ".join(f"rank {rank} {len(r)}" for rank, r in recompiles.items())
        found.append(Divergence("recompile", f"ranks recompiled a different number of times ({counts})", what))
    breaks = {s.rank: sorted(set(s.graph_breaks)) for s in summaries}
    if len({tuple(b) for b in breaks.values()}) > 1:
        what = {rank: "; ".join(b) or "no graph break" for rank, b in breaks.items()}
        found.append(Divergence("graph_break", "ranks broke their graphs at different places", what))
    seconds = {s.rank: s.seconds for s in summaries}
    median = statistics.median(seconds.values())
    for rank, value in seconds.items():
        if value > slow_ratio * median and value - median >= slow_seconds:
            found.append(Divergence("compile_time", f"rank {rank} compiled for {value:.2f} s, "
                                                    f"{value / median if median else float('inf'):.1f}x the median "
                                                    f"rank ({median:.2f} s)",
                                    {r: f"{v:.2f} s" for r, v in seconds.items()}))
    return found


def compile_time_divergence(reports: dict[str, Any], slow_ratio: float = SLOW_RATIO,
                            slow_seconds: float = SLOW_SECONDS) -> list[Divergence]:
    """Phases (CompileTimeReport categories) where one rank spent much longer than the median rank."""
    if len(reports) < 2:
        return []
    splits = {rank: report.categories() for rank, report in reports.items()}
    found: list[Divergence] = []
    for category in dict.fromkeys(c for split in splits.values() for c in split):
        seconds = {rank: split.get(category, 0.0) for rank, split in splits.items()}
        median = statistics.median(seconds.values())
        for rank, value in seconds.items():
            if value > slow_ratio * median and value - median >= slow_seconds:
                found.append(Divergence("compile_phase", f"rank {rank} spent {value:.2f} s in {category}, the median "
                                                         f"rank {median:.2f} s", {r: f"{v:.2f} s" for r, v in seconds.items()}))
    return found


def _groups(values: dict[str, Any]) -> list[list[str]]:
    groups: dict[Any, list[str]] = {}
    for rank, value in values.items():
        groups.setdefault(value, []).append(rank)
    return list(groups.values())


class OpenedCompilations:
    """The compilations a TraceSet read from its logs: the last ``keep`` opened stay in memory, the others
    only while someone holds them (weak references). Walking a job's compilations one after another (the
    TraceSet view's pickers, a loop over ranks) so holds a few, not the whole job; one nobody holds any
    more is read from its log again when asked for. Shared by the ranks of one TraceSet."""

    def __init__(self, keep: int = KEEP_OPENED) -> None:
        self.keep = keep
        self.recent: OrderedDict[tuple[str, str], Compilation] = OrderedDict()
        self.held: weakref.WeakValueDictionary[tuple[str, str], Compilation] = weakref.WeakValueDictionary()

    def get(self, key: tuple[str, str]) -> Compilation | None:
        compilation = self.held.get(key)
        if compilation is not None:
            self.remember(key, compilation)
        return compilation

    def remember(self, key: tuple[str, str], compilation: Compilation) -> None:
        self.held[key] = compilation
        self.recent[key] = compilation
        self.recent.move_to_end(key)
        while len(self.recent) > self.keep:
            self.recent.popitem(last=False)

    def of_rank(self, rank: str) -> dict[str, Compilation]:
        return {cid: c for (r, cid), c in list(self.held.items()) if r == rank}


class RankTrace(Rendered):
    """One rank's compilations, by compile id (built from its log on first access)."""

    def __init__(self, summary: RankSummary, index: Any = None, build: Callable[[Any, str], Compilation] | None = None,
                 time_compiles: Callable[[Any, str], Any] | None = None,
                 compilations: dict[str, Compilation] | None = None, compile_time: Any = None,
                 watch_of: Callable[[Any], Any] | None = None, opened: OpenedCompilations | None = None) -> None:
        self.summary = summary
        self.index = index  # the rank's log index (compiler/pipeline/trace_import.py) while its log is read
        self.build = build  # (index, compile id) -> that compile's Compilation, read from the log
        self.time_compiles = time_compiles  # (index, rank) -> the rank's CompileTimeReport, read from the log
        self.watch_of = watch_of  # index -> the rank's WatchReport, read from the log
        self._loaded: dict[str, Compilation] = dict(compilations or {})  # a saved TraceSet's: no log to read again
        self._opened = opened if opened is not None else OpenedCompilations()  # those read from the log
        self._compile_time = compile_time
        self._watch: Any = None

    @property
    def _compilations(self) -> dict[str, Compilation]:
        """The compilations in memory now, by compile id."""
        return {**self._loaded, **self._opened.of_rank(self.rank)}

    def watch(self) -> Any:
        """This rank's run as ``explorer.load_watch`` reads it (a WatchReport: compiles, recompiles with
        their reasons and steps, graph breaks), read from its log when first asked."""
        if self._watch is None:
            if self.watch_of is None or self.index is None:
                raise LookupError(f"rank {self.rank}: a TraceSet loaded from JSON keeps no log to read the watch "
                                  "from; load the TORCH_TRACE directory with explorer.load_trace")
            self._watch = self.watch_of(self.index)
        return self._watch

    @property
    def compile_time(self) -> Any:
        """Where this rank's compile time went, over its whole log (a CompileTimeReport, its phases as
        torch timed them; None when the log holds no timer events). Read from the log when first asked."""
        if self._compile_time is None and self.time_compiles is not None and self.index is not None:
            self._compile_time = self.time_compiles(self.index, self.rank)
        return self._compile_time

    @property
    def rank(self) -> str:
        return self.summary.rank

    @property
    def compile_ids(self) -> list[str]:
        return [c.compile_id for c in self.summary.compiles]

    def __getitem__(self, compile_id: str) -> Compilation:
        loaded = self._loaded.get(compile_id)
        if loaded is not None:
            return loaded
        key = (self.rank, compile_id)
        opened = self._opened.get(key)
        if opened is None:
            if self.build is None or self.index is None or compile_id not in self.compile_ids:
                raise KeyError(f"rank {self.rank} has no compile {compile_id!r}{did_you_mean(compile_id, self.compile_ids)}; "
                               f"compile ids: {self.compile_ids}")
            opened = self.build(self.index, compile_id)
            self._opened.remember(key, opened)
        return opened

    def __iter__(self) -> Iterator[Compilation]:
        return (self[c] for c in self.compile_ids)

    def __len__(self) -> int:
        return len(self.compile_ids)

    def compilations(self) -> dict[str, Compilation]:
        return {compile_id: self[compile_id] for compile_id in self.compile_ids}

    def __repr__(self) -> str:
        s = self.summary
        return (f"RankTrace(rank {s.rank}: {len(s.compiles)} compiles, {len(s.graph_breaks)} graph breaks, "
                f"{len(s.recompiles)} recompiles, {s.seconds:.2f}s)")


class TraceSet(Rendered):
    """Every rank of a TORCH_TRACE directory: ``ts[rank][compile_id]`` is a Compilation."""

    def __init__(self, path: str, ranks: dict[str, RankTrace], divergence: list[Divergence],
                 problems: list[str] | None = None) -> None:
        self.path = path
        self.ranks = ranks
        self.divergence = divergence
        self.problems = list(problems or [])

    def __getitem__(self, rank: int | str) -> RankTrace:
        key = str(rank)
        if key not in self.ranks:
            raise KeyError(f"no rank {rank!r} in {self.path}; ranks: {list(self.ranks)}")
        return self.ranks[key]

    def __iter__(self) -> Iterator[RankTrace]:
        return iter(self.ranks.values())

    def __len__(self) -> int:
        return len(self.ranks)

    @property
    def summaries(self) -> list[RankSummary]:
        return [r.summary for r in self.ranks.values()]

    def watch(self, rank: int | str | None = None) -> Any:
        """One rank's WatchReport, the same as ``explorer.load_watch(path, rank=rank)``; ``rank`` may be
        left out when the TraceSet has one rank."""
        if rank is None:
            if len(self.ranks) != 1:
                raise KeyError(f"{self.path} holds {len(self.ranks)} ranks ({list(self.ranks)}): pick one with "
                               "ts.watch(rank=N)")
            return next(iter(self.ranks.values())).watch()
        return self[rank].watch()

    def watch_divergence(self) -> list[Any]:
        """Each recompile and graph break that some ranks had and the others did not, with the rank, the
        step (when the run was watched) and the reason (compiler/model/watch_divergence.py); every rank's
        watch report is read from its log now, if not yet."""
        from .watch_divergence import watch_divergence

        return watch_divergence({rank: r.watch() for rank, r in self.ranks.items()})

    def compile_time_divergence(self) -> list[Divergence]:
        """Phases where one rank spent much longer compiling than the median rank (each rank's report is
        read from its log now, if not yet)."""
        reports = {rank: r.compile_time for rank, r in self.ranks.items() if r.compile_time is not None}
        return compile_time_divergence(reports)

    def to_json(self) -> dict[str, Any]:
        """Every rank's summary and every compilation (built now if not yet), plus the divergence."""
        return slots.traceset_json(self)

    def save(self, path: str | Path) -> Path:
        """One JSON file with every rank's compilations; gzip-compressed when ``path`` ends with ``.gz``."""
        path = Path(path)
        slots.write_json(self.to_json(), path)
        return path

    def to_html(self, path: str | Path) -> Path:
        """One self-contained HTML file: rank picker, divergence, and the explorer view of each compilation."""
        return Path(slots.write_traceset_html(self, path))

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        """Notebooks show the TraceSet widget (rank picker over the explorer view) when it is
        available, else the static HTML rendering of the summary."""
        if any(len(r) for r in self.ranks.values()):
            bundle = slots.widget_bundle(slots.traceset_widget, lambda: self, include, exclude, "text/plain", lambda: repr(self))
            if bundle is not None:
                return bundle
        return {"text/plain": repr(self), "text/html": self._repr_html_()}

    def __repr__(self) -> str:
        return (f"TraceSet({self.path}: {len(self.ranks)} ranks, "
                f"{sum(len(r) for r in self.ranks.values())} compiles, {len(self.divergence)} divergences)")
