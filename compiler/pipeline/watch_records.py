"""A watch's records and what they say: Dynamo's structured trace records of a run (each compile's start,
guards, recompile reasons, graph breaks, metrics, cache hits and misses), the step each compile began in,
and the report's parts made from them (compiles with their failed guard, line and value; graph breaks with
how often they fired; compiled frames with their calls, and their CUDA graph replays and skips from the
events a live watch kept, watch_cudagraphs.py).

The records are read by the Dynamo stage's own reader (``dynamo_records.DynamoRecords``), so a watch and a
capture say the same thing of the same compile. The live watch (watch.py) and a log read back
(watch_log.py) both fill a ``RunRecords`` and make their report with the functions below.
"""

from __future__ import annotations

import json
import re
from typing import Any, Callable, Sequence

from .._torch import structured_trace, watch_earlier, watch_hooks
from ..model.cudagraphs import EventKind
from ..model.dynamo import DynamoFrame, DynamoStage, Guard
from ..model.trace_log import Record
from ..model.watch import STEP_MARK, BreakCount, CompileEvent, FrameStats, StepRule
from ..model.watch_cudagraphs import CudaGraphStepEvent
from .frames import best_line
from .dynamo_records import READS, DynamoRecords

# the cache artifacts torch logs per compile (FX graph cache, AOTAutograd cache): name -> (cache, state)
CACHE_RECORDS: dict[str, tuple[str, str]] = {
    f"{prefix}_{state}": (cache, state)
    for prefix, cache in (("fx_graph_cache", "fx_graph"), ("aotautograd_cache", "aotautograd"))
    for state in ("hit", "miss", "bypass")
}
WATCH_READS = READS | frozenset(CACHE_RECORDS)
# the records after which listeners are told (a compile began or ended, a recompile's reasons, a break)
NOTIFYING = frozenset({"dynamo_start", "recompile_reasons", "dynamo_graph_break_reason", "compilation_metrics"})

_REASON = re.compile(r"^(?P<cid>[!\d/_]+): (?P<text>.*)$", re.S)
_ACTUAL = re.compile(r"expected (?P<expected>.+?), actual (?P<actual>[^\s.,;]+(?:\.\d+)?)")
_TENSOR = re.compile(r"^tensor '(?P<name>[^']+)'")
_COMPARED = re.compile(r"^(?P<lhs>.+?) (?:==|!=|is not|is|<=|>=|<|>) (?P<rhs>.+)$")
_USER_STACK = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+)')
_SOURCE_NAME = re.compile(r"\b[LG]\['([^']+)'\]")


def _plain(code: str) -> str:
    """Dynamo's guard code with its sources written as its reasons write them (``L['self'].n`` -> ``self.n``)."""
    return " ".join(_SOURCE_NAME.sub(r"\1", code).split())


def _split_reason(reason: str) -> tuple[str | None, str]:
    """``"0/0: self.n == 1  # line  # file:7 in f\\nUser stack..."`` -> ("0/0", "self.n == 1")."""
    match = _REASON.match(reason.strip())
    cid, text = (match["cid"], match["text"]) if match else (None, reason.strip())
    return cid, text.splitlines()[0].split("  # ")[0].strip() if text else ""


def reason_value(reason: str, read: Callable[[str], str | None] = lambda _: None) -> str | None:
    """The value that broke the guard: Dynamo's own ``actual ...`` when it says it, else the guarded
    expression read by ``read`` (the frame being recompiled, live only)."""
    actual = _ACTUAL.search(reason)
    if actual:
        return actual["actual"]
    _, code = _split_reason(reason)
    compared = _COMPARED.match(code)
    return read(compared["lhs"]) if compared else None


