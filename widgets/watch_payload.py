"""What the live watch view draws, from a watch (``explorer.watch()``) as plain JSON.

A pure function of the watch report (compiler/model/watch.py: ``steps``, ``compiles``, ``graph_breaks``,
``frames``, read by duck typing: widgets import nothing of the compiler beyond its contract), so the view
can be checked without a browser and the widget only decides *when* to send it.

The timeline stays small however long the loop runs: past ``max_bars`` steps, consecutive steps share a
bar (its mean and its slowest step), and the events keep their own step, so a recompile at step 90,000 is
still marked where it happened. Events are the compiles, recompiles and graph breaks, each with the detail
the view shows when it is picked (reason, failed guard, file:line, the value that broke it).
"""

from __future__ import annotations

from typing import Any

MAX_BARS = 400


def _timeline(steps: list[Any], max_bars: int) -> dict[str, Any]:
    """Bars of ``[first step, last step, mean ms, max ms]``: one step each, or ``per_bar`` steps each."""
    per_bar = max(1, -(-len(steps) // max_bars))
    bars = []
    for start in range(0, len(steps), per_bar):
        chunk = steps[start:start + per_bar]
        times = [s.seconds * 1e3 for s in chunk]
        bars.append([chunk[0].index, chunk[-1].index, sum(times) / len(times), max(times)])
    return {"steps": len(steps), "per_bar": per_bar, "bars": bars}


def _where(file: str | None, line: int | None) -> dict[str, Any]:
    return {"file": file, "line": line}


def _compile_event(event: Any) -> dict[str, Any]:
    guard = event.guard
    return {
        "id": event.compile_id,
        "kind": "recompile" if event.is_recompile else "compile",
        "step": event.step,
        "function": event.function,
        "reason": event.reason,
        "guard": guard.code if guard is not None else None,
        **_where(event.file, event.line),
        "value": event.value,
        "seconds": event.seconds,
        "cache": dict(event.cache),
        "skipped": event.skipped,
    }


def _break_event(number: int, entry: Any, steps: dict[str, Any]) -> dict[str, Any]:
    """A graph break, marked at the step of the first compile that hit it."""
    step = next((steps[cid] for cid in entry.compile_ids if steps.get(cid) is not None), None)
    return {
        "id": f"break {number}",
        "kind": "break",
        "step": step,
        "function": entry.function,
        "reason": entry.reason,
        "guard": None,
        **_where(entry.filename, entry.line),
        "value": None,
        "count": entry.count,
        "compiles": list(entry.compile_ids),
    }


def _frame_row(frame: Any) -> dict[str, Any]:
    return {
        "frame": frame.frame_id,
        "function": frame.function,
        **_where(frame.filename, frame.line),
        "calls": frame.calls,
        "ms": frame.seconds * 1e3 if frame.timed_calls else None,
        "compiles": len(frame.compile_ids),
        "recompiles": frame.recompiles,
        "breaks": frame.graph_breaks,
    }


def watch_payload(watch: Any, max_bars: int = MAX_BARS) -> dict[str, Any]:
    """``{"headline", "timeline", "events", "frames"}`` of a watch (live or loaded from a log)."""
    compiles = list(watch.compiles)
    steps_of = {c.compile_id: c.step for c in compiles}
    events = [_compile_event(c) for c in compiles]
    events += [_break_event(i, b, steps_of) for i, b in enumerate(watch.graph_breaks)]
    return {
        "headline": {"summary": watch.summary(), "source": watch.source, "error": watch.error,
                     "sample_every": watch.sample_every},
        "timeline": _timeline(list(watch.steps), max_bars),
        "events": events,
        "frames": [_frame_row(f) for f in watch.frames],
    }
