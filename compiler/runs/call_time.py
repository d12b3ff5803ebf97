"""The time of one call of the compiled program as the user's program sees it.

A profile's wall time per run is not that: each profiled run is synchronised, marked and recorded, and
on the GPU that added 4 to 9 times the call itself for sub-millisecond programs. Here the calls run
back to back, as a training or serving loop makes them, with nothing between them: on the GPU two CUDA
events bracket a loop (launches overlap the previous call's kernels, as they do in a program), on the
CPU the loop's wall time, with the process's own thread count. A loop lasts at least ``min_loop_ms``
(a 60 us call is timed over about 800 calls: one stall in 20 calls moved it by 10%), and the result is
the median of ``loops`` loops. On the GPU the calls first run for ``ramp_ms`` untimed: right after a
compile a GPU can run them slower for a while (an H200, five fresh processes timing the same program
after its compile: four at 0.065 ms a call from their first 50 ms loop, one at 0.10-0.11 ms for three
loops, then 0.07 ms; rising clocks after the idle compile would do that), so a point timed straight
after its compile was fast or slow by chance. A module's parameters and buffers (running statistics) are
put back afterwards.
"""

from __future__ import annotations

import math
import statistics
import time
from typing import Any, Callable

import torch

from . import replay


def call_ms(c: Any, calls: int = 20, warmup: int = 3, min_loop_ms: float = 50.0, loops: int = 3,
            ramp_ms: float = 200.0) -> float:
    """Milliseconds per call (forward, and backward when captured): the median over ``loops`` loops of at
    least ``calls`` back-to-back calls each."""
    replay.check_runnable(c, "timing a call")
    step = replay.step(c)
    cuda = c.device.startswith("cuda")
    with replay.module_state_kept(c.live.target), replay.as_captured(c):
        began = time.perf_counter()
        for _ in range(warmup):
            step()
        replay.synchronize(c.device)
        times = timed_loops(lambda count: _loop(step, count, cuda), calls, loops, min_loop_ms,
                            ramp_ms if cuda else 0.0, began)
    return statistics.median(times)


def timed_loops(loop: Callable[[int], float], calls: int, loops: int, min_loop_ms: float, ramp_ms: float,
                began: float, clock: Callable[[], float] = time.perf_counter) -> list[float]:
    """``loops`` results of ``loop(count)`` (ms per call over ``count`` calls), ``count`` at least ``calls``
    and long enough for ``min_loop_ms``; loops run before ``ramp_ms`` have passed since ``began`` (on
    ``clock``) are not kept."""
    times = [loop(calls)]
    count = max(calls, math.ceil(min_loop_ms / max(times[0], 1e-6)))
    if count > calls:
        times = []
    if (clock() - began) * 1e3 < ramp_ms:
        times = []
        while (clock() - began) * 1e3 < ramp_ms:
            loop(count)
    while len(times) < loops:
        times.append(loop(count))
    return times


def _loop(step: Callable[[], Any], calls: int, cuda: bool) -> float:
    if cuda:
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(calls):
            step()
        end.record()
        end.synchronize()
        return start.elapsed_time(end) / calls
    began = time.perf_counter()
    for _ in range(calls):
        step()
    return (time.perf_counter() - began) * 1e3 / calls