class RunRecords:
    """Every record of a run that a watch reads, and the step each compile began in."""

    def __init__(self, filenames: dict[int, str] | None = None) -> None:
        self.dynamo = DynamoRecords(filenames)
        self.order: list[str] = []  # compile ids, in the order they began
        self.steps: dict[str, int | None] = {}
        self.cache: dict[str, dict[str, str]] = {}
        self.values: dict[str, str | None] = {}
        self.rule: StepRule | None = None  # the step rule a log's step marks name (the last one read)
        self.changed = False

    @classmethod
    def live(cls) -> "RunRecords":
        """The records of this process from now on, knowing the file names it interned before."""
        return cls(structured_trace.interned_filenames())

    def all_began_in(self, step: int) -> list[str]:
        """Place every compile so far in ``step`` (a stronger step rule took over); their ids."""
        for cid in self.order:
            self.steps[cid] = step
        self.changed = True
        return list(self.order)

    def knows(self, compile_id: str) -> bool:
        """Whether a record of ``compile_id`` was read (a compile's first record is its first sign)."""
        return compile_id in self.steps

    def add(self, record: Record, step: int | None, read_value: Callable[[str], str | None] | None = None) -> None:
        cid = record.compile_id
        if cid is not None and cid not in self.steps:
            self.steps[cid] = step
            self.order.append(cid)
        if record.name == STEP_MARK:
            self._place(record.payload)
            return
        cached = CACHE_RECORDS.get(record.name)
        if cached is not None and cid is not None:
            self.cache.setdefault(cid, {})[cached[0]] = cached[1]
        if record.name in READS:
            self.dynamo.add(record)
            if record.name == "recompile_reasons" and cid is not None and read_value is not None:
                reasons = self.dynamo.frames[cid].recompile_reasons if cid in self.dynamo.frames else []
                self.values[cid] = next((v for v in (reason_value(r, read_value) for r in reasons) if v), None)
        self.changed = True

    def _place(self, payload: str | None) -> None:
        """A step mark read back from a log (watch_hooks.log_step_mark): the step its compiles began in."""
        try:
            mark = json.loads(payload or "")
            step, compile_ids = int(mark["step"]), [str(c) for c in mark["compile_ids"]]
        except (ValueError, KeyError, TypeError):
            return
        if mark.get("rule") in {rule.value for rule in StepRule}:
            self.rule = StepRule(mark["rule"])
        for cid in compile_ids:
            if cid not in self.steps:
                self.order.append(cid)
            self.steps[cid] = step
        self.changed = True

    # --- the report's parts ------------------------------------------------------------------
    def compiles(self, stage: DynamoStage) -> list[CompileEvent]:
        """Every compile of the run with its step, reasons, failed guard and its line, value and cache states."""
        metrics = {m.compile_id: m for m in stage.compile_metrics if m.kind == "frame"}
        recompiles = {r.compile_id: r.reasons for r in stage.recompiles}
        by_id = {f.compile_id: f for f in stage.frames}
        # a recompile's reasons arrive before its start names the code: that code is its frame's earlier compiles'
        code_of: dict[str, DynamoFrame] = {}
        for f in stage.frames:
            if f.filename:
                code_of.setdefault(f.compile_id.split("/")[0], f)
        events: list[CompileEvent] = []
        for cid in self.order:
            found = by_id.get(cid)
            if found is None:
                continue
            frame = found if found.filename else code_of.get(cid.split("/")[0], found)
            reasons = recompiles.get(cid, [])
            failed = _failed_guard(reasons, stage.guards) if reasons else None
            guard_line = _user_line(failed, reasons, frame) if reasons else None
            value = self.values.get(cid)
            if value is None and reasons:
                value = reason_value(reasons[0])
            events.append(CompileEvent(
                compile_id=cid, function=frame.function, filename=frame.filename, function_line=frame.line,
                step=self.steps.get(cid), seconds=metrics[cid].seconds if cid in metrics else 0.0,
                reasons=list(reasons), guard=failed, guard_line=guard_line, value=value,
                cache=dict(self.cache.get(cid, {})),
                graph_breaks=[b for b in stage.graph_breaks if b.compile_id == cid], skipped=found.skipped))
        return events


def _failed_guard(reasons: list[str], guards: list[Guard]) -> Guard | None:
    """The guard of the earlier compile that the first reason names."""
    for reason in reasons:
        cid, code = _split_reason(reason)
        earlier = [g for g in guards if cid is None or g.compile_id == cid]
        tensor = _TENSOR.match(code)
        if tensor:
            match = next((g for g in earlier if g.kind == "TENSOR_MATCH" and g.source
                          and _plain(g.source) == tensor["name"]), None)
        else:
            match = next((g for g in earlier if _plain(g.code) == _plain(code)), None)
        if match is not None:
            return match
    return None


