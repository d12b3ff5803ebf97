"""A Profile: where the time of the compiled program went, per kernel, node and user line
(measured by compiler/runs/profile.py, saved by compiler/io/reports.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import attribution, slots
from .lines import SOURCE, CallNode, check_depth
from .slots import Rendered


@dataclass
class KernelRef:
    """Which kernel a profile key names."""

    graph: str
    kernel: str
    language: str


@dataclass(repr=False)
class Profile(Rendered):
    """Mean times per run of the compiled function, attributed to kernels, nodes and the user's lines.

    Kernel keys are kernel ids; where two graphs of the compilation have a kernel of the same id
    (forward and backward both defining ``cpp_fused_0``) both are qualified as ``g1/cpp_fused_0``.
    Node maps are per graph (graph id -> node name -> ms) because node names repeat across graphs.
    """

    device: str
    runs: int
    warmup: int
    total_ms: float  # device time of the compiled graphs per run (CPU: time inside the graphs' calls)
    wall_ms: float  # host wall time per run, from the call to its results being ready
    kernel_ms: dict[str, float]
    kernel_calls: dict[str, float]  # launches per run
    kernels: dict[str, KernelRef]
    post_grad_ms: dict[str, dict[str, float]]
    fx_node_ms: dict[str, dict[str, float]]
    line_ms: dict[tuple[str, int], float]
    unattributed_ms: float
    unattributed: dict[str, float]  # what the unattributed time was: operator / CUDA kernel name -> ms per run
    timeline: list[list[Any]] = field(default_factory=list)  # one run: [key, start_us, duration_us]
    created: str = ""
    # why times may not be the kernels' own (compiler/model/unstable_times.py): unstable runs, too many threads;
    # about the run that measured them, so not part of what the figures are (and not saved in a trace yet)
    notes: list[str] = field(default_factory=list)
    _trace: Any = field(default=None, repr=False, compare=False)  # the live torch.profiler result
    # a live GPU profile: each CUDA activity's correlation id -> the key it was attributed to
    _gpu_kernel_keys: dict[int, str] = field(default_factory=dict, repr=False, compare=False)
    # the Compilation it measured (set when it joins ``c.profiles``): what lines at other depths are read from
    compilation: Any = field(default=None, repr=False, compare=False)

    @property
    def fraction(self) -> dict[str, float]:
        """Kernel key -> share of ``total_ms``."""
        return {k: (ms / self.total_ms if self.total_ms else 0.0) for k, ms in self.kernel_ms.items()}

    @property
    def attributed_ms(self) -> float:
        return sum(self.kernel_ms.values())

    def key_of(self, kernel: Any) -> str:
        """The key of a Kernel object in this profile's maps."""
        graph = kernel.graph.id if kernel.graph is not None else None
        for key, ref in self.kernels.items():
            if ref.kernel == kernel.id and (graph is None or ref.graph == graph):
                return key
        raise KeyError(f"kernel {kernel.id} is not in this profile")

    def ms(self, kernel: Any) -> float:
        """Mean ms per run of a Kernel object (0.0 when it did not run)."""
        return self.kernel_ms.get(self.key_of(kernel), 0.0)

    def top_kernels(self, n: int = 10) -> list[tuple[str, float]]:
        return sorted(self.kernel_ms.items(), key=lambda kv: -kv[1])[:n]

    def top_lines(self, n: int = 10) -> list[tuple[tuple[str, int], float]]:
        return sorted(self.line_ms.items(), key=lambda kv: -kv[1])[:n]

    def lines(self, depth: str = SOURCE) -> dict[Any, float]:
        """Time per run on each line at ``depth`` (compiler/model/lines.py): ``"source"`` (``line_ms``: your
        code, or a library model's own source), ``"user"`` (your own code only: a library model's call site),
        a package (``"transformers"``), or ``"module"`` (nn.Module path -> ms). Largest first."""
        c = self._measured()
        check_depth(depth, c.library_files)
        times = attribution.spread(c, self._kernel_times()).by_depth(depth, c.library_files)
        return dict(sorted(times.items(), key=lambda kv: -kv[1]))

    def call_tree(self) -> list[CallNode]:
        """The lines that called each op, as a tree with each line's time below it (``total_ms``) and in what it
        traced itself (``self_ms``): your call site at the root, a library model's lines below it."""
        c = self._measured()
        return attribution.spread(c, self._kernel_times()).tree(c.library_files)

    @property
    def line_total_ms(self) -> dict[tuple[str, int], float]:
        """Each line's time including everything it called: your call site of a model holds all of it."""
        c = self._measured()
        return attribution.spread(c, self._kernel_times()).line_totals(c.library_files)

    def respread(self) -> None:
        """Spread the kernels' times over nodes and lines again (``post_grad_ms``, ``fx_node_ms``, ``line_ms``):
        the compilation's hardware counters, taken after the profile, now say how each kernel divides."""
        c = self._measured()
        spread = attribution.spread(c, self._kernel_times())
        self.post_grad_ms, self.fx_node_ms = spread.post_grad_ms, spread.fx_node_ms
        self.line_ms = spread.by_depth(SOURCE, c.library_files)

    def _kernel_times(self) -> dict[tuple[str, str], float]:
        return {(ref.graph, ref.kernel): self.kernel_ms.get(key, 0.0) for key, ref in self.kernels.items()}

    def _measured(self) -> Any:
        if self.compilation is None:
            raise ValueError("this profile is not in a compilation's profiles, so it has no nodes to read lines "
                             "from: take it with c.profile(), or read c.profiles[-1]")
        return self.compilation

    def export_chrome_trace(self, path: str | Path) -> Path:
        """A Chrome/Perfetto trace. Live: the profiler's full trace, kernel events named by explorer ids;
        loaded: the recorded run's kernel slices."""
        return slots.chrome_trace(self, Path(path))

    def __repr__(self) -> str:
        top = ", ".join(f"{k} {v:.3f}" for k, v in self.top_kernels(3))
        notes = "".join(f"\n  note: {note}" for note in self.notes)
        return (f"Profile({self.device}, {self.runs} runs: {self.total_ms:.3f} ms per run in kernels+externs "
                f"({self.attributed_ms:.3f} attributed, {self.unattributed_ms:.3f} not), wall {self.wall_ms:.3f} ms; "
                f"top: {top}){notes}")
