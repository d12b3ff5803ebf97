"""What ``c.compile_time`` is built from (compiler/model/compile_time.py), kept raw while a capture runs: torch's
timer events and per-kernel build times, and the explorer's own intervals of the call running now. The report
is built from them when first asked for, not here."""

from __future__ import annotations

import contextlib
import time
from typing import Any, Callable, Iterator

from ...model import phases
from ...model.compile_time import CompileCall
from ...model.compile_time_build import KERNEL_BUILDS, kernel_builds_event
from ...model.trace_log import Record

# torch's timers (dynamo_timed) and its per-kernel build times (an artifact), kept for c.compile_time
COMPILE_TIME_READS = frozenset({"chromium_event", KERNEL_BUILDS})


class CompileTimeRecorder:
    """The compile's time, one call at a time: each call that may compile (the capture's, a recompile's) is a
    ``CompileCall`` of its own. ``record``: False keeps nothing (benchmarks/compile_time.py measures what
    keeping it costs)."""

    def __init__(self, record: bool) -> None:
        self.record = record
        self.call_start = 0
        self.prepared = 0  # when the call was ready to compile (its startup done)
        self.in_call = False  # between begin_call and end_call: own work lands in that call's intervals
        self.calls: list[CompileCall] | None = None  # the compilation's compile_calls, once it exists
        self.collecting_from = 0  # when torch returned and the explorer began reading what it captured
        self.chromium_events: list[dict[str, Any]] = []
        self.hook_intervals: list[tuple[str, int, int]] = []
        self.autotune_owners: list[tuple[int, int, tuple[str, ...], int]] = []

    def keeps(self, record: Record) -> bool:
        return self.record and record.name in COMPILE_TIME_READS

    def add(self, record: Record) -> None:
        """A timer event, or the builds of a graph's kernels, which are logged as they end: stamped now."""
        event = record.json_payload()
        if record.name == KERNEL_BUILDS:
            event = kernel_builds_event(event, time.time_ns() / 1000, record.compile_id)
        if isinstance(event, dict):
            self.chromium_events.append(event)

    def timed(self, hook: Callable[..., Any]) -> Callable[..., Any]:
        """``hook`` with its own time noted: what the explorer adds inside torch's phases is its own row."""
        if not self.record:
            return hook
        name, intervals = hook.__name__, self.hook_intervals

        def timed_hook(*args: Any, **kwargs: Any) -> Any:
            start = time.time_ns()
            try:
                return hook(*args, **kwargs)
            finally:
                intervals.append((name, start, time.time_ns()))

        return timed_hook

    def begin_call(self, since: int | None = None) -> None:
        """A call that may compile starts: its events are kept apart from the previous call's. ``since``: when
        the caller's call began (``time.time_ns``), before the capture's imports and setup, which are the
        call's ``startup`` (compiler/model/phases.py)."""
        self.prepared = time.time_ns()
        self.call_start = min(since, self.prepared) if since is not None else self.prepared
        self.chromium_events, self.hook_intervals, self.autotune_owners = [], [], []
        if self.call_start < self.prepared:
            self.hook_intervals.append((phases.STARTING, self.call_start, self.prepared))
        self.in_call = True

    def end_call(self, kind: str, collecting_from: int) -> CompileCall:
        """The call's record, its collecting (after torch returned) counted as the explorer's own."""
        end = time.time_ns()
        self.hook_intervals.append(("collecting stages", collecting_from, end))
        self.in_call = False
        return CompileCall(kind, self.call_start, end, self.chromium_events, self.hook_intervals, self.autotune_owners)

    @contextlib.contextmanager
    def spent(self, name: str) -> Iterator[None]:
        """The block's time, one of the explorer's own intervals named ``name`` (a phase's ``hooks``)."""
        start = time.time_ns()
        try:
            yield
        finally:
            if self.record:
                self.hook_intervals.append((name, start, time.time_ns()))

    def retraced(self, rebuild: Callable[[], Any]) -> Callable[[], Any]:
        """``rebuild`` (a served graph's post-grad GraphModule, made when first read), its time kept as the
        warm capture's own: an interval of the call running then, or else a ``replay`` call of its own in the
        compilation's ``compile_calls``, so ``c.compile_time`` shows it (phase ``served``)."""
        def run() -> Any:
            start = time.time_ns()
            try:
                return rebuild()
            finally:
                end = time.time_ns()
                if self.record and self.in_call:
                    self.hook_intervals.append((phases.RETRACING, start, end))
                elif self.record and self.calls is not None:
                    self.calls.append(CompileCall("replay", start, end, hooks=[(phases.RETRACING, start, end)]))

        return run

    def charge_autotuning(self, graph: int, nodes: tuple[str, ...]) -> None:
        """An autotuning of ``nodes`` of inner compile ``graph`` reported a choice: one note per autotuning,
        its choices counted, so its time is charged to those nodes."""
        last = self.autotune_owners[-1] if self.autotune_owners else None
        if last is not None and last[1:3] == (graph, nodes):
            self.autotune_owners[-1] = (*last[:3], last[3] + 1)
        else:
            self.autotune_owners.append((time.time_ns(), graph, nodes, 1))
