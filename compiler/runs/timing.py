"""GPU timing of one kernel (or extern call) in isolation, two ways.

- ``warm_ms``: the median CUDA kernel time (CUPTI, through torch.profiler) over back-to-back calls,
  caches warm: the same measure ``c.profile()`` takes of the kernel inside the running program, so
  the two agree. Each call is wrapped in a mark and its device time is everything it launched.
- ``cold_ms``: Triton's do_bench median (CUDA events, L2 flushed before every call): the time with
  nothing cached, an upper bound for the kernel in a program.
"""

from __future__ import annotations

import statistics
from typing import Callable

import torch

from .._torch import profiling

_MARK = "inductor_explorer.bench"


def warm_ms(fn: Callable[[], object], calls: int = 50, warmup: int = 5) -> float:
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    with profiling.recording([torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            with torch.profiler.record_function(_MARK):
                fn()
        torch.cuda.synchronize()
    times = [e.device_time_total for e in prof.events() if e.name == _MARK]
    if not times or not any(times):
        raise RuntimeError("the profiler saw no CUDA kernel for this call: nothing ran on the GPU")
    return float(statistics.median(times)) / 1e3


def cold_ms(fn: Callable[[], object], warmup_ms: int = 25, rep_ms: int = 100) -> float:
    from triton.testing import do_bench

    return float(do_bench(fn, warmup=warmup_ms, rep=rep_ms, return_mode="median"))
