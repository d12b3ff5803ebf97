"""The stage objects of one compilation: plain dataclasses, linked by ids.

Every object prints itself three ways from one place (``compiler/render``): a short ``__repr__``, ``__rich__``
for terminals and ``_repr_html_`` for notebooks. Live handles (GraphModules, the compiled callable)
exist only in the process that compiled; loaded compilations carry the same data without them.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Iterator

from . import slots
from .formatting import did_you_mean
from .lazy import LazyFields
from .slots import Rendered

if TYPE_CHECKING:  # loop-IR expressions are sympy's; a trace without loop IR (a log's) is read without importing it
    import sympy


@dataclass(repr=False, slots=True)
class FxNode(Rendered):
    name: str
    op: str
    target: str
    args: str = ""
    shape: list[Any] | None = None
    dtype: str | None = None
    inputs: list[str] = field(default_factory=list)
    users: list[str] = field(default_factory=list)
    user_line: tuple[str, int] | None = None  # (filename, lineno) at the source depth: compiler/model/lines.py
    stack: list[tuple[str, int, str]] = field(default_factory=list)  # every frame, outermost first
    module: str | None = None  # path of the innermost nn.Module it was traced in ("" for the root module)
    subgraph: str | None = None  # path of the higher-order op's body holding it; None in the main graph
    fx: list[str] = field(default_factory=list)  # post-grad node -> Dynamo FX nodes it came from
    post_grad: list[str] = field(default_factory=list)  # Dynamo FX node -> post-grad nodes made from it
    loop_ir: list[str] = field(default_factory=list)
    kernels: list[str] = field(default_factory=list)

    def __repr__(self) -> str:
        shape = "" if self.shape is None else f" {self.dtype} {list(self.shape)}"
        return f"FxNode({self.name}: {self.op} {self.target}{shape})"


@dataclass(repr=False)
class FxStage(LazyFields, Rendered):
    """An FX graph: Dynamo's (``stage='fx'``) or the post-grad ATen graph (``stage='post_grad'``)."""

    stage: str
    code: str
    nodes: list[FxNode]
    module: Any = None  # torch.fx.GraphModule while live
    # Set by a warm capture that was served a graph: rebuilds ``module`` (Inductor's post-grad passes run
    # again) when it is first read, since a capture served from the cache never needs it unless it runs.
    module_pending: Callable[[], Any] | None = field(default=None, repr=False, compare=False)
    # A live capture prints the graph as code when ``code`` is first read: printing a large model's graphs
    # costs a second of its capture, and most are only ever saved, if that.
    code_pending: Callable[[], str] | None = field(default=None, repr=False, compare=False)
    _lazy_fields: ClassVar[frozenset[str]] = frozenset({"module"})
    _pending_field: ClassVar[str] = "module_pending"

    def __getattribute__(self, name: str) -> Any:
        if name == "code" and object.__getattribute__(self, "code_pending") is not None:
            object.__setattr__(self, "code", object.__getattribute__(self, "code_pending")())
            object.__setattr__(self, "code_pending", None)
        return super().__getattribute__(name)

    def _fill(self, built: Any) -> None:
        object.__setattr__(self, "module", built)

    def node(self, name: str) -> FxNode:
        for n in self.nodes:
            if n.name == name:
                return n
        names = [n.name for n in self.nodes]
        raise KeyError(f"no node {name!r} in the {self.stage} graph{did_you_mean(name, names)}; nodes: {names[:20]}")

    def __iter__(self) -> Iterator[FxNode]:
        return iter(self.nodes)

    def __len__(self) -> int:
        return len(self.nodes)

    def __getitem__(self, key: int | str) -> FxNode:
        return self.node(key) if isinstance(key, str) else self.nodes[key]

    def __repr__(self) -> str:
        ops = sum(1 for n in self.nodes if n.op == "call_function")
        return f"FxStage({self.stage}, {len(self.nodes)} nodes, {ops} calls)"


