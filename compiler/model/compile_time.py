"""Where a compile's own time goes: a tree of phases with seconds, charged down to kernels, lines and modules.

``c.compile_time`` answers "why does my compile take this long, and what do I change?". The tree is made
of torch's own timers (``dynamo_timed`` chromium events: the same records tlparse draws), nested by their
start and end times, one subtree per frame compile and per graph (forward, backward), under one node per
call that compiled (the capture, each ``c.recompile``). Three rules keep the numbers honest:

- the children of a phase add up to it: where torch's timers do not cover a phase, an ``other`` child
  holds the rest;
- a call's children add up to its wall time: what the explorer itself spent (its hooks inside torch,
  collecting the stages) is one ``explorer`` row, subtracted from every torch phase it ran inside, and
  what no timer covers (running the compiled code, eager code between frames) is ``other``;
- seconds are charged to one kernel only where torch timed that kernel (autotuning, Triton config
  benchmarks); time torch measures per graph (lowering, scheduling, a C++ module's build) is charged
  to the graph, and spread over its FX nodes only in the per-line and per-module tables, where each row
  says how many of its seconds are a kernel's own (``kernel_s``) and how many its share of a graph's
  (``spread_s``).

The report is built from recorded events (``CompileCall``) when first asked for: a capture keeps torch's
events and its own hook intervals, nothing more (compiler/model/compile_time_build.py builds the tree).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from . import slots
# the phase categories: the flat phases of compiler/model/phases.py, in the order the compile runs through
# them; each torch timer belongs to one (phases.category_of), an ``other`` child to its parent's
from .phases import CATEGORIES
from .slots import Rendered


@dataclass
class CompileCall:
    """What one call that compiled left behind: torch's chromium events and the explorer's own intervals.

    ``events`` are torch's chromium events as torch logs them (``{"name", "ph": B|E|i, "ts": µs, "args"}``),
    the same dicts a TORCH_TRACE log holds in its ``chromium_event`` records. ``hooks`` are the
    explorer's own work inside the call (hook name, start ns, end ns on ``time.time_ns``'s clock, the
    clock torch's events use). ``autotune_owners``: (time ns, graph index, post-grad node names) each time
    Inductor reported an autotuning's results, for charging that autotuning to the kernel of those nodes.
    """

    kind: str  # capture | recompile | log
    start_ns: int
    end_ns: int
    events: list[dict[str, Any]] = field(default_factory=list)
    hooks: list[tuple[str, int, int]] = field(default_factory=list)
    autotune_owners: list[tuple[int, int, tuple[str, ...], int]] = field(default_factory=list)


@dataclass(repr=False)
class Phase(Rendered):
    """One timed span: a torch timer, a frame, a graph, a call, or the ``other`` / ``explorer`` rest."""

    id: str  # p0, p1, ... unique in its report: what the widget links by
    name: str  # torch's event name (bytecode_tracing, GraphLowering.run), or call / frame / other / explorer
    seconds: float
    start_s: float = 0.0  # from the start of the report's first call
    category: str = ""  # one of CATEGORIES ("" for calls and frames, which hold several)
    compile_id: str | None = None
    graph: str | None = None  # the graph id (g0) this phase compiled, when it belongs to one graph
    kernel: str | None = None  # the kernel id this phase timed, when torch timed one kernel
    args: dict[str, Any] = field(default_factory=dict)  # torch's metadata: cache_state, kernel_name, ...
    children: list["Phase"] = field(default_factory=list)

    def walk(self) -> Iterator["Phase"]:
        """This phase and every phase under it, depth first."""
        yield self
        for child in self.children:
            yield from child.walk()

    def find(self, name: str) -> list["Phase"]:
        return [p for p in self.walk() if p.name == name]

    def __repr__(self) -> str:
        where = f" {self.graph}" if self.graph else f" {self.compile_id}" if self.compile_id else ""
        return f"Phase({self.name}{where}: {self.seconds:.3f}s, {len(self.children)} children)"


@dataclass(repr=False)
class KernelCompileTime(Rendered):
    """The compile seconds torch timed for one kernel (zero where it timed the graph instead)."""

    kernel: str  # kernel id in its graph
    graph: str
    autotune_s: float = 0.0  # choosing among templates / configs: precompiling and benchmarking them
    # building this kernel: its share (by build_s) of its graph's wait for its kernels' builds, plus any
    # precompile torch timed for it alone in the compiling process
    compile_s: float = 0.0
    candidates: int = 0  # choices or configs timed
    fx_nodes: list[str] = field(default_factory=list)
    user_lines: list[tuple[str, int]] = field(default_factory=list)
    module: str | None = None
    build_s: float = 0.0  # its build in a compile worker, in parallel with the graph's other kernels

    @property
    def seconds(self) -> float:
        return round(self.autotune_s + self.compile_s, 6)

    def __repr__(self) -> str:
        return (f"KernelCompileTime({self.graph}/{self.kernel}: {self.seconds:.3f}s, autotune {self.autotune_s:.3f}s "
                f"over {self.candidates} candidates)")


@dataclass(repr=False)
class Charge(Rendered):
    """Compile seconds charged to a user line, a module or an FX node."""

    key: str  # "file:line", the module path ("" is the root module), or "g0/node"
    seconds: float
    kernel_s: float = 0.0  # from kernels torch timed one by one: exact
    spread_s: float = 0.0  # its nodes' share of graph and frame phases torch timed as a whole: an estimate
    file: str | None = None  # for lines
    line: int | None = None
    graphs: list[str] = field(default_factory=list)

    def __repr__(self) -> str:
        return f"Charge({self.key}: {self.seconds:.3f}s, kernels {self.kernel_s:.3f}s, spread {self.spread_s:.3f}s)"


@dataclass(repr=False)
class RecompileCost(Rendered):
    """A frame compiled again: why (the guard that failed), and everything that compile cost."""

    compile_id: str
    function: str
    reasons: list[str]
    seconds: float  # its frame compile plus its graphs' lazily compiled backwards
    graphs: list[str] = field(default_factory=list)

    def __repr__(self) -> str:
        reason = self.reasons[0][:80] if self.reasons else "?"
        return f"RecompileCost({self.compile_id} {self.function}: {self.seconds:.3f}s, {reason})"


@dataclass(repr=False)
class Suggestion(Rendered):
    """What to change, the seconds it is about, and the evidence in the report."""

    kind: str  # autotuning | recompiles | cold_cache | graph_breaks
    message: str
    seconds: float
    evidence: list[str] = field(default_factory=list)

    def __repr__(self) -> str:
        return f"Suggestion({self.kind}: {self.message[:90]})"


@dataclass(repr=False)
class CompileTimeReport(Rendered):
    """The compile's own time: the phase tree, what each kernel / line / module cost, recompiles, suggestions."""

    source: str  # capture | log
    root: Phase  # children: one per call that compiled (the capture, each recompile; a log's whole span)
    kernels: list[KernelCompileTime] = field(default_factory=list)
    lines: list[Charge] = field(default_factory=list)
    modules: list[Charge] = field(default_factory=list)
    nodes: list[Charge] = field(default_factory=list)
    recompiles: list[RecompileCost] = field(default_factory=list)
    suggestions: list[Suggestion] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what the data cannot say, in words
    rank: str | None = None

    @property
    def seconds(self) -> float:
        return self.root.seconds

    @property
    def explorer_s(self) -> float:
        return round(sum(p.seconds for p in self.root.walk() if p.name == "explorer"), 6)

    @property
    def cache_time_saved_s(self) -> float:
        """Seconds of compiling that FX graph cache hits skipped (torch's ``time_saved_ns`` per hit)."""
        return round(sum(float(p.args.get("cache_time_saved_s", 0.0)) for p in self.root.walk()), 6)

    def frames(self) -> list[Phase]:
        """One phase per frame compile (Dynamo's ``dynamo`` timer), in compile order."""
        return [p for p in self.root.walk() if p.name == "dynamo"]

    def graph(self, graph_id: str) -> list[Phase]:
        """The phases that compiled one graph (its ``inductor_compile``; a cache hit has only a lookup)."""
        return [p for p in self.root.walk() if p.graph == graph_id and p.name == "inductor_compile"]

    def categories(self) -> dict[str, float]:
        """Seconds per category (CATEGORIES): every leaf's time in exactly one, adding up to ``seconds``."""
        totals = dict.fromkeys(CATEGORIES, 0.0)
        for phase in self.root.walk():
            if not phase.children and phase.category:
                totals[phase.category] += phase.seconds
        return {k: round(v, 6) for k, v in totals.items() if v}

    def top_kernels(self, n: int = 10) -> list[KernelCompileTime]:
        return sorted(self.kernels, key=lambda k: -k.seconds)[:n]

    def top_lines(self, n: int = 10) -> list[Charge]:
        return self.lines[:n]

    def top_modules(self, n: int = 10) -> list[Charge]:
        return self.modules[:n]

    def to_json(self) -> dict[str, Any]:
        return slots.compile_time_json(self)

    def to_chrome_trace(self, path: str | Path) -> Path:
        """Write the phase tree as a Chrome / Perfetto trace (open it in ui.perfetto.dev or chrome://tracing)."""
        return Path(slots.compile_time_chrome_trace(self, Path(path)))

    def __repr__(self) -> str:
        frames = len(self.frames())
        return (f"CompileTimeReport({self.source}: {self.seconds:.2f}s, {frames} frame compiles, "
                f"{len(self.recompiles)} recompiles, explorer {self.explorer_s:.2f}s)")
