"""``explorer.load_watch``: the watch report of a run's TORCH_TRACE log, read with the live watch's own
record reader (watch_records.py), so a run watched live and its log read back say the same thing.

A log has no call counts: ``steps`` is empty and a break counts the compiles that hit it. A log has no
steps either, unless a watch marked them while it was written (``watch_hooks.log_step_mark``): then each
compile's ``step`` is the one the watch gave it, and the report names the rule that made the steps.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from ..model.errors import TraceLoadError
from ..model.trace_log import LogProblems, read_records
from ..model.watch import STEP_MARK, WatchReport
from .dynamo_records import PAYLOADS
from .watch_records import WATCH_READS, RunRecords, break_counts, frame_stats


def load_watch(path: str | Path, rank: int | None = None) -> WatchReport:
    """The watch report of a run's TORCH_TRACE log (a directory with one log per rank, or one log):
    compiles, recompiles with their reasons and failed guards, graph breaks, cache hits and misses. A log
    has no call counts (``steps`` is empty, breaks count the compiles that hit them); a compile's ``step``
    is known when the run was watched (the watch marks steps in the log), else None."""
    from .trace_import import find_logs, rank_in_name

    logs = find_logs(path)
    if len(logs) > 1:
        ranks = {rank_in_name(log): log for log in logs}
        if rank is None or rank not in ranks:
            raise TraceLoadError(f"{path} holds {len(logs)} logs (ranks {sorted(ranks, key=str)}): pick one with "
                                 "load_watch(path, rank=N)")
        log = ranks[rank]
    else:
        log = logs[0]
    return watch_of_log(log)


def watch_of_log(log: str | Path, index: Any = None) -> WatchReport:
    """The watch report of one TORCH_TRACE log; ``index``: its LogIndex when already read (a TraceSet's),
    else it is read when a compile's ``compilation()`` is first asked for."""
    from .trace_import import compilation_from_log, index_log

    run = RunRecords()
    problems = LogProblems()
    reads, payloads = WATCH_READS | {STEP_MARK}, PAYLOADS | {STEP_MARK}
    with open(log, "rb") as stream:
        for record, _ in read_records(stream, problems, wants_payload=lambda r: r.name in payloads):
            if record.name in reads:
                run.add(record, None)
    stage = run.dynamo.stage({})
    report = WatchReport(source=str(log), step_rule=run.rule)
    report.compiles = run.compiles(stage)
    indexes: list[Any] = [index] if index is not None else []

    def from_log(compile_id: str) -> Any:
        if not indexes:
            indexes.append(index_log(Path(log)))
        return compilation_from_log(indexes[0], compile_id)

    for event in report.compiles:
        event.capture_from = functools.partial(from_log, event.compile_id)
    report.graph_breaks = break_counts(stage, {e.compile_id: 1 for e in report.compiles})
    report.frames = frame_stats(report.compiles, {}, report.graph_breaks)
    report.notes += problems.messages()
    return report
