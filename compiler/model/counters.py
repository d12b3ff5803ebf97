"""Hardware counters of a kernel (Nsight Compute), per kernel and per line of the kernel's source.

``KernelCounters`` holds what ncu measured for one kernel: its duration, the speed-of-light
throughputs, bandwidths, occupancy, launch resources and, per source line, the warp stall samples by
reason and the instructions executed. A Triton kernel is one launch; an extern kernel (a cuBLAS,
cuDNN or attention call) is every device kernel its call launched, combined (``combine``).
``CountersReport`` holds one run of ncu over one or more kernels of a compilation, and the samples
rolled up through the explorer's provenance to post-grad nodes, FX nodes and the user's lines.

Stdlib only: a report loads and renders on a machine without CUDA or torch.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from . import slots
from .provenance import computing_nodes
from .slots import Rendered

# ``bound_by`` threshold: a unit (memory or compute) working at this share of its peak or more binds.
BUSY_PERCENT = 60.0

# ncu's stall reason names (source page columns ``stall_*``), and what each means, for displays.
STALL_REASONS = {
    "long_sb": "waiting on global/local memory (L1TEX: long scoreboard)",
    "short_sb": "waiting on shared memory or special math (MIO: short scoreboard)",
    "lg": "the load/store queue is full (LG throttle)",
    "mio": "the memory input/output queue is full (MIO throttle)",
    "math": "the math pipe is busy (math pipe throttle)",
    "wait": "a fixed-latency dependency (wait)",
    "barrier": "waiting at a barrier (__syncthreads)",
    "membar": "waiting on a memory barrier",
    "branch_resolving": "waiting for a branch target",
    "no_inst": "no instruction fetched (instruction cache miss)",
    "imc": "waiting on the immediate constant cache",
    "dispatch": "the dispatcher stalled",
    "drain": "waiting for memory stores to drain at exit",
    "sleep": "the warp was asleep",
    "tex": "the texture unit queue is full",
    "misc": "other reasons",
    "not_selected": "ready, but another warp was picked (not a stall)",
    "selected": "issuing an instruction (not a stall)",
}


@dataclass
class LineCounters:
    """One source line of a kernel: what the warps sampled on its instructions were doing."""

    line: int  # 1-based
    file: str | None = None  # None: the kernel's own source (k.source); else the library file inlined into it
    samples: int = 0  # warp stall samples on this line's instructions, all reasons
    not_issued: int = 0  # the samples where the warp issued no instruction
    instructions: int = 0  # warp-level instructions executed
    stalls: dict[str, int] = field(default_factory=dict)  # reason (STALL_REASONS key) -> samples
    text: str = ""  # the line's text as ncu showed it

    @property
    def where(self) -> str:
        return f"{self.line}" if self.file is None else f"{self.file.rsplit('/', 1)[-1]}:{self.line}"


@dataclass(repr=False)
class KernelCounters(Rendered):
    """One kernel under Nsight Compute (``ncu --set full``); every figure is ncu's.

    Percentages are of the device's peak (0-100). Bandwidths are bytes per second: ``dram_bandwidth``
    is DRAM bytes read and written (``dram__bytes.sum.per_second``), ``l2_bandwidth`` L2 sectors
    accessed times 32 bytes (``lts__t_sectors.sum.per_second``), ``l1_bandwidth`` bytes L1 returned to
    the SMs for loads (``derived__l1tex__lsu_writeback_bytes_mem_lgds.sum.per_second``).

    An extern kernel's figures combine the device kernels its call launched (``device_kernels``, see
    ``combine``) and have no lines: a library kernel has no source the explorer links to its nodes.
    """

    kernel: str  # explorer kernel id
    name: str  # the kernel name ncu profiled (an extern kernel: its longest device kernel)
    graph: str | None = None  # the graph id holding the kernel
    language: str = "triton"  # the explorer kernel's language: triton | template | extern
    device_kernels: list[str] = field(default_factory=list)  # one name per profiled launch, in launch order
    duration_ns: float = 0.0
    dram_bytes: float = 0.0  # DRAM bytes read and written (dram__bytes_read.sum + dram__bytes_write.sum)
    memory_sol: float = 0.0  # Memory Throughput: the busiest memory unit, % of its peak
    compute_sol: float = 0.0  # Compute (SM) Throughput: the busiest SM pipe, % of its peak
    dram_percent: float = 0.0
    l2_percent: float = 0.0
    l1_percent: float = 0.0
    dram_bandwidth: float = 0.0
    l2_bandwidth: float = 0.0
    l1_bandwidth: float = 0.0
    achieved_occupancy: float = 0.0  # % of the SM's warp slots, measured
    theoretical_occupancy: float = 0.0  # % allowed by registers, shared memory and block size
    registers: int = 0  # per thread
    shared_memory: int = 0  # bytes per block: static + dynamic + the driver's reserve
    grid: int = 0  # blocks launched
    block: int = 0  # threads per block
    samples: int = 0  # warp stall samples over the whole kernel (smsp__pcsamp_sample_count)
    instructions: int = 0  # warp-level instructions executed (inst_executed)
    lines: list[LineCounters] = field(default_factory=list)
    device: str = ""

    @property
    def bound_by(self) -> str:
        """``memory``, ``compute`` or ``latency``: the rule is ncu's speed-of-light reading. The larger of
        the memory and compute throughputs (% of peak) binds when it reaches ``BUSY_PERCENT`` (60%);
        below that on both, neither unit is kept busy and the kernel waits on latency (too few warps,
        dependent instructions: see the stall reasons)."""
        if max(self.memory_sol, self.compute_sol) < BUSY_PERCENT:
            return "latency"
        return "memory" if self.memory_sol >= self.compute_sol else "compute"

    @property
    def stalls(self) -> dict[str, int]:
        """Samples by reason over every line, largest first."""
        total: dict[str, int] = defaultdict(int)
        for line in self.lines:
            for reason, n in line.stalls.items():
                total[reason] += n
        return dict(sorted(total.items(), key=lambda kv: -kv[1]))

    @property
    def own_lines(self) -> list[LineCounters]:
        """The lines of the kernel's own source (not inlined library lines)."""
        return [line for line in self.lines if line.file is None]

    def line(self, number: int) -> LineCounters | None:
        return next((line for line in self.lines if line.file is None and line.line == number), None)

    def top_lines(self, n: int = 5) -> list[LineCounters]:
        return sorted(self.lines, key=lambda line: -line.samples)[:n]

    def __repr__(self) -> str:
        launched = f" [{', '.join(dict.fromkeys(self.device_kernels))}]" if self.language == "extern" else ""
        return (f"KernelCounters({self.kernel}{launched}: {self.duration_ns / 1e3:.2f} us, {self.bound_by}-bound "
                f"(memory {self.memory_sol:.1f}%, compute {self.compute_sol:.1f}%), "
                f"DRAM {self.dram_bandwidth / 1e9:.0f} GB/s, occupancy {self.achieved_occupancy:.1f}% of "
                f"{self.theoretical_occupancy:.1f}%, {self.registers} registers, {self.samples} stall samples)")


