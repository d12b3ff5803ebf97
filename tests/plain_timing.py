"""Plain torch.compile timed as a program calls it, independently of the explorer's own timing: the
reference the GPU tests and benchmarks/call_time.py hold a sweep's run_ms against."""

from __future__ import annotations

import statistics
import time

import torch


def plain_cuda_ms(fn, *args, calls: int = 500, loops: int = 3, ramp_ms: float = 200.0) -> float:
    """Milliseconds per call of ``torch.compile(fn)``: CUDA events around ``calls`` back-to-back calls,
    the median of ``loops`` loops, after ``ramp_ms`` of untimed calls (a GPU can run the first calls after
    a compile slower; ``compiler.runs.call_time`` waits the same; Dynamo reset after, so the next compile
    starts clean)."""
    compiled = torch.compile(fn)
    began = time.perf_counter()
    for _ in range(3):
        compiled(*args)
    torch.cuda.synchronize()
    while (time.perf_counter() - began) * 1e3 < ramp_ms:
        for _ in range(50):
            compiled(*args)
        torch.cuda.synchronize()
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


def fresh_process_ms(workload: str, *shapes: tuple[int, ...], dtype: str = "float16") -> float:
    """``plain_cuda_ms`` of ``tests.workloads.<workload>`` on random CUDA tensors of ``shapes``, in a fresh
    interpreter: a program of its own, like a sweep's worker (a test process carries pytest's log
    capture, and whatever earlier tests left, into every call it times)."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    done = subprocess.run([sys.executable, "-m", "tests.plain_timing", workload, dtype, json.dumps(shapes)],
                          capture_output=True, text=True, timeout=600, cwd=Path(__file__).resolve().parents[1])
    if done.returncode != 0:
        raise RuntimeError(f"timing {workload} in a fresh process failed: {done.stderr[-2000:]}")
    return float(done.stdout.strip().splitlines()[-1])


if __name__ == "__main__":
    import json
    import sys

    from tests import workloads

    name, dtype, shapes = sys.argv[1], getattr(torch, sys.argv[2]), json.loads(sys.argv[3])
    with torch.no_grad():
        tensors = [torch.randn(*shape, device="cuda", dtype=dtype) for shape in shapes]
        print(plain_cuda_ms(getattr(workloads, name), *tensors))