@dataclass(repr=False, slots=True)
class LoopIRNode(Rendered):
    name: str
    kind: str  # pointwise | reduction | extern | template | nop | foreach | other
    buffers: list[str] = field(default_factory=list)
    buffer_nodes: dict[str, str] = field(default_factory=dict)  # output buffer -> post-grad node it holds
    device: str | None = None
    dtype: str | None = None
    size: list[str] = field(default_factory=list)
    stride: list[str] = field(default_factory=list)
    ranges: dict[sympy.Symbol, sympy.Expr] = field(default_factory=dict)
    sizes: list[list[sympy.Expr]] = field(default_factory=list)
    indexing: dict[str, sympy.Expr] = field(default_factory=dict)
    reads: list[str] = field(default_factory=list)
    writes: list[str] = field(default_factory=list)
    body: str = ""
    origins: list[str] = field(default_factory=list)  # the post-grad nodes it computes
    # post-grad nodes Inductor also lists as its origins that it does not compute: those of the inputs it
    # reads (computed by their producers) or of the higher-order op enclosing its subgraph
    inherited_origins: list[str] = field(default_factory=list)
    extern_target: str | None = None
    group: str | None = None
    eliminated: bool = False
    kernels: list[str] = field(default_factory=list)

    def __repr__(self) -> str:
        ranges = ", ".join(f"{v}<{r}" for v, r in self.ranges.items())
        state = " eliminated" if self.eliminated else f" -> {self.group}"
        return f"LoopIRNode({self.name}: {self.kind} [{ranges}] from {self.origins}{state})"


@dataclass(repr=False, slots=True)
class FusedGroup(Rendered):
    name: str
    kind: str
    nodes: list[str]
    origins: list[str] = field(default_factory=list)
    kernels: list[str] = field(default_factory=list)

    def __repr__(self) -> str:
        return f"FusedGroup({self.name}: {self.kind}, {len(self.nodes)} nodes -> {self.kernels})"


@dataclass(frozen=True)
class NotFused:
    """Inductor's reason for keeping two loop-IR nodes in separate kernels."""

    node1: str
    node2: str
    reason: str


@dataclass(repr=False, slots=True)
class Kernel(Rendered):
    id: str
    name: str
    language: str  # cpp | triton | extern | template
    source: str
    group: str | None = None
    loop_ir: list[str] = field(default_factory=list)
    post_grad_nodes: list[str] = field(default_factory=list)
    fx_nodes: list[str] = field(default_factory=list)
    user_lines: list[tuple[str, int]] = field(default_factory=list)
    line_nodes: dict[int, list[str]] = field(default_factory=dict)  # kernel line (1-based) -> post-grad nodes
    wrapper_lines: list[int] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)
    provenance_note: str | None = None  # why some of post_grad_nodes / fx_nodes / user_lines are empty
    ir: Any = None  # KernelIR (compiler/model/kernel_ir.py): Triton's IR stages of the chosen binary, GPU only
    graph: Any = field(default=None, compare=False)  # the GraphCapture holding this kernel

    def __hash__(self) -> int:
        """Kernels key dicts (``c.with_edits({k: source})``); equal kernels share an id."""
        return hash(self.id)

    @property
    def lines(self) -> list[str]:
        return self.source.splitlines()

    @property
    def call_lines(self) -> list[int]:
        """The wrapper lines that launch it: a defined kernel's first wrapper line is its definition."""
        return list(self.wrapper_lines) if self.language == "extern" else list(self.wrapper_lines[1:])

    def bench(self) -> Any:
        """Time this kernel on the real shapes (GPU): bytes, FLOPs, GB/s, TFLOP/s, fraction of peak."""
        return slots.bench_kernel(self, self.graph)

    def edit(self, new_source: str, *, bench: bool = True) -> Any:
        """Compile ``new_source`` (an edited copy of ``source``) in a worker process, run it on the
        original's inputs, compare outputs and bench both. Errors come back in the result."""
        return slots.edit_kernel(self, new_source, bench=bench)

    def repro(self, path: str | Path, *, inputs: str = "captured", source: str | None = None,
              overwrite: bool = False) -> Path:
        """Write a standalone reproducer of this kernel to ``path`` (a Python script needing only torch,
        and triton for a Triton kernel) and, beside it, ``<stem>.pt`` with the tensors it checks against.

        The script holds the kernel's source (a Triton kernel's autotuned config pinned), launches it
        once, compares what it wrote with the outputs of the captured run, and exits 0 when they match,
        1 printing the largest error when not; ``--bench`` also times it. Its header says where the
        kernel came from: model, compile id, FX nodes, your lines, torch/Triton versions, toggles.

        ``inputs="captured"``: the kernel's arguments as they were at its first launch (the compiled
        program runs once to take them; a warning names their size past 256 MB). ``inputs="random"``:
        seeded random tensors of the same shapes, strides, dtypes and devices, made by the script (a
        small file; the outputs saved are the original kernel's on those tensors). A kernel of a loaded
        trace has no live inputs: its reproducer uses random inputs and, with no outputs to check, only
        runs (a warning says so). ``source``: an edited source (as given to ``edit``), checked against
        the original kernel's outputs. An existing file is replaced only with ``overwrite=True``.
        Extern kernels (an ATen call such as mm) raise ``ValueError``: there is no generated code to
        reproduce."""
        return slots.repro_kernel(self, Path(path), inputs=inputs, source=source, overwrite=overwrite)

    def counters(self) -> Any:
        """This kernel's hardware counters (Nsight Compute, see ``Compilation.counters``); the report is
        kept in the compilation's ``counter_reports``."""
        compilation = getattr(self.graph, "compilation", None)
        if compilation is None:
            raise RuntimeError(f"kernel {self.id} belongs to no compilation; take counters through one "
                               "(c.counters(kernels=[...]))")
        return compilation.counters(kernels=[self]).kernel(self)

    def __repr__(self) -> str:
        return (f"Kernel({self.id}: {self.language}, {len(self.lines)} lines, group={self.group}, "
                f"nodes={self.post_grad_nodes})")


