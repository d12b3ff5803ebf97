"""Where the GPU time of a profile went: every CUDA activity launched inside a compiled graph's call, given
to the explorer kernel that launched it, from the profiler's native events (no mark per kernel call).

A GPU activity (kernel, memcpy, memset) is linked by CUPTI to the innermost host event it was launched
under. That event tells:

1. the graph call: the explorer's mark ``explorer-graph:g0`` spanning it on its thread (a backward graph
   runs on autograd's device thread, so marks are looked up per thread);
2. the kernel: the wrapper's top-level call inside that graph call spanning the launch, either
   Inductor's own event around a Triton launch (named after the kernel) or an operator matched in
   wrapper order to the graph's extern kernels (``aten::mm`` to the graph's next ``extern_kernels.mm``);
3. where no host event tells (the launch sat directly under the graph mark), a CUDA kernel named as one
   of the graph's Triton kernels;
4. a kernel replayed from a CUDA graph (``mode="reduce-overhead"``): every kernel of one replay shares its
   ``cudaGraphLaunch``; they are matched together to the recorded function's kernels
   (compiler/runs/cudagraph_attribution.py).

What was launched inside a graph call and none of these explains is unattributed, under its CUDA name.
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from .._torch.profiling import RawEvent
from ..model.profile import KernelRef
from .cudagraph_attribution import ReplayKeys, graph_launches
from .externs import externs_in_wrapper_order


@dataclass
class Attributed:
    """Sums over every profiled run (µs); the caller divides by the runs."""

    kernel_us: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    calls: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    total_us: float = 0.0
    unattributed: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    timeline: list[list[Any]] = field(default_factory=list)  # the last run: [key, start_us, duration_us]
    key_of_correlation: dict[int, str] = field(default_factory=dict)  # a GPU activity's correlation -> key
    # each kernel's time in each profiled run (run index -> µs), launched inside that run's mark: how much a
    # kernel's time moves from run to run (compiler/model/unstable_times.py)
    run_us: dict[str, dict[int, float]] = field(default_factory=lambda: defaultdict(lambda: defaultdict(float)))


@dataclass
class _GraphCall:
    graph: str
    start: int
    end: int
    tops: list[RawEvent]  # the wrapper's top-level host events inside the call, by start
    starts: list[int]
    keys: list[str | None]  # the profile key each top-level event stands for


class _Sorted:
    """A profile's events by what they are to the attribution: device activities, and host events of their
    own (runtime calls are linked to one), by correlation id, split into graph-call marks, run marks and
    the host operators inside graph calls."""

    def __init__(self, events: list[RawEvent], run_mark: str, graph_prefix: str) -> None:
        self.host: dict[int, RawEvent] = {}
        self.activities: list[RawEvent] = []
        self.marks: dict[int, list[RawEvent]] = defaultdict(list)  # graph-call marks, by thread
        self.ops: dict[int, list[RawEvent]] = defaultdict(list)  # other host events, by thread
        self.runs: list[RawEvent] = []  # run marks, by start
        for event in events:
            if event.on_device:
                self.activities.append(event)
            elif event.linked == 0:
                self.host[event.correlation] = event
                if event.name.startswith(graph_prefix):
                    self.marks[event.thread].append(event)
                elif event.name == run_mark:
                    self.runs.append(event)
                else:
                    self.ops[event.thread].append(event)
        self.runs.sort(key=lambda e: e.start_ns)


class _Graphs:
    """Per graph: its kernels by name and its extern calls in wrapper order."""

    def __init__(self, c: Any, refs: dict[str, KernelRef]) -> None:
        self.by_name: dict[str, dict[str, str]] = defaultdict(dict)
        for key, ref in refs.items():
            if ref.language != "extern":
                self.by_name[ref.graph][c.graph(ref.graph).kernel(ref.kernel).name] = key
        self.externs = externs_in_wrapper_order(c, refs)

    def keys_of(self, graph: str, tops: list[RawEvent]) -> list[str | None]:
        names = self.by_name.get(graph, {})
        pending = list(self.externs.get(graph, []))
        keys: list[str | None] = []
        for event in tops:
            key = names.get(event.name)
            if key is None:
                match = next((i for i, (_, op) in enumerate(pending) if op == event.name), None)
                key = pending.pop(match)[0] if match is not None else None
            keys.append(key)
        return keys


def _graph_calls(marks: list[RawEvent], ops: list[RawEvent], prefix: str, graphs: _Graphs) -> list[_GraphCall]:
    """One thread's graph calls, each with the top-level host events inside it."""
    ops.sort(key=lambda e: (e.start_ns, -e.end_ns))
    op_starts = [e.start_ns for e in ops]
    calls = []
    for mark in sorted(marks, key=lambda e: e.start_ns):
        tops: list[RawEvent] = []
        edge = mark.start_ns
        i = bisect.bisect_left(op_starts, mark.start_ns)
        while i < len(ops) and ops[i].start_ns < mark.end_ns:
            if ops[i].start_ns >= edge:  # not inside the previous top-level event
                tops.append(ops[i])
                edge = ops[i].end_ns
            i += 1
        graph = mark.name[len(prefix):]
        calls.append(_GraphCall(graph, mark.start_ns, mark.end_ns, tops, [e.start_ns for e in tops],
                                graphs.keys_of(graph, tops)))
    return calls


