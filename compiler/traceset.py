"""TraceSet: the compilations of a multi-rank job, per rank and compile id, and where the ranks diverge.

``load_trace(dir)`` indexes every rank's TORCH_TRACE log (compiler/trace_import.py) and summarizes
each compile from the index alone, so the cross-rank summary is ready before any graph is parsed:
ranks that compiled different graphs (Dynamo's printed graph has a checksum in the log), recompiled,
broke graphs at other lines, or spent much longer compiling. ``ts[rank][compile_id]`` builds that
compile's Compilation on first access. A TraceSet saves to one JSON file (every compilation built)
and loads back without the logs.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterator

from .compilation import Compilation
from .errors import TraceFormatError, TraceLoadError
from .stages import _Rendered
from .trace_import import LogIndex, build_compilation, find_logs, index_log, rank_in_name

SCHEMA = "inductor-explorer/traceset"
VERSION = 1
SLOW_RATIO = 1.5  # a rank compiling this much longer than the median rank is reported...
SLOW_SECONDS = 1.0  # ...when it is also at least this many seconds longer


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
        return {**asdict(self), "seconds": self.seconds, "graphs": sum(1 for c in self.compiles if c.graph),
                "graph_break_count": len(self.graph_breaks), "recompile_count": len(self.recompiles)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "RankSummary":
        return cls(rank=str(data["rank"]), log=str(data.get("log", "")), torch=data.get("torch"),
                   compiles=[CompileSummary(**{k: c[k] for k in CompileSummary.__dataclass_fields__ if k in c})
                             for c in data.get("compiles", [])],
                   problems=[str(p) for p in data.get("problems", [])])


@dataclass
class Divergence:
    """One way the ranks did not compile alike."""

    kind: str  # graph | recompile | graph_break | compile_time
    summary: str
    ranks: dict[str, str]  # rank -> what that rank did
    compile_id: str | None = None

    def __repr__(self) -> str:
        return f"Divergence({self.kind}: {self.summary})"


def _summarize(index: LogIndex, rank: str) -> RankSummary:
    stage = index.dynamo.stage({})
    frames = {f.compile_id: f for f in stage.frames}
    compiles = []
    for compile_id, entry in index.compiles.items():
        frame = frames.get(compile_id)
        if frame is None:
            continue  # records without a frame compile (a lazily compiled backward's context)
        metrics = [m for m in stage.compile_metrics if m.compile_id == compile_id]
        compiles.append(CompileSummary(
            compile_id=compile_id, function=frame.function, graph=entry.graph_checksum, graph_nodes=entry.graph_nodes,
            seconds=round(sum(m.seconds for m in metrics), 6),
            graph_breaks=[f"{_line(b.user_line)} {b.reason}" for b in stage.graph_breaks if b.compile_id == compile_id],
            recompile_reasons=[reason.splitlines()[0] for r in stage.recompiles if r.compile_id == compile_id
                               for reason in r.reasons if reason.strip()]))
    return RankSummary(rank=rank, log=str(index.path), torch=index.torch, compiles=compiles,
                       problems=index.problems.messages())


def _line(user_line: tuple[str, int] | None) -> str:
    return f"{user_line[0]}:{user_line[1]}" if user_line else "?"


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


def _groups(values: dict[str, Any]) -> list[list[str]]:
    groups: dict[Any, list[str]] = {}
    for rank, value in values.items():
        groups.setdefault(value, []).append(rank)
    return list(groups.values())


class RankTrace(_Rendered):
    """One rank's compilations, by compile id (built from its log on first access)."""

    def __init__(self, summary: RankSummary, index: LogIndex | None = None,
                 compilations: dict[str, Compilation] | None = None) -> None:
        self.summary = summary
        self.index = index
        self._compilations: dict[str, Compilation] = dict(compilations or {})

    @property
    def rank(self) -> str:
        return self.summary.rank

    @property
    def compile_ids(self) -> list[str]:
        return [c.compile_id for c in self.summary.compiles]

    def __getitem__(self, compile_id: str) -> Compilation:
        if compile_id not in self._compilations:
            if self.index is None or compile_id not in self.compile_ids:
                raise KeyError(f"rank {self.rank} has no compile {compile_id!r}; compile ids: {self.compile_ids}")
            self._compilations[compile_id] = build_compilation(self.index, compile_id)
        return self._compilations[compile_id]

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


