"""CUDA graphs, seen: what ``mode="reduce-overhead"`` (Inductor's ``triton.cudagraphs``) made of each graph.

Inductor records a CUDA graph of each compiled graph, split into partitions around what cannot be
captured (a CPU op, a device copy, control flow), and runs the graph without one when something forbids
it whole (an input it mutates, a CPU tensor, too many re-recordings). The CUDA graph tree then warms each
recorded function up, records it, replays it, and records it again when its inputs no longer fit.

``g.cudagraphs`` (``GraphCudaGraphs``) keeps, per graph: its partitions (which kernels and post-grad nodes
each holds, captured or not, and why not: Inductor's reason, the op, its node, kernel and your line), the
skip of the whole graph with its reason linked to the node, kernel and line that caused it, and the tree's
events seen while the explorer ran the program (warm-up, recordings, replays, re-records with their reason,
the memory pool's size). ``c.cudagraphs`` (``CudaGraphReport``) is the compilation's view: every graph's
state, the time of a call with and without CUDA graphs (``measure()``), the share of a profile's device time
inside captured partitions, and ``what_if()``, the same program with the skip's cause removed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from . import slots
from .formatting import where
from .slots import Rendered


class CudaGraphState(str, Enum):
    """How a graph runs under ``triton.cudagraphs``."""

    CAPTURED = "captured"  # every partition replays from a CUDA graph
    PARTIAL = "partial"  # some partitions replay, the others launch their kernels one by one (reasons per node)
    SKIPPED = "skipped"  # the whole graph launches its kernels one by one (``skip`` says why)
    NO_GPU = "no GPU"  # asked for on a graph that runs on the CPU: CUDA graphs need a GPU


class SkipKind(str, Enum):
    """Why Inductor or the CUDA graph tree ran a whole graph without CUDA graphs."""

    MUTATED_INPUT = "mutated input"  # it writes into an input that is neither a parameter, a buffer nor static
    INPUT_STORAGE = "input storage mutation"  # it rebinds an input's storage (``set_``)
    CPU_TENSOR = "cpu tensor"  # it computes on or reads a CPU tensor (without graph partitions)
    MULTIPLE_DEVICES = "multiple devices"
    INCOMPATIBLE_OP = "incompatible op"  # an op a CUDA graph cannot hold (data-dependent output, sparse, ...)
    CONTROL_FLOW = "control flow"  # torch.cond / while_loop on the GPU
    DYNAMIC_SHAPE = "dynamic shape"  # symbolic shapes with ``cudagraph_skip_dynamic_graphs``
    TOO_MANY_RECORDINGS = "too many re-recordings"  # re-recorded past ``cudagraph_unexpected_rerecord_limit``
    NON_TENSOR_INPUT = "non-Tensor input"
    FORWARD_SKIPPED = "forward skipped"  # a backward graph: its forward was skipped (they share the switch)
    OTHER = "other"


# torch's wording -> the kind (first match wins; the texts of torch 2.11 to 2.14)
_SKIP_WORDS: tuple[tuple[str, SkipKind], ...] = (
    ("input storage mutation", SkipKind.INPUT_STORAGE),
    ("mutated inputs", SkipKind.MUTATED_INPUT),
    ("re-recording limit", SkipKind.TOO_MANY_RECORDINGS),
    ("cpu device", SkipKind.CPU_TENSOR),
    ("multiple devices", SkipKind.MULTIPLE_DEVICES),
    ("incompatible op", SkipKind.INCOMPATIBLE_OP),
    ("index_put_", SkipKind.INCOMPATIBLE_OP),
    ("sparsity", SkipKind.INCOMPATIBLE_OP),
    ("control flow", SkipKind.CONTROL_FLOW),
    ("symbolic shape", SkipKind.DYNAMIC_SHAPE),
    ("non-tensor inputs", SkipKind.NON_TENSOR_INPUT),
)


def skip_kind(message: str) -> SkipKind:
    """The kind of a skip torch described as ``message``."""
    lowered = message.lower()
    return next((kind for words, kind in _SKIP_WORDS if words in lowered), SkipKind.OTHER)


_FOUND_FROM = re.compile(r"\.?\s*Found from\s*:?.*", re.S)
_REPEATED = re.compile(r"^(skipping cudagraphs due to )+", re.I)


def skip_message(message: str) -> str:
    """torch's skip message without the stack trace it appends ("Found from: ..."; the node and line say it)
    and without the prefix it sometimes writes twice."""
    text = _FOUND_FROM.sub("", message.strip()).strip()
    return _REPEATED.sub("skipping cudagraphs due to ", text)


class EventKind(str, Enum):
    """What the CUDA graph tree did with a graph's function (one recorded callable: the graph, or a partition)."""

    WARMUP = "warm-up"  # its first run: eager, inside the graphs' memory pool
    RECORD = "record"  # a CUDA graph recorded for it
    RERECORD = "re-record"  # recorded again: the recorded graph did not fit these inputs (``reason``)
    REPLAY = "replay"  # replayed from its CUDA graph
    EAGER = "eager"  # run without its CUDA graph (after a skip, or while the tree warms up again)
    SKIP = "skip"  # the tree gave up on it at run time (``reason``)
    SHAPES = "many shapes"  # torch warned that it recorded a graph for too many distinct input sizes


