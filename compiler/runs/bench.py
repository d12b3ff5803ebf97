"""k.bench() and c.bench(): kernel times on the real shapes, as points on the device's roofline."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch

from .._torch import runtime
from . import cost, devices
from .timing import cold_ms, warm_ms

SEED = 1234


@dataclass
class KernelBench:
    kernel: str
    language: str
    ms: float  # warm, as in the running program (CUPTI median over back-to-back calls): rooflines use it
    bytes: float | None
    flops: float | None
    dtype: str
    device: str
    bandwidth: float  # device peak, bytes/s
    peak_flops: float | None
    sources: dict[str, str] = field(default_factory=dict)  # where each peak number comes from
    cold_ms: float | None = None  # L2 flushed before every call (do_bench): nothing cached

    @property
    def gbps(self) -> float | None:
        return None if self.bytes is None else self.bytes / (self.ms / 1e3) / 1e9

    @property
    def tflops(self) -> float | None:
        return None if self.flops is None else self.flops / (self.ms / 1e3) / 1e12

    @property
    def bandwidth_fraction(self) -> float | None:
        return None if self.gbps is None else self.gbps * 1e9 / self.bandwidth

    @property
    def flops_fraction(self) -> float | None:
        if self.tflops is None or not self.peak_flops:
            return None
        return self.tflops * 1e12 / self.peak_flops

    @property
    def peak_fraction(self) -> float | None:
        """The roofline point: the larger of the bandwidth and compute fractions (the bound that binds)."""
        fractions = [f for f in (self.bandwidth_fraction, self.flops_fraction) if f is not None]
        return max(fractions) if fractions else None

    def __repr__(self) -> str:
        parts = [f"{self.ms * 1e3:.1f} us" + (f" (cold {self.cold_ms * 1e3:.1f} us)" if self.cold_ms else "")]
        if self.gbps is not None:
            parts.append(f"{self.gbps:.0f} GB/s ({self.bandwidth_fraction:.0%} of {self.bandwidth / 1e12:.2f} TB/s)")
        if self.tflops is not None and self.flops_fraction is not None:
            parts.append(f"{self.tflops:.1f} TFLOP/s ({self.flops_fraction:.0%} of {self.dtype} peak)")
        return f"KernelBench({self.kernel}: {', '.join(parts)})"


@dataclass
class CompilationBench:
    kernels: list[KernelBench]
    compiled_ms: float | None
    eager_ms: float | None

    @property
    def kernel_ms(self) -> float:
        return sum(k.ms for k in self.kernels)

    @property
    def speedup(self) -> float | None:
        if not self.compiled_ms or not self.eager_ms:
            return None
        return self.eager_ms / self.compiled_ms

    def __repr__(self) -> str:
        lines = [f"CompilationBench({len(self.kernels)} kernels, {self.kernel_ms * 1e3:.1f} us in kernels, "
                 f"compiled {self.compiled_ms or 0:.3f} ms vs eager {self.eager_ms or 0:.3f} ms)"]
        lines += [f"  {k!r}" for k in self.kernels]
        return "\n".join(lines)


def _require_cuda() -> None:
    if not torch.cuda.is_available():
        raise RuntimeError("bench() needs a CUDA GPU; this machine has none")


def _triton_call(kernel: Any) -> Any:
    if "def get_args" not in kernel.source:
        raise RuntimeError(f"{kernel.id} has no benchmark harness (it was captured without benchmark_kernel)")
    module = runtime.load_kernel_module(kernel.source)
    runtime.rand_strided_seeded(SEED)
    args = module.get_args()
    module.call(args)  # first launch autotunes among the kernel's configs
    torch.cuda.synchronize()
    return lambda: module.call(args)


def _extern_call(kernel: Any, graph: Any) -> Any:
    """The extern op with random inputs of the real shapes, from the live post-grad graph."""
    gm = getattr(graph.post_grad, "module", None)
    if gm is None:
        raise RuntimeError(f"timing extern kernel {kernel.id} needs the live compilation (this one was loaded)")
    node = next(n for n in gm.graph.nodes if n.name == kernel.post_grad_nodes[0])
    torch.manual_seed(SEED)

    def materialize(value: Any) -> Any:
        if isinstance(value, torch.fx.Node):
            fake = value.meta.get("val")
            if isinstance(fake, torch.Tensor):
                return torch.randn(tuple(fake.shape), dtype=fake.dtype, device="cuda") \
                    if fake.dtype.is_floating_point else torch.zeros(tuple(fake.shape), dtype=fake.dtype, device="cuda")
            return fake
        if isinstance(value, (list, tuple)):
            return type(value)(materialize(v) for v in value)
        return value

    args, kwargs = materialize(node.args), {k: materialize(v) for k, v in node.kwargs.items()}
    return lambda: node.target(*args, **kwargs)


def bench_kernel(kernel: Any, graph: Any | None = None) -> KernelBench:
    _require_cuda()
    graph = graph if graph is not None else kernel.graph
    if kernel.language in ("triton", "template"):
        call = _triton_call(kernel)
    elif kernel.language == "extern":
        call = _extern_call(kernel, graph)
        call()
    else:
        raise RuntimeError(f"bench() times GPU kernels; {kernel.id} is a {kernel.language} kernel")
    ms, cold = warm_ms(call), cold_ms(call)
    peak = devices.peaks(torch.cuda.current_device())
    dtype = cost.main_dtype(kernel, graph)
    flops = cost.kernel_flops(kernel, graph)
    is_matmul = any(graph.post_grad.node(n).target in cost._MATMULS for n in kernel.post_grad_nodes
                    if _has(graph, n)) if graph is not None else False
    if dtype == "float32" and is_matmul and torch.backends.cuda.matmul.allow_tf32:
        dtype = "tf32"
    peak_flops = peak.flops_for(dtype) if is_matmul else peak.flops_for("float32")
    return KernelBench(kernel=kernel.id, language=kernel.language, ms=ms, bytes=cost.kernel_bytes(kernel, graph),
                       flops=flops, dtype=dtype, device=peak.name, bandwidth=peak.bandwidth, peak_flops=peak_flops,
                       sources={"bandwidth": peak.bandwidth_source, "flops": peak.flops_source,
                                "bytes": "Inductor's estimate" if kernel.language != "extern" else "inputs + output",
                                "time": "CUPTI median of back-to-back calls (warm); cold_ms: do_bench, L2 flushed"},
                       cold_ms=cold)


def _has(graph: Any, name: str) -> bool:
    try:
        graph.post_grad.node(name)
        return True
    except KeyError:
        return False


def bench_compilation(c: Any) -> CompilationBench:
    _require_cuda()
    kernels = [bench_kernel(k, g) for g in c.graphs if g.kind != "backward" for k in g.kernels]
    compiled_ms = eager_ms = None
    if c.live and c.example_inputs is not None:
        with torch.no_grad():
            compiled_ms = cold_ms(lambda: c.run())
            eager_ms = cold_ms(lambda: c.target(*c.example_inputs))
    return CompilationBench(kernels=kernels, compiled_ms=compiled_ms, eager_ms=eager_ms)
