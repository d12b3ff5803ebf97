"""GPU kernels replayed from a CUDA graph, given to the explorer's kernels (c.profile() under CUDA graphs).

A replay launches a whole recorded function (a graph, or one of its partitions) with one
``cudaGraphLaunch``: CUPTI gives every kernel of it that launch's correlation, and no host event stands
for any one kernel. So the kernels of one replay are taken together, in the order they ran, and matched
to the function's kernels in launch order (``g.cudagraphs.partitions[i].kernels``): a Triton kernel by its
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
    launches = {e.correlation: e for e in events if not e.on_device and e.linked and "GraphLaunch" in e.name}
    groups: dict[int, list[RawEvent]] = defaultdict(list)
    for event in events:
        if event.on_device and event.correlation in launches:
            groups[event.correlation].append(event)
    for group in groups.values():
        group.sort(key=lambda e: (e.start_ns, e.end_ns))
    return launches, dict(groups)


class ReplayKeys:
    """Keys of the kernels of each replay, for one compilation."""

    def __init__(self, c: Any, refs: dict[str, KernelRef]) -> None:
        self.c = c
        self.key_of = {(r.graph, r.kernel): key for key, r in refs.items()}
        self.done: dict[int, list[str | None]] = {}

    def keys(self, graph_id: str, correlation: int, group: list[RawEvent]) -> list[str | None]:
        """The key of each activity of ``group`` (one replay of a function of graph ``graph_id``)."""
        if correlation not in self.done:
            self.done[correlation] = self._align(graph_id, group)
        return self.done[correlation]

    def _sequences(self, graph_id: str) -> list[list[Any]]:
        """The graph's recorded functions, each its kernels in launch order."""
        graph = self.c.graph(graph_id)
        state = getattr(graph, "cudagraphs", None)
        by_id = {k.id: k for k in graph.kernels}
        if state is not None and state.partitions:
            return [[by_id[k] for k in p.kernels if k in by_id] for p in state.partitions if p.captured]
        return [sorted(graph.kernels, key=lambda k: min(k.wrapper_lines, default=1 << 30))]

    def _align(self, graph_id: str, group: list[RawEvent]) -> list[str | None]:
        names = {e.name for e in group}
        sequences = self._sequences(graph_id)
        if not sequences:
            return [None] * len(group)
        sequence = max(sequences, key=lambda s: sum(k.name in names for k in s if k.language != "extern"))
        generated = {k.name: i for i, k in enumerate(sequence) if k.language != "extern"}
        out: list[str | None] = []
        position, used = -1, defaultdict(int)
        for event in group:
            at = generated.get(event.name)
            if at is not None:
                position = at
                out.append(self.key_of.get((graph_id, sequence[at].id)))
                continue
            gap = []
            for kernel in sequence[position + 1:]:
                if kernel.language != "extern":
                    break
                gap.append(kernel)
            if not gap:
                out.append(None)
                continue
            # one extern call in the gap takes every device kernel there; several take one each, in order
            index = min(used[position], len(gap) - 1) if len(gap) > 1 else 0
            used[position] += 1
            out.append(self.key_of.get((graph_id, gap[index].id)))
        return out