@dataclass(frozen=True)
class PartitionReason:
    """Why one scheduler node keeps its partition out of CUDA graphs (Inductor's ``should_partition``)."""

    node: str  # the scheduler (fused-group) node
    reason: str  # Inductor's words: "cpu ops", "DeviceCopy ops", "Conditional ops", ...
    op: str = ""  # the op of the post-grad node it came from (aten.mul.Tensor)
    post_grad: str = ""  # that post-grad node
    kernels: tuple[str, ...] = ()  # the kernels computing it
    line: tuple[str, int] | None = None  # your line (the node's source line)


@dataclass
class CudaGraphPartition:
    """One partition of a graph: nodes Inductor runs together, inside one CUDA graph or outside any."""

    index: int  # its place among the graph's partitions, in launch order
    captured: bool  # Inductor recorded it for a CUDA graph (a cudagraphable partition of a graph it did not skip)
    function: str | None  # the wrapper function recorded for it ("partition_0"; "call": the graph whole); None: inline
    nodes: list[str] = field(default_factory=list)  # its scheduler (fused-group) nodes, in order
    kernels: list[str] = field(default_factory=list)  # the kernels it launches, each once, by first launch
    launches: list[str] = field(default_factory=list)  # its kernel launches in order (a kernel called twice: twice)
    post_grad_nodes: list[str] = field(default_factory=list)  # the post-grad nodes it computes
    reasons: list[PartitionReason] = field(default_factory=list)  # why not captured, per node (empty when captured)

    @property
    def reason(self) -> str:
        """Inductor's reasons, each once ("" for a captured partition)."""
        return ", ".join(dict.fromkeys(r.reason for r in self.reasons))

    @property
    def function_index(self) -> int | None:
        """N of its ``partition_N`` function (the tree's events name partitions so); None otherwise."""
        match = re.fullmatch(r"partition_(\d+)", self.function or "")
        return int(match.group(1)) if match else None

    def __repr__(self) -> str:
        state = "captured" if self.captured else f"not captured ({self.reason or 'graph skipped'})"
        return f"CudaGraphPartition({self.index}: {len(self.kernels)} kernels, {state})"


@dataclass
class CudaGraphSkip:
    """Why a whole graph runs without CUDA graphs, linked to what caused it."""

    kind: SkipKind
    message: str  # torch's reason, without its stack trace
    when: str = "compile"  # "compile" (Inductor decided while compiling) | "run" (the tree, at the first run)
    node: str | None = None  # the post-grad node that caused it (the copy_ into a mutated input, the CPU op)
    inputs: list[str] = field(default_factory=list)  # the post-grad placeholders concerned (the mutated inputs)
    kernels: list[str] = field(default_factory=list)  # the kernels computing that node
    line: tuple[str, int] | None = None  # your line that caused it
    partition: int | None = None  # the partition the tree gave up on (None: the graph whole)

    def __repr__(self) -> str:
        at = f" at {where(self.line)}" if self.line else ""
        node = f" ({self.node})" if self.node else ""
        return f"CudaGraphSkip({self.kind.value}{node}{at}: {self.message[:80]})"


