"""A watch report as the live watch view receives it (``contract.WatchPayload``): plain JSON, built here
from the model's records (compiler/model/watch.py), so the view is checked without a browser and the
widget only shows what it is sent.

The timeline stays small however long the loop runs: past ``max_bars`` steps, consecutive steps share a
bar (its mean and its slowest step), and the events keep their own step, so a recompile at step 90,000 is
still marked where it happened. Events are the compiles, recompiles and graph breaks, each with the detail
the view shows when it is picked (reason, failed guard, file:line, the value that broke it); under CUDA graphs
the CUDA graph tree's events come apart (``cudagraphs``: one row per step and function, replays counted), and
each frame says how often its graphs replayed.
"""

from __future__ import annotations

from ..model.contract import (WatchBreakEvent, WatchCompileEvent, WatchCudaGraphEvent, WatchFrameRow, WatchHeadline,
                              WatchPayload, WatchTimeline)
from ..model.watch import BreakCount, CompileEvent, FrameStats, Step, WatchReport
from ..model.watch_cudagraphs import CudaGraphStepEvent

MAX_BARS = 400


def _timeline(steps: list[Step], max_bars: int) -> WatchTimeline:
    """Bars of ``[first step, last step, mean ms, max ms]``: one step each, or ``per_bar`` steps each."""
    per_bar = max(1, -(-len(steps) // max_bars))
    bars: list[list[float]] = []
    for start in range(0, len(steps), per_bar):
        chunk = steps[start:start + per_bar]
        times = [s.seconds * 1e3 for s in chunk]
        bars.append([chunk[0].index, chunk[-1].index, sum(times) / len(times), max(times)])
    return {"steps": len(steps), "per_bar": per_bar, "bars": bars}


def _compile_event(event: CompileEvent) -> WatchCompileEvent:
    guard = event.guard
    return {
        "id": event.compile_id,
        "kind": "recompile" if event.is_recompile else "compile",
        "step": event.step,
        "function": event.function,
        "reason": event.reason,
        "guard": guard.code if guard is not None else None,
        "file": event.file,
        "line": event.line,
        "value": event.value,
        "seconds": event.seconds,
        "cache": dict(event.cache),
        "skipped": event.skipped,
    }


def _break_event(number: int, entry: BreakCount, steps: dict[str, int | None]) -> WatchBreakEvent:
    """A graph break, marked at the step of the first compile that hit it."""
    step = next((steps[cid] for cid in entry.compile_ids if steps.get(cid) is not None), None)
    return {
        "id": f"break {number}",
        "kind": "break",
        "step": step,
        "function": entry.function,
        "reason": entry.reason,
        "guard": None,
        "file": entry.filename,
        "line": entry.line,
        "value": None,
        "count": entry.count,
        "compiles": list(entry.compile_ids),
    }


def _frame_row(frame: FrameStats) -> WatchFrameRow:
    return {
        "frame": frame.frame_id,
        "function": frame.function,
        "file": frame.filename,
        "line": frame.line,
        "calls": frame.calls,
        "ms": frame.seconds * 1e3 if frame.timed_calls else None,
        "compiles": len(frame.compile_ids),
        "recompiles": frame.recompiles,
        "breaks": frame.graph_breaks,
        "cudagraph_replays": frame.cudagraph_replays,
        "cudagraph_skips": frame.cudagraph_skips,
    }


def _cudagraph_event(event: CudaGraphStepEvent) -> WatchCudaGraphEvent:
    return {
        "step": event.step,
        "compile": event.compile_id,
        "function": event.function,
        "kind": event.kind.value,  # type: ignore[typeddict-item]  # EventKind's values, the Literal's
        "mode": event.mode,
        "count": event.count,
        "reason": event.reason,
    }


def watch_payload(report: WatchReport, max_bars: int = MAX_BARS) -> WatchPayload:
    """What the live watch view draws of ``report`` (a live watch's snapshot, or a log's report)."""
    steps_of = {c.compile_id: c.step for c in report.compiles}
    events: list[WatchCompileEvent | WatchBreakEvent] = [_compile_event(c) for c in report.compiles]
    events += [_break_event(i, b, steps_of) for i, b in enumerate(report.graph_breaks)]
    headline: WatchHeadline = {"summary": report.summary(), "source": report.source, "error": report.error,
                               "sample_every": report.sample_every, "step_rule": report.steps_made_by}
    return {
        "headline": headline,
        "timeline": _timeline(report.steps, max_bars),
        "events": events,
        "frames": [_frame_row(f) for f in report.frames],
        "cudagraphs": [_cudagraph_event(e) for e in report.cudagraph_events],
        "active": report.active,
    }