def _enclosing(starts: list[int], at: int) -> int:
    """Index of the last item starting at or before ``at`` (-1: none)."""
    return bisect.bisect_right(starts, at) - 1


def attribute_gpu(c: Any, refs: dict[str, KernelRef], events: list[RawEvent], run_mark: str,
                  graph_prefix: str) -> Attributed:
    """Attribute the GPU activities of ``events`` (runs marked ``run_mark``, graph calls marked
    ``graph_prefix + graph id``) to the kernels of compilation ``c``."""
    graphs = _Graphs(c, refs)
    sorted_events = _Sorted(events, run_mark, graph_prefix)
    host, activities, runs = sorted_events.host, sorted_events.activities, sorted_events.runs
    calls = {thread: _graph_calls(items, sorted_events.ops[thread], graph_prefix, graphs)
             for thread, items in sorted_events.marks.items()}
    call_starts = {thread: [call.start for call in items] for thread, items in calls.items()}
    run_starts = [run.start_ns for run in runs]
    last = runs[-1] if runs else None
    out = Attributed()
    for items in calls.values():
        for call in items:
            for key in call.keys:
                if key is not None:
                    out.calls[key] += 1
    (launches, replays), replay_keys = graph_launches(events), ReplayKeys(c, refs)
    in_replay = {id(e): i for group in replays.values() for i, e in enumerate(group)}
    for activity in activities:
        launcher = host.get(activity.linked)
        if launcher is None or launcher.thread not in calls:  # a replayed kernel linked to no host operator
            launcher = launches.get(activity.correlation)
        if launcher is None or launcher.thread not in calls:
            continue
        thread_calls = calls[launcher.thread]
        at = launcher.start_ns
        index = _enclosing(call_starts[launcher.thread], at)
        if index < 0 or at > thread_calls[index].end:
            continue  # launched outside the compiled graphs (eager code between graphs, autograd's own work)
        call = thread_calls[index]
        spent = (activity.end_ns - activity.start_ns) / 1e3
        out.total_us += spent
        replay = replays.get(activity.correlation)
        if replay is not None:
            key, starts = replay_keys.keys(call.graph, activity.correlation, replay)[in_replay[id(activity)]]
            if key is not None and starts:
                out.calls[key] += 1
        else:
            top = _enclosing(call.starts, at)
            key = call.keys[top] if top >= 0 and at <= call.tops[top].end_ns else None
            if key is None:
                key = graphs.by_name.get(call.graph, {}).get(activity.name)
                if key is not None:
                    out.calls[key] += 1
        if key is None:
            out.unattributed[activity.name] += spent
            continue
        out.kernel_us[key] += spent
        if replay is None:  # a replay's kernels share one correlation: it names none of them
            out.key_of_correlation[activity.correlation] = key
        run = _enclosing(run_starts, at)
        if run >= 0 and at <= runs[run].end_ns:
            out.run_us[key][run] += spent
        if last is not None and last.start_ns <= at <= last.end_ns:
            out.timeline.append([key, round((activity.start_ns - last.start_ns) / 1e3, 3), round(spent, 3)])
    return out