@dataclass
class CudaGraphEvent:
    """One thing the CUDA graph tree did with one of the graph's functions; consecutive replays (or eager runs)
    of the same function are one event with their count."""

    kind: EventKind
    partition: int | None = None  # the partition function's index; None: the graph recorded whole
    count: int = 1
    cuda_graph: int | None = None  # the tree's id of the CUDA graph recorded or replayed
    reason: str = ""  # a re-record's or a skip's reason, torch's words
    pool_bytes: int | None = None  # the memory pool of the tree's CUDA graphs after a recording
    run: str = ""  # what the explorer was running: "capture", "run", "profile", "measure"

    def __repr__(self) -> str:
        part = "graph" if self.partition is None else f"partition {self.partition}"
        times = f" x{self.count}" if self.count != 1 else ""
        why = f": {self.reason[:60]}" if self.reason else ""
        return f"CudaGraphEvent({self.kind.value} {part}{times}{why})"


@dataclass(repr=False)
class GraphCudaGraphs(Rendered):
    """``g.cudagraphs``: what ``triton.cudagraphs`` made of one graph (module docstring)."""

    device: str  # the device the graph runs on
    partitions: list[CudaGraphPartition] = field(default_factory=list)
    skip: CudaGraphSkip | None = None
    events: list[CudaGraphEvent] = field(default_factory=list)  # seen while the explorer ran it, oldest first
    # post-grad placeholder -> position of the input you passed that it is (flattened), for c.cudagraphs.what_if
    user_inputs: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    graph: Any = field(default=None, compare=False)  # the GraphCapture holding it

    @property
    def state(self) -> CudaGraphState:
        if not self.device.startswith("cuda"):
            return CudaGraphState.NO_GPU
        captured = [self.replays(p) for p in self.partitions]
        if captured and all(captured):
            return CudaGraphState.CAPTURED
        return CudaGraphState.PARTIAL if any(captured) else CudaGraphState.SKIPPED

    def replays(self, partition: CudaGraphPartition) -> bool:
        """Whether ``partition`` replays from a CUDA graph: Inductor recorded it, and neither Inductor nor the
        tree skipped the graph or that partition."""
        if not partition.captured:
            return False
        skip = self.skip
        return skip is None or (skip.partition is not None and skip.partition != partition.function_index)

    @property
    def pool_bytes(self) -> int | None:
        """The tree's memory pool after the latest recording seen (shared by every graph on the device)."""
        return next((e.pool_bytes for e in reversed(self.events) if e.pool_bytes is not None), None)

    def captured_kernels(self) -> list[str]:
        return [k for p in self.partitions if self.replays(p) for k in p.kernels]

    def kernel_state(self, kernel: str) -> tuple[bool, str]:
        """(captured, why not) of one kernel id of the graph."""
        for partition in self.partitions:
            if kernel in partition.kernels:
                if self.replays(partition):
                    return True, ""
                if partition.captured:  # recorded, then skipped
                    return False, self._skip_text()
                own = [r.reason for r in partition.reasons if kernel in r.kernels]
                return False, ", ".join(dict.fromkeys(own)) or partition.reason or self._skip_text()
        return False, self._skip_text() or "launched outside every partition"

    def _skip_text(self) -> str:
        return f"graph skipped: {self.skip.kind.value}" if self.skip is not None else ""

    def counts(self) -> dict[str, int]:
        """How many of each event kind the tree did (replays counted one by one)."""
        out: dict[str, int] = {}
        for event in self.events:
            out[event.kind.value] = out.get(event.kind.value, 0) + event.count
        return out

    def __repr__(self) -> str:
        captured = sum(self.replays(p) for p in self.partitions)
        skip = f", skipped: {self.skip.kind.value}" if self.skip is not None else ""
        return (f"GraphCudaGraphs({self.state.value}: {captured} of {len(self.partitions)} partitions captured"
                f"{skip})")


