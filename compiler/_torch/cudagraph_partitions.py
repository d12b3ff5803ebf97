"""Inductor's graph partitions as its scheduler made them: the nodes of each, whether it is cudagraphable,
and Inductor's reason for each node that is not.

With ``graph_partition`` on (the default since torch 2.9 outside fbcode) and ``triton.cudagraphs``, the
scheduler splits a graph's nodes into partitions around the ones a CUDA graph cannot hold (a CPU op, a
device copy, control flow) in ``Scheduler.graph_partition``; the cudagraphable ones become wrapper
functions ``partition_0``, ``partition_1``... that Inductor records one CUDA graph each, the others run
inline in ``call``. Torch logs a count of them under ``TORCH_LOGS=cudagraphs`` and nothing else; this
adapter wraps ``graph_partition`` and reads, for each node of a partition that is not cudagraphable,
``Scheduler.should_partition(node)`` (the reason Inductor's own log prints) and the FX node it came from.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

from . import guard, method_patch

# what a partition below ``triton.cudagraph_min_partition_size`` kernels is, in words (Inductor logs no reason)
BELOW_MIN_SIZE = "fewer kernels than triton.cudagraph_min_partition_size"


@dataclass
class PartitionRecord:
    """One partition of the graph being scheduled, in launch order."""

    nodes: list[str]  # its scheduler nodes' names (the fused groups' names)
    cudagraphable: bool
    function: str | None  # "partition_N" for a cudagraphable one (its wrapper function), None: inline in call
    reasons: dict[str, str] = field(default_factory=dict)  # node -> should_partition's reason (not cudagraphable)
    origins: dict[str, Any] = field(default_factory=dict)  # node -> the FX node it came from (torch's, live)


def _scheduler_class() -> Any:
    try:
        from torch._inductor.scheduler import Scheduler
    except ImportError:
        return None
    return Scheduler if hasattr(Scheduler, "graph_partition") and hasattr(Scheduler, "should_partition") else None


def available() -> bool:
    return _scheduler_class() is not None


def _origin(node: Any) -> Any:
    ir_node = getattr(node, "node", None)
    origin = getattr(ir_node, "get_origin_node", None)
    found = origin() if callable(origin) else None
    if found is None:
        for member in getattr(node, "get_nodes", lambda: [])():
            member_ir = getattr(member, "node", None)
            get = getattr(member_ir, "get_origin_node", None)
            found = get() if callable(get) else None
            if found is not None:
                break
    return found


def records(scheduler: Any, partitions: list[list[Any]], signatures: list[Any]) -> list[PartitionRecord]:
    """The partitions ``graph_partition`` returned, as plain records."""
    out: list[PartitionRecord] = []
    functions = 0
    for nodes, signature in zip(partitions, signatures):
        cudagraphable = not getattr(signature, "skip_cudagraph", True)
        record = PartitionRecord(nodes=[n.get_name() for n in nodes], cudagraphable=cudagraphable,
                                 function=f"partition_{functions}" if cudagraphable else None)
        functions += cudagraphable
        if not cudagraphable:
            for node in nodes:
                name = node.get_name()
                record.reasons[name] = scheduler.should_partition(node) or BELOW_MIN_SIZE
                record.origins[name] = _origin(node)
        out.append(record)
    return out


@contextlib.contextmanager
def on_partitions(callback: Callable[[list[PartitionRecord]], None]) -> Iterator[None]:
    """``callback(partitions)`` after each ``Scheduler.graph_partition`` (of the graph being scheduled, or of a
    subgraph); nothing on a torch without it."""
    scheduler_class = _scheduler_class()
    if scheduler_class is None:
        yield
        return
    original = scheduler_class.graph_partition

    def graph_partition(self: Any, *args: Any, **kwargs: Any) -> Any:
        result = original(self, *args, **kwargs)
        with guard.never_breaking(__name__):
            partitions, signatures = result
            callback(records(self, partitions, signatures))
        return result

    with method_patch.replaced(scheduler_class, "graph_partition", graph_partition):
        yield
