"""TraceSet: the compilations of a multi-rank job, per rank and compile id (compiler/model/traceset.py),
read from a TORCH_TRACE directory: every rank's log is indexed and each compile summarized from the index
alone, so the cross-rank summary is ready before any graph is parsed."""

from __future__ import annotations

from pathlib import Path

from ..model.errors import TraceLoadError
from ..model.formatting import where
from ..model.compile_time import CompileTimeReport
from ..model.compile_time_build import build as build_compile_time
from ..model.traceset import CompileSummary, OpenedCompilations, RankSummary, RankTrace, TraceSet, divergence
from ..model.watch import WatchReport
from . import aot_log
from .trace_import import LogIndex, compilation_from_log, find_logs, index_log, rank_in_name, rank_timer_call


def _summarize(index: LogIndex, rank: str) -> RankSummary:
    stage = index.dynamo.stage({})
    frames = {f.compile_id: f for f in stage.frames}
    compiles = []
    for compile_id, entry in index.compiles.items():
        frame = frames.get(compile_id)
        if aot_log.is_aot(compile_id):  # an AOTInductor compile: Inductor without a Dynamo frame
            compiles.append(CompileSummary(compile_id=compile_id, function="AOTInductor"))
            continue
        if frame is None:
            continue  # records without a frame compile (a lazily compiled backward's context)
        metrics = [m for m in stage.compile_metrics if m.compile_id == compile_id]
        compiles.append(CompileSummary(
            compile_id=compile_id, function=frame.function, graph=entry.graph_checksum, graph_nodes=entry.graph_nodes,
            seconds=round(sum(m.seconds for m in metrics), 6),
            graph_breaks=[f"{(where(b.user_line, full_path=True) or '?')} {b.reason}" for b in stage.graph_breaks if b.compile_id == compile_id],
            recompile_reasons=[reason.splitlines()[0] for r in stage.recompiles if r.compile_id == compile_id
                               for reason in r.reasons if reason.strip()]))
    return RankSummary(rank=rank, log=str(index.path), torch=index.torch, compiles=compiles,
                       problems=index.problems.messages())


def load_trace(path: str | Path) -> TraceSet:
    """Read a TORCH_TRACE directory (one log per rank) or one log: a TraceSet per rank and compile id.

    Unknown and malformed records are counted in each rank's ``summary.problems``, never fatal;
    nothing in a log is evaluated. Raises TraceLoadError only when nothing can be read.
    """
    logs = find_logs(path)
    indexes = [index_log(log) for log in logs]
    if not any(i.records for i in indexes):
        raise TraceLoadError(f"{path} holds no TORCH_TRACE records: {', '.join(log.name for log in logs[:5])} "
                             "do not look like logs torch writes under TORCH_TRACE=dir")
    ranks: dict[str, RankTrace] = {}
    opened = OpenedCompilations()  # the compilations read so far, kept as long as they are used
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
        ranks[key] = RankTrace(_summarize(index, key), index, compilation_from_log, rank_compile_time,
                               watch_of=rank_watch, opened=opened)
    versions = {r.summary.torch for r in ranks.values() if r.summary.torch}
    if len(versions) > 1:
        problems.append(f"the ranks ran different torch versions: {sorted(versions)}")
    summaries = [r.summary for r in ranks.values()]
    return TraceSet(str(path), ranks, divergence(summaries), problems)


def rank_watch(index: LogIndex) -> WatchReport:
    """One rank's watch report (``ts[rank].watch()``), read from its log when first asked for (the watch
    module imports torch, which reading a log otherwise never does)."""
    from .watch_log import watch_of_log

    return watch_of_log(index.path, index)


def rank_compile_time(index: LogIndex, rank: str) -> CompileTimeReport | None:
    """One rank's compile-time report over its whole log, read from its timer events when first asked for."""
    call = rank_timer_call(index)
    return build_compile_time([call], [], index.dynamo.stage({}), rank=rank) if call is not None else None