@dataclass(frozen=True)
class CudaGraphTime:
    """One call of the program as it sees itself, with its CUDA graphs and without them (each function run as
    the tree runs it after a skip): CUDA events around back-to-back calls (compiler/runs/call_time.py)."""

    with_ms: float  # per call, replaying the CUDA graphs
    without_ms: float  # per call, launching every kernel
    calls: int = 0  # calls per timed loop (at least; a loop lasts at least 50 ms)
    created: str = ""

    @property
    def saved_ms(self) -> float:
        """The launch time the CUDA graphs save per call."""
        return self.without_ms - self.with_ms

    def __repr__(self) -> str:
        return (f"CudaGraphTime({self.with_ms:.4f} ms with CUDA graphs, {self.without_ms:.4f} ms without: "
                f"{self.saved_ms:.4f} ms saved per call)")


def captured_share(graphs: list[Any], profile: Any) -> float | None:
    """The share of a profile's kernel time spent in kernels of captured partitions (None: no kernel time)."""
    total = captured = 0.0
    for graph in graphs:
        state = getattr(graph, "cudagraphs", None)
        inside = set(state.captured_kernels()) if state is not None else set()
        for kernel in graph.kernels:
            ms = profile.ms(kernel)
            total += ms
            captured += ms if kernel.id in inside else 0.0
    return captured / total if total > 0 else None


@dataclass(repr=False)
class CudaGraphReport(Rendered):
    """``c.cudagraphs``: every graph's CUDA graphs, the program's time with and without them."""

    compilation: Any

    @property
    def graphs(self) -> list[Any]:
        """The graphs compiled with ``triton.cudagraphs`` (each with its ``g.cudagraphs``)."""
        return [g for g in self.compilation.graphs if g.cudagraphs is not None]

    @property
    def times(self) -> list[CudaGraphTime]:
        """Every ``measure()``, oldest first (kept in the trace)."""
        return self.compilation.cudagraph_times

    @property
    def time(self) -> CudaGraphTime | None:
        return self.times[-1] if self.times else None

    @property
    def captured_share(self) -> float | None:
        """The share of the latest profile's kernel time inside captured partitions."""
        profiles = self.compilation.profiles
        return captured_share(self.graphs, profiles[-1]) if profiles and self.graphs else None

    @property
    def skips(self) -> list[tuple[Any, CudaGraphSkip]]:
        return [(g, g.cudagraphs.skip) for g in self.graphs if g.cudagraphs.skip is not None]

    def measure(self, calls: int = 20, loops: int = 3) -> CudaGraphTime:
        """Time a call of the program with its CUDA graphs and without them (GPU, live compilation); kept in
        ``times`` and the trace."""
        result = slots.measure_cudagraphs(self.compilation, calls, loops)
        self.compilation.cudagraph_times.append(result)
        return result

    def what_if(self, fix: str | None = None, input: int | None = None, measure: bool = True) -> Any:
        """The same program compiled again with what keeps a region out of CUDA graphs removed, as Inductor
        offers it, and both measured side by side: ``fix="static"`` marks a mutated input static
        (``torch._dynamo.mark_static_address``), ``"clone"`` clones it before the call (your tensor is then
        no longer updated in place), ``"device"`` moves a CPU tensor input to the GPU. ``fix=None``: the one
        that fits the first skip or uncaptured partition; ``input``: which input (its position), else the one
        the skip names."""
        return slots.cudagraph_what_if(self.compilation, fix=fix, input=input, measure=measure)

    def __repr__(self) -> str:
        states = ", ".join(f"{g.id} {g.cudagraphs.state.value}" for g in self.graphs) or "no graph asked for them"
        time = f"; {self.time.saved_ms:.4f} ms saved per call" if self.time is not None else ""
        return f"CudaGraphReport({states}{time})"