@dataclass(repr=False)
class Wrapper(LazyFields, Rendered):
    source: str
    kernel_lines: dict[int, str] = field(default_factory=dict)  # wrapper line -> kernel id
    language: str = "python"  # python | cpp (cpp_wrapper, and every AOT compilation)
    fx: Any = None  # WrapperFx (compiler/model/wrapper_fx.py): the same wrapper as an FX graph, or why not
    # Set by a live capture: makes ``fx`` when it is first read (saving a trace reads it). Running
    # Inductor's FX converter inside the capture cost more than the compile itself, for a view few
    # people open.
    fx_pending: Callable[[], Any] | None = field(default=None, repr=False, compare=False)
    _lazy_fields: ClassVar[frozenset[str]] = frozenset({"fx"})
    _pending_field: ClassVar[str] = "fx_pending"

    def _fill(self, built: Any) -> None:
        object.__setattr__(self, "fx", built)

    def __repr__(self) -> str:
        return f"Wrapper({len(self.source.splitlines())} lines, {len(set(self.kernel_lines.values()))} kernels called)"


@dataclass(frozen=True)
class AutotuneRecord:
    kernel: str
    choice: str
    time_ms: float
    chosen: bool
    source: str  # "select_algorithm" (max-autotune choices) | "triton_heuristics" (kernel configs)


STAGE_NAMES = ("fx", "post_grad", "loop_ir", "fused", "kernels", "wrapper", "autotune")