def _user_line(failed: Guard | None, reasons: list[str], frame: DynamoFrame) -> tuple[str, int] | None:
    """Where the failed guard came from, in the user's code: the guard's own line when it is the user's;
    when it is a library's (a tensor first used inside ``nn.Linear.forward``), the innermost user frame of
    the reason's ``User stack trace``, else the recompiled function itself (frames.best_line's rule)."""
    stack: list[tuple[str, int, str]] = []
    if frame.filename and frame.line:
        stack.append((frame.filename, frame.line, frame.function))
    for reason in reasons[:1]:
        stack += [(file, int(line), "") for file, line in _USER_STACK.findall(reason)]
    if failed is not None and failed.user_line:
        stack.append((failed.user_line[0], failed.user_line[1], ""))
    return best_line(stack)


def break_counts(stage: DynamoStage, calls: dict[str, int]) -> list[BreakCount]:
    """Each distinct break (user line and reason), fired once per call of the graph before it (or, when
    nothing was compiled before it, of the graph that resumes after it)."""
    merged: dict[tuple[Any, str], BreakCount] = {}
    for graph_break in stage.graph_breaks:
        cid = graph_break.compile_id or ""
        fired = calls.get(cid, 0) or (calls.get(graph_break.resume, 0) if graph_break.resume else 0)
        key = (graph_break.user_line, graph_break.reason)
        entry = merged.get(key)
        if entry is None:
            file, line = graph_break.user_line if graph_break.user_line else (None, None)
            function = graph_break.stack[-1][2] if graph_break.stack else ""
            entry = merged[key] = BreakCount(graph_break.reason, file, line, 0, function, [], graph_break)
        entry.count += fired
        if cid not in entry.compile_ids:
            entry.compile_ids.append(cid)
    return list(merged.values())


EARLIER_REASON = "(compiled before the watch began: Dynamo gave its reason then)"


def earlier_breaks(found: list[BreakCount], earlier: list[watch_earlier.EarlierGraph],
                   calls: dict[str, int]) -> list[BreakCount]:
    """``found`` with the breaks after graphs compiled before the watch began that fired during it: added
    to the break the watch saw at the same line, else one entry each, whose reason is unknown (Dynamo
    logged it before the watch listened)."""
    at_line = {(b.filename, b.line): b for b in found}
    for graph in earlier:
        if graph.resume is None:
            continue
        _, filename, line = graph.resume
        fired = calls.get(graph.compile_id, 0) if graph.graph else sum(calls.get(c, 0) for c in graph.resume_ids)
        entry = at_line.get((filename, line))
        if entry is None:
            if not fired:
                continue
            entry = at_line[(filename, line)] = BreakCount(EARLIER_REASON, filename, line, 0, graph.function)
            found.append(entry)
        entry.count += fired
        if graph.compile_id not in entry.compile_ids:
            entry.compile_ids.append(graph.compile_id)
    return found


def frame_stats(events: list[CompileEvent], graphs: dict[str, watch_hooks.GraphCalls], breaks: list[BreakCount],
                cudagraph_events: Sequence[CudaGraphStepEvent] = ()) -> list[FrameStats]:
    """Each compiled frame (compile ids "N/..." share frame N): its compiles, recompiles, calls, sampled time,
    the distinct breaks inside it, and its graphs' CUDA graph replays and skips."""
    stats_of: dict[str, FrameStats] = {}

    def frame_of(cid: str, function: str, filename: str | None, line: int | None) -> FrameStats:
        frame_id = cid.split("/")[0]
        stats = stats_of.get(frame_id)
        if stats is None:
            stats = stats_of[frame_id] = FrameStats(frame_id, function, filename, line)
        if cid not in stats.compile_ids:
            stats.compile_ids.append(cid)
        return stats

    for event in events:
        stats = frame_of(event.compile_id, event.function, event.filename, event.function_line)
        stats.recompiles += event.is_recompile
    for cid, graph in graphs.items():
        stats = frame_of(cid, graph.function, graph.filename, graph.line)
        stats.calls += graph.calls
        stats.timed_calls += graph.timed
        stats.timed_seconds += graph.seconds
    for entry in breaks:
        for cid in entry.compile_ids:
            frame = stats_of.get(cid.split("/")[0])
            if frame is not None:
                frame.graph_breaks += 1
                break
    for step_event in cudagraph_events:
        frame = stats_of.get(step_event.frame_id)
        if frame is not None and step_event.kind == EventKind.REPLAY:
            frame.cudagraph_replays += step_event.count
        elif frame is not None and step_event.kind == EventKind.SKIP:
            frame.cudagraph_skips += 1
    return list(stats_of.values())
