"""Per-kernel roofline figures on the GPU, and the explorer's timing checked against torch.profiler.

    PYTHONPATH=. python benchmarks/gpu_kernels.py

For each workload and each Triton kernel: k.bench()'s time (warm, as in the running program), achieved
GB/s and the fraction of the device's peak bandwidth, its cold time (Triton do_bench median, L2 flushed),
and the same kernel's median device time under torch.profiler with L2 flushed before each launch as
do_bench does; the last column is cold / profiler.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import torch
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import explorer  # noqa: E402
from benchmarks import recording  # noqa: E402
from compiler._torch import runtime  # noqa: E402
from compiler.runs.devices import peaks  # noqa: E402


def softmax(x: torch.Tensor) -> torch.Tensor:
    return torch.softmax(x * 0.5, dim=-1)


def scale_shift_relu(x: torch.Tensor) -> torch.Tensor:
    return torch.relu(x * 2 + 1)


def layernorm_gelu(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.gelu(torch.nn.functional.layer_norm(x, x.shape[-1:], w, b))


def workloads() -> dict[str, tuple]:
    torch.manual_seed(0)
    return {
        "pointwise 8192x4096 f32": (scale_shift_relu, (torch.randn(8192, 4096, device="cuda"),)),
        "softmax 8192x4096 f32": (softmax, (torch.randn(8192, 4096, device="cuda"),)),
        "layernorm+gelu 8192x4096 bf16": (layernorm_gelu, (torch.randn(8192, 4096, device="cuda", dtype=torch.bfloat16),
                                                           torch.randn(4096, device="cuda", dtype=torch.bfloat16),
                                                           torch.randn(4096, device="cuda", dtype=torch.bfloat16))),
    }


def profiler_ms(kernel, iterations: int = 30) -> float:
    module = runtime.load_kernel_module(kernel.source)
    runtime.rand_strided_seeded(1234)
    args = module.get_args()
    module.call(args)
    flush = torch.empty(256 * 1024 * 1024 // 4, dtype=torch.int32, device="cuda")
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(iterations):
            flush.zero_()
            module.call(args)
        torch.cuda.synchronize()
    times = [e.device_time for e in prof.events() if e.name == kernel.name]
    return statistics.median(times) / 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    recording.add_argument(parser)
    args = parser.parse_args()
    device = peaks()
    device_line = (f"device: {device.name}, {device.sm_count} SMs, peak bandwidth {device.bandwidth / 1e12:.2f} TB/s "
                   f"({device.bandwidth_source})")
    print(device_line)
    table = recording.Table(["workload", "kernel", "us", "GB/s", "of peak", "cold us", "profiler us", "ratio"])
    ratios = []
    for name, (fn, inputs) in workloads().items():
        c = explorer.compile(fn, *inputs)
        for kernel in (k for g in c.graphs for k in g.kernels if k.language == "triton"):
            result = kernel.bench()
            prof = profiler_ms(kernel)
            ratio = result.cold_ms / prof
            ratios.append(ratio)
            table.add(name, kernel.name, f"{result.ms * 1e3:.1f}", f"{result.gbps:.0f}",
                      f"{result.bandwidth_fraction:.1%}", f"{result.cold_ms * 1e3:.1f}", f"{prof * 1e3:.1f}",
                      f"{ratio:.3f}")
    print(table.text())
    summary = (f"cold/profiler timing ratio: median {statistics.median(ratios):.3f}, "
               f"range {min(ratios):.3f}-{max(ratios):.3f}")
    print(summary)
    recording.record(args, [table], device="cuda", notes=[device_line, summary])


if __name__ == "__main__":
    main()
