"""c.profile(): where the time goes when the compiled program runs as it runs in a program.

The compiled function is called ``warmup`` times, then ``runs`` times under torch.profiler, with its
real inputs, in its real order, caches warm. Every kernel execution is attributed to the explorer's
kernels:

- on CPU, generated C++ kernels are recorded under the explorer's id by swapping the wrapper's kernel
  globals for the duration of the profile (compiler/_torch/profiling.py); a kernel's time is its CPU
  time;
- on a GPU only each graph call is marked, and every CUDA kernel launched inside one goes to the
  Triton kernel or extern call that launched it (compiler/runs/gpu_attribution.py, from the
  profiler's native events, without building torch's event tree);
- extern calls (``extern_kernels.mm``, cuBLAS, cuDNN, flash attention...) are the operator events the
  wrapper makes directly inside a compiled graph's call, matched in wrapper order to the graph's
  ``extern`` kernels by operator name;
- under CUDA graphs (``mode="reduce-overhead"``) a replay's kernels are matched together to the recorded
  function's kernels (compiler/runs/cudagraph_attribution.py): the same kernel ids as launched one by one.
  Where the profiler reports no kernel inside a replay (CUPTI on some CUDA versions), the runs are recorded
  again with the same kernels launched one by one, and the profile says so in a note;
- what no kernel explains is ``unattributed_ms``, broken down by what it was (operator or CUDA kernel
  names; on CPU also the wrapper's own Python between kernels).

Times then spread upwards through provenance by what each node costs (compiler/model/attribution.py):
a kernel's time over the post-grad nodes it computes, each node's over the FX nodes it was made from, and
each FX node's to its line (``line_ms``: the source depth, a library model's own lines; ``p.lines(depth)``
and ``p.call_tree()`` for the others). Views get none, an extern kernel's node all of its kernel's.
"""

from __future__ import annotations

import bisect
import time
from collections import defaultdict
from typing import Any, Iterable

import torch

from .._torch import cudagraph_tree, profiling, runtime
from ..model import progress, slots
from ..model.keys import kernel_keys
from ..model.profile import KernelRef, Profile
from ..model.unstable_times import spread_note, thread_note, usable_cores
from . import replay
from .cudagraph_attribution import REPLAYS_UNSEEN_NOTE, replays_unseen
from .cudagraph_runs import observed
from .externs import externs_in_wrapper_order
from .gpu_attribution import attribute_gpu
from .named_attribution import attribute_named, uses_named_ranges

RUN_MARK = "inductor_explorer.run"
GRAPH_MARK = "explorer-graph:"  # + graph id: a compiled graph's call, marked on a GPU
_GRAPH_CALL = "## Call CompiledFxGraph"


class ProfilerBusyError(RuntimeError):
    """Another profiler is recording in this process; two cannot record at once."""


# ------------------------------------------------------------------------------------------ running


def _check(runs: Any, warmup: Any) -> None:
    for name, value, low in (("runs", runs, 1), ("warmup", warmup, 0)):
        if not isinstance(value, int) or isinstance(value, bool) or value < low:
            raise ValueError(f"profile({name}={value!r}): {name} must be an int >= {low}")


def _labels(c: Any, mark_kernels: bool) -> tuple[dict[str, KernelRef], list[tuple[dict[str, Any], dict[str, str]]]]:
    """Profile keys for every kernel, and the wrapper namespaces whose kernel globals get marked (none
    unless ``mark_kernels``)."""
    keys = kernel_keys(c)
    refs: dict[str, KernelRef] = {}
    namespaces = []
    for graph in c.graphs:
        labels: dict[str, str] = {}
        for kernel in graph.kernels:
            refs[keys[(graph.id, kernel.id)]] = KernelRef(graph.id, kernel.id, kernel.language)
            if kernel.language != "extern":
                labels[kernel.name] = _label(graph.id, kernel.id)
        if mark_kernels and labels and graph.compiled_fn is not None:
            namespace = runtime.wrapper_globals(graph.compiled_fn, list(labels))
            if namespace:
                namespaces.append((namespace, labels))
    return refs, namespaces


def _label(graph_id: str, kernel_id: str) -> str:
    return f"explorer:{graph_id}/{kernel_id}"