class TraceSet(_Rendered):
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

    def to_json(self) -> dict[str, Any]:
        """Every rank's summary and every compilation (built now if not yet), plus the divergence."""
        return {
            "schema": SCHEMA, "version": VERSION, "path": self.path, "problems": self.problems,
            "divergence": [asdict(d) for d in self.divergence],
            "ranks": [{"summary": r.summary.to_json(),
                       "compilations": {cid: c.to_json() for cid, c in r.compilations().items()}}
                      for r in self.ranks.values()],
        }

    def save(self, path: str | Path) -> Path:
        path = Path(path)
        path.write_text(json.dumps(self.to_json(), indent=1))
        return path

    def to_html(self, path: str | Path) -> Path:
        """One self-contained HTML file: rank picker, divergence, and the explorer view of each compilation."""
        from . import views

        write = views.renderer("traceset_html")
        if write is None:
            raise ImportError("the explorer view is not available: import explorer (and install "
                              "inductor-explorer[widgets]) to write HTML")
        return Path(write(self, path))

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        """Notebooks show the TraceSet widget (rank picker over the explorer view) when it is
        available, else the static HTML rendering of the summary."""
        from . import views

        if any(len(r) for r in self.ranks.values()):
            bundle = views.widget_bundle("traceset_widget", lambda: self, include, exclude, "text/plain", lambda: repr(self))
            if bundle is not None:
                return bundle
        return {"text/plain": repr(self), "text/html": self._repr_html_()}

    def __repr__(self) -> str:
        return (f"TraceSet({self.path}: {len(self.ranks)} ranks, "
                f"{sum(len(r) for r in self.ranks.values())} compiles, {len(self.divergence)} divergences)")


def load_trace(path: str | Path) -> TraceSet:
    """Read a TORCH_TRACE directory (one log per rank) or one log: a TraceSet per rank and compile id.

    Unknown and malformed records are counted in each rank's ``summary.problems``, never fatal;
    nothing in a log is evaluated. Raises TraceLoadError only when nothing can be read.
    """
    logs = find_logs(path)
    indexes = [index_log(log) for log in logs]
    if not any(i.records for i in indexes):
        raise TraceLoadError(f"{path} holds no TORCH_TRACE records: {', '.join(l.name for l in logs[:5])} "
                             "do not look like logs torch writes under TORCH_TRACE=dir")
    ranks: dict[str, RankTrace] = {}
    problems: list[str] = []
    unranked = 0
    for index in indexes:
        if not index.records:
            problems.append(f"{index.path.name}: no structured trace records (skipped)")
            continue
        rank = index.rank if index.rank is not None else rank_in_name(index.path)
        if rank is None:
            rank, unranked = unranked, unranked + 1
        key = str(rank)
        if key in ranks:
            key = f"{rank}@{index.path.stem}"
            problems.append(f"more than one log for rank {rank} (a directory shared by several runs?): "
                            f"{index.path.name} is kept as rank {key!r}")
        ranks[key] = RankTrace(_summarize(index, key), index)
    versions = {r.summary.torch for r in ranks.values() if r.summary.torch}
    if len(versions) > 1:
        problems.append(f"the ranks ran different torch versions: {sorted(versions)}")
    summaries = [r.summary for r in ranks.values()]
    return TraceSet(str(path), ranks, divergence(summaries), problems)


def from_json(data: Any, origin: str = "traceset") -> TraceSet:
    """A saved TraceSet (``TraceSet.save``): JSON only, nothing evaluated."""
    from .serialize import from_json as compilation_from_json

    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        raise TraceFormatError(f"{origin} is not a saved TraceSet (missing schema {SCHEMA!r})")
    if not isinstance(data.get("version"), int) or data["version"] > VERSION:
        raise TraceFormatError(f"{origin} uses TraceSet schema version {data.get('version')!r}, newer than this "
                               f"inductor-explorer reads ({VERSION}); upgrade inductor-explorer to open it")
    ranks: dict[str, RankTrace] = {}
    try:
        for entry in data.get("ranks", []):
            summary = RankSummary.from_json(entry["summary"])
            compilations = {str(cid): compilation_from_json(c, f"{origin} rank {summary.rank} {cid}")
                            for cid, c in (entry.get("compilations") or {}).items()}
            ranks[summary.rank] = RankTrace(summary, None, compilations)
        found = [Divergence(str(d["kind"]), str(d["summary"]), {str(k): str(v) for k, v in d["ranks"].items()},
                            d.get("compile_id")) for d in data.get("divergence", [])]
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise TraceFormatError(f"malformed TraceSet {origin}: {type(exc).__name__}: {exc}") from exc
    return TraceSet(str(data.get("path", origin)), ranks, found, [str(p) for p in data.get("problems", [])])

