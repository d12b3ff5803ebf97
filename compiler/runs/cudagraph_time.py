"""``c.cudagraphs.measure()``: one call of the program as it sees itself, with its CUDA graphs and without them.

Both are timed as compiler/runs/call_time.py times a call (CUDA events around back-to-back calls, after a
ramp). Without them means each recorded function runs as the CUDA graph tree runs it after a skip: the same
compiled kernels, launched one by one (compiler/_torch/cudagraph_tree.py), so the difference is the launch
time the graphs save, not another compile. The first calls (warm-up, recording) run before either timing,
watched: their events join ``g.cudagraphs.events``.
"""

from __future__ import annotations

import time
from typing import Any

from .._torch import cudagraph_tree
from ..model import slots
from ..model.cudagraphs import CudaGraphTime
from . import replay
from .call_time import call_ms
from .cudagraph_runs import observed

FIRST_CALLS = 3  # a function's warm-up, its recording, a first replay


class CudaGraphsNotMeasurable(RuntimeError):
    """The compilation has no CUDA graphs to time here (no GPU, compiled without them, no graph trees)."""


def check(c: Any) -> None:
    replay.check_runnable(c, "c.cudagraphs.measure()")
    if not any(g.cudagraphs is not None for g in c.graphs):
        raise CudaGraphsNotMeasurable(f"{c.function} was compiled without CUDA graphs: compile it with "
                                      "explorer.compile(..., mode='reduce-overhead') to time them")
    if not c.device.startswith("cuda"):
        raise CudaGraphsNotMeasurable(f"CUDA graphs need a GPU: {c.function} runs on {c.device}, where "
                                      "torch.compile records none")
    if not cudagraph_tree.available():
        raise CudaGraphsNotMeasurable("this torch has no CUDA graph trees (torch._inductor.cudagraph_trees) to "
                                      "run the program without its CUDA graphs; inductor-explorer supports "
                                      "torch 2.11 to 2.14")


@slots.measure_cudagraphs.fill
def measure(c: Any, calls: int = 20, loops: int = 3) -> CudaGraphTime:
    check(c)
    run = replay.runner(c)
    with observed(c, "measure"):
        for _ in range(FIRST_CALLS):
            run()
    replay.synchronize(c.device)
    with_graphs = call_ms(c, calls=calls, loops=loops)
    with cudagraph_tree.without_cuda_graphs():
        without = call_ms(c, calls=calls, loops=loops)
    return CudaGraphTime(with_ms=with_graphs, without_ms=without, calls=calls,
                         created=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