@slots.profile.fill
def profile(c: Any, runs: int = 20, warmup: int = 3) -> Profile:
    _check(runs, warmup)
    replay.check_runnable(c, "profile()")
    if profiling.profiler_active():
        raise ProfilerBusyError("profile(): another torch.profiler is already recording in this process; "
                                "stop it (leave its `with` block) and call profile() again")
    run = replay.runner(c)
    cuda = c.device.startswith("cuda")
    refs, namespaces = _labels(c, mark_kernels=not cuda)
    activities = [torch.profiler.ProfilerActivity.CPU] + ([torch.profiler.ProfilerActivity.CUDA] if cuda else [])
    graph_marks = [(g.compiled_fn, GRAPH_MARK + g.id) for g in c.graphs if g.compiled_fn is not None] if cuda else []
    walls: list[float] = []
    with progress.task(f"profile {c.function}") as task, profiling.marked_kernels(namespaces), \
            profiling.marked_graph_calls(graph_marks):
        with observed(c, "profile"):  # under CUDA graphs: the warm-up and recording show in g.cudagraphs.events
            for done in range(warmup):
                task.step("warm-up", done, warmup)
                run()
        replay.synchronize(c.device)
        prof = _recorded(c, run, runs, activities, task, walls)
        task.step("attributing", runs, runs)
        named_ranges, unseen = uses_named_ranges(c), False
        if cuda and not named_ranges:
            attributed = attribute_gpu(c, refs, profiling.raw_events(prof), RUN_MARK, GRAPH_MARK)
            unseen = replays_unseen(c, refs, attributed.kernel_us)
            if unseen:  # the same kernels launched one by one, for the times the replays did not report
                with cudagraph_tree.without_cuda_graphs():
                    prof = _recorded(c, run, runs, activities, task, [])
                attributed = attribute_gpu(c, refs, profiling.raw_events(prof), RUN_MARK, GRAPH_MARK)
        if named_ranges:  # a C++ wrapper: its kernels are the profiler ranges named after them
            named = attribute_named(c, refs, prof.events(), RUN_MARK, cuda)
            result = _profile_of(c, refs, runs, named.kernel_us, named.calls, named.total_us, named.unattributed,
                                 named.timeline, cuda)
        elif cuda:
            result = _profile_of(c, refs, runs, attributed.kernel_us, attributed.calls, attributed.total_us,
                                 attributed.unattributed, attributed.timeline, cuda)
            result._gpu_kernel_keys = attributed.key_of_correlation
            note = spread_note(run_ms(attributed.run_us), c.device)
            result.notes += ([note] if note else []) + ([REPLAYS_UNSEEN_NOTE] if unseen else [])
        else:
            result = attribute_cpu(c, refs, prof.events(), runs)
    result.notes += cpu_thread_notes(c.device)
    result.warmup = warmup
    result.wall_ms = 1e3 * sum(walls) / runs
    result.created = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    result._trace = prof
    return result


def _recorded(c: Any, run: Any, runs: int, activities: list[Any], task: Any, walls: list[float]) -> Any:
    """``runs`` calls under torch.profiler, each inside the run mark; each call's wall seconds go to ``walls``."""
    with profiling.recording(activities) as prof:
        for done in range(runs):
            task.step("profiling", done, runs)
            started = time.perf_counter()
            with torch.profiler.record_function(RUN_MARK):
                run()
                replay.synchronize(c.device)
            walls.append(time.perf_counter() - started)
    return prof


# ------------------------------------------------------------------------------------------ attribution