@dataclass(repr=False)
class GraphCapture(LazyFields, Rendered):
    """Everything Inductor produced for one graph (one Dynamo graph's forward, backward or inference).

    A graph of a loaded trace builds its stages the first time one is read (``pending``, compiler/io/
    trace.py): opening a large trace and drawing its first view reads the JSON and none of the stages."""

    index: int
    kind: str  # forward | backward | inference
    dynamo_graph: int
    fx: FxStage
    post_grad: FxStage
    loop_ir: list[LoopIRNode]
    fused: list[FusedGroup]
    kernels: list[Kernel]
    wrapper: Wrapper
    autotune: list[AutotuneRecord] = field(default_factory=list)
    not_fused: list[NotFused] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    compile_id: str | None = None  # Dynamo's compile id of the frame this graph came from ("0/1")
    memory: Any = None  # MemoryTimeline (compiler/model/memory.py): buffers over the wrapper's steps
    compiled_fn: Any = None  # Inductor's callable for this graph while live
    compilation: Any = field(default=None, repr=False, compare=False)  # the Compilation holding it
    _json: Any = field(default=None, repr=False, compare=False)  # compiler/io/trace.LazyGraph, kept once made
    library_files: dict[str, str] = field(default_factory=dict, repr=False)  # the Compilation's, for views
    features: list[Any] = field(default_factory=list)  # features.FeatureUse: Inductor systems seen acting here
    # a loaded graph's stages while unbuilt: called, it builds them ({field: value}); it also counts them and
    # gives views the FX stages as the file held them (compiler/io/trace.py)
    pending: Any = field(default=None, repr=False, compare=False)
    # A warm capture's (explorer.compile(cache=True)): "served" from the explorer's store with Inductor's cached
    # graph, "stored" there after a cold compile; "" when neither (a cold capture, a loaded trace)
    cache: str = field(default="", compare=False)
    # GraphCudaGraphs (compiler/model/cudagraphs.py): its partitions, skip and CUDA graph tree events, when
    # compiled with triton.cudagraphs (mode="reduce-overhead"); None otherwise
    cudagraphs: Any = None

    _lazy_fields: ClassVar[frozenset[str]] = frozenset({"fx", "post_grad", "loop_ir", "fused", "kernels", "wrapper",
                                                         "autotune", "not_fused", "memory", "features"})
    _pending_field: ClassVar[str] = "pending"

    def _fill(self, built: dict[str, Any]) -> None:
        for name, value in built.items():
            object.__setattr__(self, name, value)
        self._link(built["kernels"], built.get("memory"))

    def _link(self, kernels: list[Kernel], memory: Any) -> None:
        for kernel in kernels:
            kernel.graph = self
        if memory is not None:
            memory.graph = self

    def adopt(self, compilation: Any) -> None:
        """Become ``compilation``'s graph: it, and this graph's kernels, memory and CUDA graphs, point at each
        other (a loaded graph's kernels and memory when they are built)."""
        self.compilation = compilation
        self.library_files = compilation.library_files
        if self.cudagraphs is not None:
            self.cudagraphs.graph = self
        if self.pending is None:
            self._link(self.kernels, self.memory)

    def counts(self) -> dict[str, int]:
        """How big each stage is (what summaries show); a loaded graph's are counted in its JSON, unbuilt."""
        if self.pending is not None:
            return self.pending.counts()
        return {"fx": len(self.fx.nodes), "post_grad": len(self.post_grad.nodes), "loop_ir": len(self.loop_ir),
                "fused": len(self.fused), "kernels": len(self.kernels),
                "externs": sum(1 for k in self.kernels if k.language == "extern"),
                "wrapper": len(self.wrapper.source.splitlines()),
                "memory": len(self.memory.steps) if self.memory is not None else 0, "autotune": len(self.autotune)}

    @property
    def id(self) -> str:
        return f"g{self.index}"

    @property
    def stages(self) -> "OrderedDict[str, Any]":
        return OrderedDict((name, getattr(self, name)) for name in STAGE_NAMES)

    def kernel(self, key: str) -> Kernel:
        for k in self.kernels:
            if key in (k.id, k.name):
                return k
        ids = [k.id for k in self.kernels]
        raise KeyError(f"no kernel {key!r}{did_you_mean(key, ids + [k.name for k in self.kernels])}; kernels: {ids}")

    def repro(self, path: str | Path, *, overwrite: bool = False) -> Path:
        """Write a standalone reproducer of this graph to ``path`` (a Python script needing only torch) and,
        beside it, ``<stem>.pt`` with the graph's inputs in the captured run and its eager outputs.

        The script holds the Dynamo FX graph as a ``torch.nn.Module``, recompiles it with
        ``torch.compile(backend="inductor")`` under the capture's Inductor config, compares the outputs
        with the saved eager ones and exits 0 when they match, 1 printing the largest error; it can be
        filed as-is or handed to torch's minifier (its header says how). The inputs are taken by running
        the compiled program once more. Backward graphs raise ``ValueError`` (reproduce the forward
        graph); a loaded trace raises ``NotRunnableError`` (compile again). An existing file is replaced
        only with ``overwrite=True``."""
        return slots.repro_graph(self, Path(path), overwrite=overwrite)

    def loop_ir_node(self, name: str) -> LoopIRNode:
        for n in self.loop_ir:
            if n.name == name:
                return n
        raise KeyError(f"no loop-IR node {name!r}{did_you_mean(name, [n.name for n in self.loop_ir])}")

    def __repr__(self) -> str:
        return (f"GraphCapture({self.id} {self.kind}, dynamo graph {self.dynamo_graph}: {len(self.fx)} fx nodes, "
                f"{len(self.post_grad)} post-grad nodes, {len(self.loop_ir)} loop-IR nodes, "
                f"{len(self.fused)} fused groups, {len(self.kernels)} kernels)")