# Figures of one launch that a combination weights by the launch's duration: a rate or a share of peak
# over a stretch of time (a bandwidth so combined is the bytes moved over the time taken).
_TIME_WEIGHTED = ("memory_sol", "compute_sol", "dram_percent", "l2_percent", "l1_percent", "dram_bandwidth",
                  "l2_bandwidth", "l1_bandwidth", "achieved_occupancy", "theoretical_occupancy")
_SUMMED = ("duration_ns", "dram_bytes", "samples", "instructions")
_OF_THE_LONGEST = ("name", "registers", "shared_memory", "grid", "block")


def combine(launches: list[KernelCounters], kernel: str, graph: str | None = None,
            language: str = "extern") -> KernelCounters:
    """One kernel's counters from several profiled launches (the device kernels one extern call made).

    Durations, DRAM bytes, stall samples and instructions add up. Rates and shares of peak (speed of
    light, throughputs, bandwidths, occupancy) are averaged weighted by each launch's duration, so a
    bandwidth stays the bytes moved over the time taken and a 2 us split-K reduction does not count as
    much as the 40 us gemm before it. Launch resources (registers, shared memory, grid, block) and
    ``name`` are those of the longest launch. ``device_kernels`` lists every launch's name in order."""
    if not launches:
        raise ValueError(f"no launch to combine for {kernel}: its call launched no device kernel")
    total = sum(k.duration_ns for k in launches)
    weights = [k.duration_ns / total if total else 1 / len(launches) for k in launches]
    longest = max(launches, key=lambda k: k.duration_ns)
    figures: dict[str, Any] = {name: sum(w * getattr(k, name) for w, k in zip(weights, launches))
                               for name in _TIME_WEIGHTED}
    figures.update({name: sum(getattr(k, name) for k in launches) for name in _SUMMED})
    figures.update({name: getattr(longest, name) for name in _OF_THE_LONGEST})
    return KernelCounters(kernel=kernel, graph=graph, language=language, device=longest.device,
                          device_kernels=[name for k in launches for name in (k.device_kernels or [k.name])],
                          **figures)