class _CpuAttribution:
    """A CPU profile's events, from torch's event tree: the explorer's kernel marks and the operators
    directly inside each graph call."""

    def __init__(self, c: Any, refs: dict[str, KernelRef]) -> None:
        self.key_of_label = {_label(r.graph, r.kernel): key for key, r in refs.items()}
        self.graph_of_label = {_label(r.graph, r.kernel): r.graph for r in refs.values()}
        self.externs = externs_in_wrapper_order(c, refs)  # graph id -> [(key, op name)] in wrapper order
        self.extern_names = {name for items in self.externs.values() for _, name in items if name}
        self.kernel_us: dict[str, float] = defaultdict(float)
        self.calls: dict[str, int] = defaultdict(int)
        self.unattributed: dict[str, float] = defaultdict(float)
        self.total_us = 0.0
        self.timeline: list[list[Any]] = []
        self.run_us: dict[str, dict[int, float]] = defaultdict(lambda: defaultdict(float))  # key -> run -> µs

    @staticmethod
    def time_of(event: Any) -> float:
        return float(event.cpu_time_total)

    def _flatten(self, event: Any) -> Iterable[Any]:
        """Direct work of a graph call: our kernel marks and operators, looking through plain annotations."""
        for child in event.cpu_children:
            if child.name in self.key_of_label or "::" in child.name or not child.cpu_children:
                yield child
            else:
                yield from self._flatten(child)

    def _graph_of(self, items: list[Any]) -> str | None:
        for item in items:
            if item.name in self.graph_of_label:
                return self.graph_of_label[item.name]
        ops = [i.name for i in items if i.name in self.extern_names]
        for graph, expected in self.externs.items():
            if ops and [name for _, name in expected] == ops:
                return graph
        return None

    def add_graph_call(self, call: Any, origin_us: float | None, run: int | None = None) -> None:
        """``run``: which profiled run the call belongs to, for each kernel's per-run times."""
        items = list(self._flatten(call))
        graph = self._graph_of(items)
        pending = list(self.externs.get(graph, [])) if graph else []
        attributed = 0.0
        for item in items:
            key = self.key_of_label.get(item.name)
            if key is None and pending and pending[0][1] == item.name:
                key = pending.pop(0)[0]
            spent = self.time_of(item)
            if key is None:
                self.unattributed[item.name] += spent
                continue
            self.kernel_us[key] += spent
            self.calls[key] += 1
            if run is not None:
                self.run_us[key][run] += spent
            attributed += spent
            if origin_us is not None:
                self.timeline.append([key, round(item.time_range.start - origin_us, 3), round(spent, 3)])
        total = self.time_of(call)
        self.total_us += total
        listed = sum(self.time_of(i) for i in items)  # the rest: the wrapper's own Python between them
        self.unattributed["wrapper Python code"] += max(0.0, total - listed)


def attribute_cpu(c: Any, refs: dict[str, KernelRef], events: Any, runs: int) -> Profile:
    """Turn the profiler's events of ``runs`` runs on CPU into a Profile of compilation ``c``."""
    work = _CpuAttribution(c, refs)
    marks = sorted((e for e in events if e.name == RUN_MARK), key=lambda e: e.time_range.start)
    calls = sorted((e for e in events if e.name.startswith(_GRAPH_CALL)), key=lambda e: e.time_range.start)
    last = marks[-1] if marks else None
    if not calls:  # no per-graph annotation from Inductor: the runs themselves are the calls
        calls = marks
    starts = [m.time_range.start for m in marks]
    for call in calls:
        in_last = last is not None and last.time_range.start <= call.time_range.start <= last.time_range.end
        run = bisect.bisect_right(starts, call.time_range.start) - 1
        work.add_graph_call(call, last.time_range.start if in_last else None, run if run >= 0 else None)
    result = _profile_of(c, refs, runs, work.kernel_us, work.calls, work.total_us, work.unattributed, work.timeline,
                         cuda=False)
    note = spread_note(run_ms(work.run_us), c.device)
    result.notes += [note] if note else []
    return result


def run_ms(run_us: dict[str, dict[int, float]]) -> dict[str, list[float]]:
    """Each kernel's time in each run (ms), from µs per run."""
    return {key: [us / 1e3 for _, us in sorted(runs.items())] for key, runs in run_us.items()}


def cpu_thread_notes(device: str) -> list[str]:
    """A note when torch's CPU threads outnumber the cores this process may use (a CPU run only): the
    commonest reason a CPU kernel's time swings between runs."""
    if not device.startswith("cpu"):
        return []
    note = thread_note(torch.get_num_threads(), usable_cores())
    return [note] if note else []


def _profile_of(c: Any, refs: dict[str, KernelRef], runs: int, kernel_us: dict[str, float], calls: dict[str, int],
                total_us: float, unattributed_us: dict[str, float], timeline: list[list[Any]], cuda: bool) -> Profile:
    """The Profile of sums over ``runs`` runs (µs), per run in ms, spread over nodes and lines."""
    per_run = 1e-3 / runs
    kernel_ms = {key: kernel_us.get(key, 0.0) * per_run for key in refs}
    total_ms = total_us * per_run
    unattributed = {name: us * per_run for name, us in sorted(unattributed_us.items(), key=lambda kv: -kv[1])
                    if us > 0}
    if cuda:
        unattributed_ms = max(0.0, total_ms - sum(kernel_ms.values()))
    else:
        unattributed_ms = sum(unattributed.values())
    profile = Profile(device=c.device, runs=runs, warmup=0, total_ms=total_ms, wall_ms=0.0, kernel_ms=kernel_ms,
                      kernel_calls={key: calls.get(key, 0) / runs for key in refs}, kernels=refs,
                      post_grad_ms={}, fx_node_ms={}, line_ms={}, unattributed_ms=unattributed_ms,
                      unattributed=unattributed, timeline=timeline, compilation=c)
    profile.respread()
    return profile
