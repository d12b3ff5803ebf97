"""k.bench() and c.bench(): kernel times on the real shapes, as points on the device's roofline."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch

from .._torch import runtime
from ..model import cost, slots
from . import devices, replay
from .timing import cold_ms, warm_ms

SEED = 1234


@dataclass
class KernelBench:
    kernel: str
    language: str
    ms: float  # in place when the compilation is live (see ``in_place``), else ``isolated_ms``: rooflines use it
    bytes: float | None
    flops: float | None
    dtype: str
    device: str
    bandwidth: float  # device peak, bytes/s
    peak_flops: float | None
    sources: dict[str, str] = field(default_factory=dict)  # where each peak number comes from
    cold_ms: float | None = None  # L2 flushed before every call (do_bench): nothing cached
    isolated_ms: float | None = None  # the kernel alone, back-to-back calls (CUPTI median), caches warm
    in_place: bool = False  # ms is the kernel's mean time while the compiled function ran (c.profile)

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
        others = [f"{name} {value * 1e3:.1f} us" for name, value in (("alone", self.isolated_ms), ("cold", self.cold_ms))
                  if value and (name != "alone" or self.in_place)]
        where = " in place" if self.in_place else ""
        parts = [f"{self.ms * 1e3:.1f} us{where}" + (f" ({', '.join(others)})" if others else "")]
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
    # why kernel times may not be their own, from the in-place profile (compiler/model/unstable_times.py)
    notes: list[str] = field(default_factory=list)

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
        lines += [f"  note: {note}" for note in self.notes]
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


def in_place_profile(c: Any) -> Any:
    """A short profile of the compiled function as it runs (not kept in ``c.profiles``), or None when
    the compilation cannot run here (loaded from a file)."""
    if c is None or not c.live or c.live.example_inputs is None:
        return None
    from .profile import profile

    return profile(c, runs=10, warmup=3)


@slots.bench_kernel.fill
def bench_kernel(kernel: Any, graph: Any | None = None, in_place: Any = None) -> KernelBench:
    """``in_place``: a Profile already taken of the kernel's compilation (c.bench() takes one for all
    kernels); otherwise one is taken when the compilation is live.

    Why in place: a kernel called alone in a loop sees other caches and clocks than inside the program
    (inputs just written by the previous kernel sit in L2); small kernels were off by up to 4x."""
    _require_cuda()
    graph = graph if graph is not None else kernel.graph
    if kernel.language in ("triton", "template"):
        call = _triton_call(kernel)
    elif kernel.language == "extern":
        call = _extern_call(kernel, graph)
        call()
    else:
        raise RuntimeError(f"bench() times GPU kernels; {kernel.id} is a {kernel.language} kernel")
    isolated, cold = warm_ms(call), cold_ms(call)
    profile = in_place if in_place is not None else in_place_profile(getattr(graph, "compilation", None))
    placed = profile.ms(kernel) if profile is not None else 0.0
    ms = placed or isolated
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
                                "time": ("mean CUDA time per run while the compiled function ran (torch.profiler)"
                                         if placed else "CUPTI median of back-to-back calls (warm)")
                                + "; isolated_ms: back-to-back calls alone; cold_ms: do_bench, L2 flushed"},
                       cold_ms=cold, isolated_ms=isolated, in_place=bool(placed))


def _has(graph: Any, name: str) -> bool:
    try:
        graph.post_grad.node(name)
        return True
    except KeyError:
        return False


@slots.bench_compilation.fill
def bench_compilation(c: Any) -> CompilationBench:
    _require_cuda()
    profile = in_place_profile(c)
    kernels = [bench_kernel(k, g, profile) for g in c.graphs if g.kind != "backward" for k in g.kernels]
    compiled_ms = eager_ms = None
    if c.live and c.live.example_inputs is not None:
        args, kwargs = c.live.example_inputs, c.live.call_kwargs or {}
        with torch.set_grad_enabled(replay.grad_mode(c)):  # forward only, as captured: no recompile timed
            with replay.captured_only(c):
                compiled_ms = cold_ms(lambda: c.live.compiled(*args, **kwargs))
            eager_ms = cold_ms(lambda: c.live.target(*args, **kwargs))
    return CompilationBench(kernels=kernels, compiled_ms=compiled_ms, eager_ms=eager_ms,
                            notes=list(profile.notes) if profile is not None else [])
