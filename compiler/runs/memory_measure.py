"""g.memory.measure() and c.measure_memory(): the peak a graph really reaches on the GPU, next to the plan.

The graph runs through its own wrapper module (``call``) on inputs from Inductor's benchmark harness
(``get_args``: tensors of the real shapes and strides), so it is measured alone, as the timeline counts
it. The first call warms up (Triton autotuning, library workspaces); the second is measured:
``torch.cuda.max_memory_allocated`` during the call minus what was allocated before it (the inputs).
"""

from __future__ import annotations

from typing import Any

import torch

from .._torch import runtime
from ..model import slots
from ..model.memory import MemoryMeasurement


@slots.measure_memory.fill
def measure_graph(graph: Any) -> MemoryMeasurement:
    if not torch.cuda.is_available():
        raise RuntimeError("measuring memory needs a CUDA GPU; this machine has none (the plan is in g.memory)")
    if graph.memory is None:
        raise RuntimeError(f"graph {graph.id} has no memory timeline to compare with")
    namespace = runtime.wrapper_globals(graph.compiled_fn, ["get_args", "call"]) if graph.compiled_fn else {}
    if "get_args" not in namespace or "call" not in namespace:
        raise RuntimeError(f"graph {graph.id}: no live wrapper module with a benchmark harness (get_args); "
                           "compile it again with explorer.compile(...) in this process")
    args = namespace["get_args"]()
    with torch.no_grad():
        warm = namespace["call"](list(args))
        del warm
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        baseline = torch.cuda.memory_allocated()
        outputs = namespace["call"](list(args))
        torch.cuda.synchronize()
        peak = torch.cuda.max_memory_allocated() - baseline
        del outputs
    return MemoryMeasurement(peak_bytes=int(peak), baseline_bytes=int(baseline),
                             estimated_bytes=int(graph.memory.peak_bytes), device=torch.cuda.get_device_name())
