"""Inductor's own peak-memory estimate of a scheduled graph (``torch/_inductor/memory.py``).

``estimate_peak_memory`` walks the scheduler nodes in their final order, counting every scheduler
buffer from the node that creates it to its last user, and the graph inputs that can be freed until
their last use. It is what ``reorder_for_peak_memory`` minimises and what buffer reuse consults
(``EfficientPeakEstimate``). It reads per-buffer planning info (``mpi_buffer``) that Inductor only
fills when reordering is on, so the info is assigned here for the estimate and put back afterwards:
the scheduler is left as Inductor had it.
"""

from __future__ import annotations

from typing import Any

from torch._inductor.virtualized import V
from torch.utils._ordered_set import OrderedSet


def estimate() -> dict[str, Any] | None:
    """{"peak_bytes", "input_bytes", "nodes": [[scheduler node, bytes while it runs]]} or None."""
    try:
        from torch._inductor import memory
    except ImportError:
        return None
    needed = ("assign_memory_planning_info_for_scheduler_buffers", "get_freeable_input_buf", "estimate_peak_memory")
    scheduler = getattr(V.graph, "scheduler", None)
    if scheduler is None or not all(hasattr(memory, name) for name in needed):
        return None
    nodes = list(scheduler.nodes)
    buffers = scheduler.name_to_buf
    saved = {name: buf.mpi_buffer for name, buf in buffers.items()}
    try:
        memory.assign_memory_planning_info_for_scheduler_buffers(nodes, buffers)
        freeable = memory.get_freeable_input_buf(nodes, OrderedSet(V.graph.graph_inputs.keys()))
        peak, per_step = memory.estimate_peak_memory(nodes, freeable, OrderedSet(V.graph.get_output_names()))
        input_bytes = sum(int(buf.mpi_buffer.size_free) for buf in freeable.values())
    finally:
        for name, info in saved.items():
            buffers[name].mpi_buffer = info
    return {
        "peak_bytes": int(peak),
        "input_bytes": input_bytes,
        "nodes": [[node.get_name(), int(per_step[i])] for i, node in enumerate(nodes)],
    }