@dataclass(repr=False)
class CountersReport(Rendered):
    """One Nsight Compute run over kernels of a compilation; line samples rolled up through provenance.

    The roll-up follows ``c.profile()``'s rule (spread evenly): a line's samples are split equally over
    the post-grad nodes ``k.line_nodes`` links it to; a line linked to none (indexing, masks, inlined
    library lines) is split equally over all of the kernel's post-grad nodes, as a profile spreads a
    kernel's time. A kernel without line figures (an extern call: cuBLAS, cuDNN, attention) gives its
    whole samples to the post-grad nodes that compute something (``provenance.computing_nodes``: the
    matmul, not the views of its operands). Each post-grad node's share then goes equally to the FX
    nodes it came from and to its own user line. Each map sums to the samples of the kernels with such
    links.
    """

    kernels: list[KernelCounters]
    failed: dict[str, str] = field(default_factory=dict)  # kernel id -> why it has no counters
    device: str = ""
    tool: str = ""  # "Nsight Compute 2025.3.1"
    command: str = ""  # the ncu options used
    created: str = ""
    wall_s: float = 0.0  # time of the whole run: worker start, every ncu pass, exports, parsing
    post_grad_samples: dict[str, dict[str, float]] = field(default_factory=dict)  # graph -> node -> samples
    fx_node_samples: dict[str, dict[str, float]] = field(default_factory=dict)
    line_samples: dict[tuple[str, int], float] = field(default_factory=dict)  # (file, line) -> samples

    def kernel(self, kernel: Any) -> KernelCounters:
        """The counters of a Kernel object or kernel id."""
        kernel_id = getattr(kernel, "id", kernel)
        graph = getattr(getattr(kernel, "graph", None), "id", None)
        for k in self.kernels:
            if k.kernel == kernel_id and (graph is None or k.graph in (None, graph)):
                return k
        if kernel_id in self.failed:
            raise KeyError(f"kernel {kernel_id!r} has no counters: {self.failed[kernel_id]}")
        raise KeyError(f"no counters for kernel {kernel_id!r}; measured: {[k.kernel for k in self.kernels]}")

    def to_json(self) -> dict[str, Any]:
        """The report as saved in a trace's ``counters`` list (SCHEMA.md)."""
        return slots.counters_json(self)

    def top_lines(self, n: int = 10) -> list[tuple[tuple[str, int], float]]:
        return sorted(self.line_samples.items(), key=lambda kv: -kv[1])[:n]

    def __repr__(self) -> str:
        rows = "".join(f"\n  {k!r}" for k in self.kernels)
        failed = "".join(f"\n  {kernel}: no counters ({why})" for kernel, why in self.failed.items())
        return (f"CountersReport({len(self.kernels)} kernels on {self.device}, {self.tool}, "
                f"{self.wall_s:.1f} s){rows}{failed}")


def node_samples(counters: KernelCounters, kernel: Any, pg_nodes: Mapping[str, Any]) -> dict[str, float]:
    """One kernel's warp stall samples per post-grad node (rule: CountersReport): each of its source lines'
    samples split over the nodes ``line_nodes`` links the line to (all of its nodes when none); an extern
    kernel, which has no lines, gives them to the nodes it computes. ``pg_nodes``: its graph's by name."""
    share: dict[str, float] = defaultdict(float)
    for line in counters.lines:
        linked = kernel.line_nodes.get(line.line, []) if line.file is None else []
        names = [n for n in linked if n in pg_nodes] or [n for n in kernel.post_grad_nodes if n in pg_nodes]
        for name in names:
            share[name] += line.samples / len(names)
    if not counters.lines and counters.samples:
        names = [n for n in computing_nodes(kernel, pg_nodes) if n in pg_nodes]
        for name in names:
            share[name] += counters.samples / len(names)
    return dict(share)


def roll_up(report: CountersReport, graphs: Iterable[Any]) -> CountersReport:
    """Fill the report's node and user-line maps from its kernels' line samples (rule: CountersReport).

    ``graphs``: the compilation's GraphCaptures (each with ``id``, ``kernel(id)``, ``post_grad.nodes``)."""
    by_id = {g.id: g for g in graphs}
    post_grad: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    fx: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    lines: dict[tuple[str, int], float] = defaultdict(float)
    for counters in report.kernels:
        graph = by_id.get(counters.graph) if counters.graph else None
        if graph is None:
            continue
        kernel = graph.kernel(counters.kernel)
        pg_nodes = {n.name: n for n in graph.post_grad.nodes}
        fx_nodes = {n.name: n for n in graph.fx.nodes}
        for name, samples in node_samples(counters, kernel, pg_nodes).items():
            post_grad[graph.id][name] += samples
            node = pg_nodes[name]
            origins = [n for n in node.fx if n in fx_nodes] or [n for n in kernel.fx_nodes if n in fx_nodes]
            for origin in origins:
                fx[graph.id][origin] += samples / len(origins)
            where = node.user_line or next((fx_nodes[o].user_line for o in origins if fx_nodes[o].user_line), None)
            where = where or (kernel.user_lines[0] if kernel.user_lines else None)
            if where:
                lines[(str(where[0]), int(where[1]))] += samples
    report.post_grad_samples = {g: dict(v) for g, v in post_grad.items()}
    report.fx_node_samples = {g: dict(v) for g, v in fx.items()}
    report.line_samples = dict(lines)
    return report
