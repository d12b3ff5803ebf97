"""GPU kernels replayed from a CUDA graph, given to the explorer's kernels (c.profile() under CUDA graphs).

A replay launches a whole recorded function (a graph, or one of its partitions) with one
``cudaGraphLaunch``: CUPTI gives every kernel of it that launch's correlation, and no host event stands
for any one kernel. So the kernels of one replay are taken together, in the order they ran, and matched
to the function's launches in wrapper order (``g.cudagraphs.partitions[i].launches``): a Triton kernel by its
name, the device kernels between two of them to the extern call between them in the wrapper (cuBLAS may
run two kernels for one ``mm``). A device kernel that fits no extern call is left unattributed, under its
CUDA name.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from .._torch.profiling import RawEvent
from ..model.profile import KernelRef


def graph_launches(events: list[RawEvent]) -> tuple[dict[int, RawEvent], dict[int, list[RawEvent]]]:
    """Each CUDA graph launch by its correlation: the runtime call (on the thread that launched it), and the
    device activities it ran, in the order they ran."""
    launches = {e.correlation: e for e in events if not e.on_device and "GraphLaunch" in e.name}
    groups: dict[int, list[RawEvent]] = defaultdict(list)
    for event in events:
        if event.on_device and event.correlation in launches:
            groups[event.correlation].append(event)
    for group in groups.values():
        group.sort(key=lambda e: (e.start_ns, e.end_ns))
    return launches, dict(groups)


REPLAYS_UNSEEN_NOTE = (
    "the profiler reported no kernel inside a CUDA graph replay (CUPTI leaves them out on this CUDA; "
    "pytorch/kineto#1165): each kernel's time is from the same kernels launched one by one, without the "
    "replay; c.cudagraphs.measure() times a whole call with CUDA graphs")


def replays_unseen(c: Any, refs: dict[str, KernelRef], kernel_us: dict[str, float]) -> bool:
    """Whether the compilation replays CUDA graphs and the profile gave no time to any kernel a captured
    partition launches: what a profiler that reports each ``cudaGraphLaunch`` and none of its kernels gives."""
    captured = {(g.id, k) for g in c.graphs if getattr(g, "cudagraphs", None) is not None
                for p in g.cudagraphs.partitions if p.captured for k in p.kernels}
    keys = [key for key, ref in refs.items() if (ref.graph, ref.kernel) in captured]
    return bool(keys) and not any(kernel_us.get(key) for key in keys)


class ReplayKeys:
    """Keys of the kernels of each replay, for one compilation."""

    def __init__(self, c: Any, refs: dict[str, KernelRef]) -> None:
        self.c = c
        self.key_of = {(r.graph, r.kernel): key for key, r in refs.items()}
        self.done: dict[int, list[tuple[str | None, bool]]] = {}

    def keys(self, graph_id: str, correlation: int, group: list[RawEvent]) -> list[tuple[str | None, bool]]:
        """(key, whether it starts a kernel call) of each activity of ``group``, one replay of a function of
        graph ``graph_id`` (an extern call may run several device kernels: only its first starts the call)."""
        if correlation not in self.done:
            self.done[correlation] = self._align(graph_id, group)
        return self.done[correlation]

    def _sequences(self, graph_id: str) -> list[list[Any]]:
        """The graph's recorded functions, each its kernel launches in order."""
        graph = self.c.graph(graph_id)
        state = getattr(graph, "cudagraphs", None)
        by_id = {k.id: k for k in graph.kernels}
        if state is not None and state.partitions:
            return [[by_id[k] for k in (p.launches or p.kernels) if k in by_id] for p in state.partitions if p.captured]
        calls = sorted((line, k.id) for k in graph.kernels for line in k.call_lines)
        return [[by_id[k] for _, k in calls]]

    def _align(self, graph_id: str, group: list[RawEvent]) -> list[tuple[str | None, bool]]:
        names = {e.name for e in group}
        sequences = [s for s in self._sequences(graph_id) if s]
        if not sequences:
            return [(None, False)] * len(group)
        sequence = max(sequences, key=lambda s: sum(k.name in names for k in s if k.language != "extern"))
        out: list[tuple[str | None, bool]] = []
        position, gap_used, previous = -1, 0, None
        for event in group:
            at = self._next_generated(sequence, position, event.name)
            if at is not None:
                position, gap_used, previous = at, 0, None
                out.append((self.key_of.get((graph_id, sequence[at].id)), True))
                continue
            gap = []
            for kernel in sequence[position + 1:]:
                if kernel.language != "extern":
                    break
                gap.append(kernel)
            if not gap:
                out.append((None, False))
                continue
            # one extern call in the gap takes every device kernel there; several take one each, in order
            kernel = gap[min(gap_used, len(gap) - 1)] if len(gap) > 1 else gap[0]
            gap_used += len(gap) > 1
            key = self.key_of.get((graph_id, kernel.id))
            out.append((key, key != previous))
            previous = key
        return out

    @staticmethod
    def _next_generated(sequence: list[Any], position: int, name: str) -> int | None:
        """The next launch of generated kernel ``name`` after ``position`` (from the start when none is left)."""
        for start, stop in ((position + 1, len(sequence)), (0, position + 1)):
            for at in range(start, stop):
                kernel = sequence[at]
                if kernel.language != "extern" and kernel.name == name:
                    return at
        return None
