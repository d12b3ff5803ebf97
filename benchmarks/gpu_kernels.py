"""Per-kernel roofline figures on the GPU, and the explorer's timing checked against torch.profiler.

    PYTHONPATH=. python benchmarks/gpu_kernels.py

For each workload and each Triton kernel: k.bench()'s time (warm, as in the running program), achieved
GB/s and the fraction of the device's peak bandwidth, its cold time (Triton do_bench median, L2 flushed),
and the same kernel's median device time under torch.profiler with L2 flushed before each launch as
do_bench does; the last column is cold / profiler.
"""

from __future__ import annotations

import statistics

import torch
from torch.profiler import ProfilerActivity, profile

import explorer
from compiler._torch import runtime
from compiler.runs.devices import peaks


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
    device = peaks()
    print(f"device: {device.name}, {device.sm_count} SMs, peak bandwidth {device.bandwidth / 1e12:.2f} TB/s "
          f"({device.bandwidth_source})")
    header = (f"{'workload':<32}{'kernel':<44}{'us':>9}{'GB/s':>9}{'of peak':>9}{'cold us':>9}{'profiler us':>13}"
              f"{'ratio':>8}")
    print(header)
    ratios = []
    for name, (fn, args) in workloads().items():
        c = explorer.compile(fn, *args)
        for kernel in (k for g in c.graphs for k in g.kernels if k.language == "triton"):
            result = kernel.bench()
            prof = profiler_ms(kernel)
            ratio = result.cold_ms / prof
            ratios.append(ratio)
            print(f"{name:<32}{kernel.name[:42]:<44}{result.ms * 1e3:>9.1f}{result.gbps:>9.0f}"
                  f"{result.bandwidth_fraction:>9.1%}{result.cold_ms * 1e3:>9.1f}{prof * 1e3:>13.1f}{ratio:>8.3f}")
    print(f"cold/profiler timing ratio: median {statistics.median(ratios):.3f}, "
          f"range {min(ratios):.3f}-{max(ratios):.3f}")


if __name__ == "__main__":
    main()
