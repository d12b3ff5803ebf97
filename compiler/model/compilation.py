"""Compilation: every graph of one torch.compile run, its settings, timings and live handles."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from . import gc_pause, progress, slots
from .compile_time import CompileCall, CompileTimeReport
from .compile_time_build import build as build_compile_time
from .cudagraphs import CudaGraphReport
from .formatting import did_you_mean
from .dynamo import DynamoStage
from .export import ExportStage
from .provenance import ProvenanceReport
from .slots import Rendered
from .stages import GraphCapture


@dataclass(frozen=True)
class Note:
    """What the compile said, or what the capture put up with, kept on the compilation instead of printed.

    ``kind`` "warning" or "error": torch warned (a ``.item()`` graph break, a fallback) or logged an error;
    ``source`` is its logger (``torch._dynamo.variables.tensor``) or the warning's category and torch file.
    ``kind`` "hook failed": a capture hook's own code raised and the compile went on without what that hook
    records (a stage may be missing something); ``source`` names the hook, ``message`` the exception.
    """

    kind: str
    source: str
    message: str

    def __str__(self) -> str:
        first = self.message.splitlines()[0] if self.message else ""
        return f"{self.kind} from {self.source}: {first}"


@dataclass(repr=False)
class LiveHandles:
    """What runs a compilation again, held only by the process that compiled it (a saved trace keeps none of
    it, so ``c.live`` is None after loading and every run says to compile again)."""

    compiled: Any  # the callable that runs the program: torch.compile's wrapper, or the loaded AOT package
    target: Any  # the function or module compiled: eager reference, parameters and buffers a run restores
    example_inputs: tuple[Any, ...] | None  # the capture's inputs, which runs default to
    call_kwargs: dict[str, Any] | None
    grad_enabled: bool | None  # grad mode of the capture: Dynamo guards on it, so runs replay it
    outputs: Any = None  # what the capture's call returned (None when it failed)
    # runs the compiled function again capturing recompiles: (compilation, inputs, kwargs) -> outputs
    rerun: Callable[[Compilation, tuple[Any, ...], dict[str, Any]], Any] | None = None
    # an AOT compilation's package built again from the same exported program and settings, with more
    # Inductor settings: (extra settings, package path) -> the package's path
    build_package: Callable[[dict[str, Any], str], str] | None = None
    derived: dict[str, Any] = field(default_factory=dict)  # what a run built from these handles, for the next run

    def __repr__(self) -> str:  # short: the handles hold tensors and modules
        inputs = len(self.example_inputs or ())
        return (f"LiveHandles({type(self.compiled).__name__} of {type(self.target).__name__}, {inputs} input"
                f"{'s' if inputs != 1 else ''}, {'recompiles' if self.rerun is not None else 'never recompiles'})")


@dataclass(repr=False)
class Compilation(Rendered):
    function: str
    device: str
    device_name: str
    torch: str
    triton: str | None
    python: str
    created: str
    toggles: dict[str, Any]
    inductor_overrides: dict[str, Any]
    backward: bool
    timings: dict[str, float]
    inputs: list[dict[str, Any]]
    output_specs: list[dict[str, Any]]
    graphs: list[GraphCapture]
    sources: dict[str, dict[int, str]] = field(default_factory=dict)
    profiles: list[Any] = field(default_factory=list)  # every c.profile() taken, oldest first
    numerics: list[Any] = field(default_factory=list)  # every c.check_numerics() report, oldest first
    counter_reports: list[Any] = field(default_factory=list)  # every c.counters() / k.counters(), oldest first
    library_files: dict[str, str] = field(default_factory=dict)  # source file -> installed package it is in
    dynamo: DynamoStage = field(default_factory=DynamoStage)  # guards, graph breaks, symbols, recompiles
    origin: dict[str, Any] = field(default_factory=dict)  # where a loaded one came from: log, rank, compile id
    # torch's compile events of each call that compiled (capture, recompiles), raw: c.compile_time builds on them
    compile_calls: list[CompileCall] = field(default_factory=list, repr=False, compare=False)
    compile_time_report: CompileTimeReport | None = field(default=None, repr=False, compare=False)  # built, or loaded
    _compile_time_of: int = field(default=0, repr=False, compare=False)  # how many calls the report was built from
    export: ExportStage | None = None  # an AOT compilation (explorer.export): the exported program and its package
    # what torch warned while compiling, and what the capture's hooks swallowed to let it go on (Note)
    notes: list[Note] = field(default_factory=list)
    # every c.cudagraphs.measure(): a call with and without CUDA graphs (compiler/model/cudagraphs.py), oldest first
    cudagraph_times: list[Any] = field(default_factory=list)

    # what runs the program: only in the process that compiled it, None in a loaded trace
    live: LiveHandles | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        from .timings import CompileTimings  # torch's nested timers, saying so in their repr

        self.timings = CompileTimings(self.timings)
        for profile in self.profiles:
            profile.compilation = self
        for graph in self.graphs:
            graph.adopt(self)

    @property
    def outputs(self) -> Any:
        """What the compiled function returned in the capture (None in a loaded trace, or when it failed)."""
        return self.live.outputs if self.live is not None else None

    @property
    def guards(self) -> list[Any]:
        return self.dynamo.guards

    @property
    def graph_breaks(self) -> list[Any]:
        return self.dynamo.graph_breaks

    @property
    def skipped_frames(self) -> list[Any]:
        """Frames Dynamo gave up on (they ran eagerly, uncompiled), each with why."""
        return self.dynamo.skipped_frames

    @property
    def symbols(self) -> list[Any]:
        return self.dynamo.symbols

    @property
    def recompiles(self) -> list[Any]:
        return self.dynamo.recompiles

    @property
    def compile_metrics(self) -> list[Any]:
        return self.dynamo.compile_metrics

    @property
    def compile_time(self) -> CompileTimeReport:
        """Where the compile's own time went (compiler/model/compile_time.py): the phase tree per frame and
        graph, adding up to the wall time of the capture and its recompiles, charged to kernels, lines and
        modules, with each recompile's cost and suggestions. Built on first use from the events kept."""
        report = self.compile_time_report
        if self.compile_calls and (report is None or self._compile_time_of != len(self.compile_calls)):
            report = self.compile_time_report = build_compile_time(self.compile_calls, self.graphs, self.dynamo)
            self._compile_time_of = len(self.compile_calls)
        if report is None:
            raise ValueError(f"{self.function}: no compile-time data (saved before compile times were recorded, or "
                             "loaded from a log without chromium_event records); compile it again with "
                             "explorer.compile(...)")
        return report

    @property
    def kernels(self) -> list[Any]:
        return [k for g in self.graphs for k in g.kernels]

    @property
    def cudagraphs(self) -> CudaGraphReport:
        """What ``mode="reduce-overhead"`` (``triton.cudagraphs``) made of each graph: partitions captured or
        not and why, skips linked to your line, the CUDA graph tree's events; ``.measure()`` times a call with
        and without CUDA graphs, ``.what_if()`` compiles the program with a skip's cause removed."""
        return CudaGraphReport(self)

    def graph(self, key: int | str) -> GraphCapture:
        for g in self.graphs:
            if key in (g.index, g.id):
                return g
        ids = [g.id for g in self.graphs]
        raise KeyError(f"no graph {key!r}{did_you_mean(key, ids)}; graphs: {ids}")

    def run(self, *inputs: Any, **kwargs: Any) -> Any:
        """Call the compiled program again (defaults to the example inputs), in the capture's grad mode.

        A run never compiles: inputs that need another graph (another shape, dtype or device than the
        guards accept) raise ``NotRunnableError`` naming what differs, with nothing compiled;
        ``recompile(...)`` compiles them and captures the new graphs into this compilation.
        """
        return slots.run_compiled(self, inputs, kwargs)

    def recompile(self, *inputs: Any, **kwargs: Any) -> Any:
        """Call the compiled function on new inputs the way ``torch.compile`` would: Dynamo reuses the
        graphs while the guards hold, and what it recompiles is captured into this compilation (the new
        graphs in ``graphs``, the guard that failed in ``recompiles``). Returns the outputs."""
        if self.live is None or self.live.rerun is None:
            raise RuntimeError("this Compilation was loaded from a file: it has no compiled function to run; "
                               "compile it again with explorer.compile(...)")
        return self.live.rerun(self, inputs or self.live.example_inputs or (), kwargs)

    def show(self, full: bool = False) -> Any:
        """The natural view: in a notebook the explorer widget, in a terminal the compact view printed
        (what was compiled, the fusions, each kernel with its time and your line; ``full=True``: the
        whole tree)."""
        return slots.show(self, full=full)

    def bench(self) -> Any:
        """Every kernel timed on the GPU, plus the whole compiled function against eager."""
        return slots.bench_compilation(self)

    def profile(self, runs: int = 20, warmup: int = 3) -> Any:
        """Run the compiled function ``runs`` times under torch.profiler (after ``warmup`` runs) and
        attribute the time to kernels, nodes and source lines; the Profile is kept in ``profiles``."""
        result = slots.profile(self, runs=runs, warmup=warmup)
        result.compilation = self
        self.profiles.append(result)
        return result

    def check_numerics(self, reference: str = "eager", rtol: float | None = None, atol: float | None = None,
                       edits: Any = None) -> Any:
        """Run once, compare every kernel's output buffers with the post-grad graph run eagerly
        (``reference="eager"``: same dtypes; ``"float64"``: upcast) and find the first kernel that diverges.
        ``edits`` ({kernel or id: source}) runs edited Triton kernels in place of the originals.
        The report is kept in ``numerics``."""
        with gc_pause.paused():
            report = slots.check_numerics(self, reference, rtol, atol, edits)
        self.numerics.append(report)
        return report

    def with_edits(self, edits: Any) -> Any:
        """``with c.with_edits({kernel or id: edited source}):`` runs the whole program with edited Triton
        kernels in place of the originals: ``c.run()``, ``c.profile()`` and ``c.check_numerics()`` inside
        the block show whether the fix keeps the model correct and what it saves end to end. Each edit is
        checked in a worker process first (``k.edit``); the originals are back when the block exits.
        The block's value is the list of edited kernels (``graph/kernel``)."""
        return slots.with_edits(self, edits)

    def counters(self, kernels: Any = None, top: int = 10) -> Any:
        """Hardware counters (Nsight Compute) of GPU kernels, Triton and extern (cuBLAS, cuDNN, attention)
        alike: per kernel the speed-of-light throughputs, bandwidths, occupancy, resources and what bounds
        it; per Triton kernel line the warp stalls by reason, rolled up to post-grad nodes, FX nodes and
        your lines (an extern kernel's samples go whole to its nodes); the profiles' node and line times of the
        measured kernels are then split by those samples. ``kernels``: Kernel objects or ids
        (default: the ``top`` slowest of the newest profile, or the first ``top`` GPU kernels without one).
        Each kernel runs in a worker process under ``ncu`` on inputs of its real shapes (GPU with Nsight
        Compute); an extern call's device kernels are measured together. The CountersReport is kept in
        ``counter_reports``."""
        report = slots.counters(self, kernels=kernels, top=top)
        self.counter_reports.append(report)
        for profile in self.profiles:  # the measured kernels now divide their time by their lines' samples
            profile.respread()
        return report

    def repro(self, directory: str | Path, *, overwrite: bool = False) -> list[Path]:
        """Write a standalone reproducer of each Dynamo graph into ``directory``: ``<graph id>.py`` and
        ``.pt`` of its forward or inference graph (a graph break makes two), as ``GraphCapture.repro``.
        Returns the scripts' paths."""
        return slots.repro_compilation(self, Path(directory), overwrite=overwrite)

    def features(self, system: str | None = None) -> list[Any]:
        """What each Inductor system did here (``compiler.model.features.SYSTEMS``), every graph, in order."""
        return [f for g in self.graphs for f in g.features if system is None or f.system == system]

    def provenance(self) -> Any:
        """Every kernel linked to nodes and lines, explained (``provenance_note``), or missing."""
        return ProvenanceReport.of(self)

    def measure_memory(self) -> list[Any]:
        """Run each graph once on the GPU: its measured peak next to the planned one (g.memory.measured)."""
        return [g.memory.measure() for g in self.graphs if g.memory is not None]

    def check_determinism(self, runs: int = 5) -> Any:
        """Run the compiled function ``runs`` times; say whether the outputs are bitwise equal."""
        if not self.live:
            raise RuntimeError("check_determinism needs the live compilation, not a loaded trace")
        return slots.check_determinism(self, runs)

    def what_if(self, *, unfuse: Any = None, prevent: Any = None, fuse: Any = None, split: Any = None,
                order: Any = None, materialize: Any = None, graph: int | str | None = None,
                measure: bool = False) -> Any:
        """The same program compiled again with exactly one decision changed (docs/what-if.md): ``unfuse=`` a
        fused group or kernel (its nodes as separate kernels; a kernel Inductor inlined into one loop is cut at
        the user's lines), ``prevent=(a, b)`` two nodes kept apart, ``fuse=(k1, k2)`` two kernels Inductor
        declined for a score reason (a legality reason is refused), ``split=node`` a split reduction run unsplit
        (GPU: an unsplit one split), ``order=(a, b)`` kernel ``a`` launched before kernel ``b`` where no data binds
        them, ``materialize=node`` (or a list) a value Inductor inlined into its users' loop stored to a buffer of
        its own, in a kernel of its own. Returns a ``WhatIf`` holding ``.before`` (this compilation, unchanged),
        ``.after``, the kernel pairing, bytes per kernel, peak memory and a verdict; ``measure=True`` (or
        ``.measure()``) adds times per kernel and line and numerics against eager."""
        return slots.what_if(self, unfuse=unfuse, prevent=prevent, fuse=fuse, split=split, order=order,
                             materialize=materialize, graph=graph, measure=measure)

    def fusion_report(self, graph: int | str = 0, measure: bool = True, runs: int = 10,
                      workers: int | None = None) -> Any:
        """Every fusion of one graph prevented in turn (one compile each: in this process, or in ``workers`` sweep
        worker processes side by side) and sorted by what it saves: kernels, bytes and, with ``measure``, time
        per call."""
        return slots.fusion_report(self, graph=graph, measure=measure, runs=runs, workers=workers)

    def to_json(self) -> dict[str, Any]:
        return slots.trace_json(self)

    def trace_view(self) -> dict[str, Any]:
        """The trace dict with each graph serialized stage by stage as it is read (what views use)."""
        return slots.trace_json(self, lazy=True)

    def save(self, path: str | Path) -> Path:
        """Write the whole trace as JSON, gzip-compressed when ``path`` ends with ``.gz``. Kernel IR texts
        and wrappers are packed (compiler/SCHEMA.md, "Packed parts"). A kernel IR nobody opened yet is
        written as the capture copied it (SCHEMA.md, "Raw kernel IR"): its SASS and line maps are built
        where the trace is read, when the kernel is opened (nvdisasm takes about 0.5 s a kernel, most of
        a large model's save). The wrapper as FX is built now, shown as a progress step."""
        path = Path(path)
        with progress.task(f"save {self.function}"), gc_pause.paused():
            slots.write_json(slots.trace_json(self, packed_parts=True, raw_irs=True), path)
        return path

    def to_html(self, path: str | Path) -> Path:
        """Write one self-contained HTML file with the explorer view (opens without a kernel or network).
        The file embeds every kernel's IR: what a live capture left unbuilt is built first, in parallel."""
        with progress.task(f"export {self.function}"):
            slots.complete_kernel_irs(self)
            return Path(slots.write_html(self.trace_view(), path))

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        """Notebooks show the explorer widget when it is available, else the static HTML rendering.

        The widget's bundle carries a short HTML summary too: without it, IPython would also call
        ``_repr_html_`` and render every stage of the compilation (seconds on a large model) for a
        fallback that widget-aware frontends never show.
        """
        bundle = slots.widget_bundle(slots.widget, self.trace_view, include, exclude, "text/html",
                                     lambda: slots.html_summary(self))
        if bundle is not None:
            return bundle
        return {"text/plain": repr(self), "text/html": slots.html_of(self)}

    def __repr__(self) -> str:
        kernels = sum(g.counts()["kernels"] for g in self.graphs)  # a loaded graph's, without building it
        origin = "" if self.live else ", loaded"
        notes = f", {len(self.notes)} note{'s' if len(self.notes) != 1 else ''}" if self.notes else ""
        return (f"Compilation({self.function} on {self.device}: {len(self.graphs)} graphs, {kernels} kernels, "
                f"{self.timings.get('total', 0):.2f}s{notes}{origin})")
