"""Plain torch.compile timed as a program calls it, independently of the explorer's own timing: the
reference the GPU tests and benchmarks/call_time.py hold a sweep's run_ms against."""

from __future__ import annotations

import statistics

import torch


def plain_cuda_ms(fn, *args, calls: int = 500, loops: int = 3) -> float:
    """Milliseconds per call of ``torch.compile(fn)``: CUDA events around ``calls`` back-to-back calls,
    the median of ``loops`` loops (Dynamo reset after, so the next compile starts clean)."""
    compiled = torch.compile(fn)
    for _ in range(3):
        compiled(*args)
    times = []
    for _ in range(loops):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda.synchronize()
        start.record()
        for _ in range(calls):
            compiled(*args)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / calls)
    torch._dynamo.reset()
    return statistics.median(times)
