"""Torch's chromium events -> spans nested by time, the raw material of the compile-time report.

Torch's timers nest (``dynamo`` > ``entire_frame_compile`` > ``backend_compile`` > ... > ``compile_file``)
but some run on worker threads, so spans are nested by time, not by the order they were logged: each
span goes under the innermost span that was open when it started, clipped to that parent and to the end
of the sibling before it, so children never add up to more than their parent.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

KERNEL_BUILDS = "triton_kernel_info"  # torch's artifact at the end of a graph's kernel builds: {name: {compile_time_us}}


def kernel_builds_event(payload: Any, ts_us: float, compile_id: str | None) -> dict[str, Any] | None:
    """Torch's ``triton_kernel_info`` artifact (logged when a graph's Triton kernels are built: each kernel's
    build time in a compile worker) as an instant event at ``ts_us`` (µs on the events' clock), or None."""
    if not isinstance(payload, dict):
        return None
    builds = {str(name): float(info["compile_time_us"]) for name, info in payload.items()
              if isinstance(info, dict) and isinstance(info.get("compile_time_us"), (int, float))}
    return {"name": KERNEL_BUILDS, "ph": "i", "ts": ts_us, "args": {"compile_id": compile_id, "builds_us": builds}} \
        if builds else None

@dataclass
class Span:
    name: str
    start: int  # ns
    end: int
    args: dict[str, Any]
    children: list["Span"] = field(default_factory=list)

    @property
    def compile_id(self) -> str | None:
        value = self.args.get("compile_id")
        return None if value in (None, "None") else str(value)


def spans_of(events: Iterable[dict[str, Any]], start: int, end: int) -> tuple[list[Span], list[dict[str, Any]]]:
    """B/E pairs (matched by name, innermost first) and X events as spans inside [start, end]; instants apart."""
    spans: list[Span] = []
    instants: list[dict[str, Any]] = []
    open_spans: dict[str, list[tuple[int, dict[str, Any]]]] = {}
    for event in events:
        phase, name = event.get("ph"), str(event.get("name", ""))
        ts = int(float(event.get("ts", 0)) * 1000)
        args = event.get("args") if isinstance(event.get("args"), dict) else {}
        if phase == "B":
            open_spans.setdefault(name, []).append((ts, dict(args)))
        elif phase == "E" and open_spans.get(name):
            begun, begin_args = open_spans[name].pop()
            spans.append(Span(name, begun, ts, {**begin_args, **args}))
        elif phase == "X":
            spans.append(Span(name, ts, ts + int(float(event.get("dur", 0)) * 1000), dict(args)))
        elif phase == "i":
            instants.append(event)
    clipped = [Span(s.name, max(s.start, start), min(s.end, end), s.args) for s in spans]
    kept = [s for s in clipped if s.end > s.start]
    note_cache_savings(kept, instants)
    return kept, instants


def note_cache_savings(spans: list[Span], instants: list[dict[str, Any]]) -> None:
    """An FX graph cache hit carries ``time_saved_ns`` (the compile the cache skipped): it goes into the
    args of the span that looked the cache up (one with a ``cache_state``: ``inductor_compile``, or
    ``backend_compile`` when AOTAutograd's cache hit) as ``cache_time_saved_s``: the innermost such span
    holding the hit's time, else the one starting nearest it (torch stamps a hit with its compile's start)."""
    lookups = [s for s in spans if "cache_state" in s.args]
    for event in instants:
        saved = (event.get("args") or {}).get("time_saved_ns") if isinstance(event.get("args"), dict) else None
        if not lookups or not isinstance(saved, (int, float)) or isinstance(saved, bool):
            continue
        ts = int(float(event.get("ts", 0)) * 1000)
        holding = [s for s in lookups if s.start <= ts <= s.end]
        owner = (min(holding, key=lambda s: s.end - s.start) if holding
                 else min(lookups, key=lambda s: abs(s.start - ts)))
        owner.args["cache_time_saved_s"] = round(saved / 1e9, 6)


def nest(spans: list[Span]) -> list[Span]:
    """Spans as a forest: each under the innermost open span at its start, clipped to fit."""
    roots: list[Span] = []
    stack: list[Span] = []
    for span in sorted(spans, key=lambda s: (s.start, -s.end)):
        while stack and stack[-1].end <= span.start:
            stack.pop()
        siblings = stack[-1].children if stack else roots
        if siblings:
            span.start = max(span.start, siblings[-1].end)
        if stack:
            span.end = min(span.end, stack[-1].end)
        if span.end <= span.start:
            continue
        siblings.append(span)
        stack.append(span)
    return roots


def merged(intervals: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for start, end in sorted(intervals):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def without(intervals: list[tuple[int, int]], taken: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """``intervals`` (merged) less the parts ``taken`` (merged) covers."""
    out: list[tuple[int, int]] = []
    for start, end in intervals:
        for s, e in taken:
            if e <= start or s >= end:
                continue
            if s > start:
                out.append((start, s))
            start = max(start, e)
            if start >= end:
                break
        if start < end:
            out.append((start, end))
    return out


def overlap(intervals: list[tuple[int, int]], start: int, end: int) -> int:
    return sum(max(0, min(e, end) - max(s, start)) for s, e in intervals if s < end and e > start)
