"""A watched run: what torch.compile did over the steps of a loop (``explorer.watch()``) or of a job's
TORCH_TRACE log (``explorer.load_watch``).

``WatchReport`` holds, in plain data: the steps (wall time, the compiled frames that ran, the compiles
that happened), every compile and recompile with Dynamo's reason, the guard that failed (its source line
and the value that broke it), the graph breaks with how often each fired, cache hits and misses, and
each frame's calls and time. Each compile links to a full ``Compilation`` captured only when asked
(``event.compilation()``). Built by compiler/pipeline/watch.py; rendered by compiler/render/watch.py.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Callable

from . import formatting, slots
from .dynamo import GraphBreak, Guard
from .slots import Rendered
from .watch_cudagraphs import CudaGraphStepEvent

# the TORCH_TRACE artifact a watch writes at the end of a step in which compiles began:
# {"step", "compile_ids", "rule"} (``rule``: the StepRule's value; logs written before it have none)
STEP_MARK = "explorer_watch_step"


class StepRule(str, Enum):
    """What made a watch's steps (compiler/pipeline/watch_steps.py): the first of these that applies."""

    MARKED = "marked"  # the loop marks them: w.step() at each step's end, or w.steps_of(iterable)
    CALL = "call"  # explorer.watch(fn): each call of fn
    OPTIMIZER = "optimizer"  # one per step() of the first torch optimizer that stepped (eager steps only)
    COMPILED_CALL = "compiled_call"  # one per call of the outermost compiled frame: the first whose graph ran

    def describe(self, anchor: str = "") -> str:
        """The rule in words, with what it counted (``anchor``: the optimizer's class, the frame's function)."""
        of = f" ({anchor})" if anchor else ""
        return {
            StepRule.MARKED: "marked by w.step() / w.steps_of()",
            StepRule.CALL: f"one per call of the watched function{of}",
            StepRule.OPTIMIZER: f"one per optimizer step(){of}",
            StepRule.COMPILED_CALL: f"one per call of the outermost compiled frame{of}",
        }[self]


@dataclass(repr=False)
class Step(Rendered):
    """One step of the loop: its wall time, the compiled frames that ran in it and the compiles it did."""

    index: int
    seconds: float
    calls: dict[str, int] = field(default_factory=dict)  # compiled graph (compile id) -> calls in this step
    frame_seconds: dict[str, float] = field(default_factory=dict)  # compile id -> estimated time in the graph
    compiles: list[str] = field(default_factory=list)  # compile ids that started in this step

    @property
    def frames(self) -> list[str]:
        """The compiled graphs (compile ids) that ran in this step."""
        return [cid for cid, n in self.calls.items() if n]

    def __repr__(self) -> str:
        compiled = f", compiled {', '.join(self.compiles)}" if self.compiles else ""
        ran = ", ".join(f"{cid} x{n}" for cid, n in self.calls.items() if n) or "no compiled frame"
        return f"Step({self.index}: {self.seconds * 1e3:.2f} ms, {ran}{compiled})"


@dataclass(repr=False)
class CompileEvent(Rendered):
    """One frame compile Dynamo did during the run; a recompile when an earlier compile's guard failed."""

    compile_id: str  # "1/0": frame 1, its first compile; "1/1": its first recompile
    function: str = ""
    filename: str | None = None  # where the function is defined
    function_line: int | None = None
    step: int | None = None  # the step it happened in (None: a log, which marks no steps)
    seconds: float = 0.0  # Dynamo's entire_frame_compile_time_s
    reasons: list[str] = field(default_factory=list)  # Dynamo's recompile reasons, one per failed cache entry
    guard: Guard | None = None  # the failed guard, as the earlier compile installed it
    guard_line: tuple[str, int] | None = None  # the user line that guard came from
    value: str | None = None  # the value that broke it: repr read from the frame, or Dynamo's "actual ..."
    cache: dict[str, str] = field(default_factory=dict)  # "fx_graph" / "aotautograd" -> "hit" | "miss" | "bypass"
    graph_breaks: list[GraphBreak] = field(default_factory=list)
    skipped: str = ""  # why Dynamo gave up on the frame (it ran eagerly); "" when it compiled
    # how to capture this compile's full Compilation when asked (the graph a live watch kept, or the log)
    capture_from: Callable[[], Any] | None = field(default=None, repr=False, compare=False)
    _compilation: Any = field(default=None, repr=False, compare=False)

    @property
    def is_recompile(self) -> bool:
        return bool(self.reasons)

    @property
    def frame_id(self) -> str:
        return self.compile_id.split("/")[0]

    @property
    def reason(self) -> str:
        """Dynamo's first recompile reason, shortened to its first line ("" for a first compile)."""
        if not self.reasons:
            return ""
        first = self.reasons[0].splitlines()[0].split("  # ")[0].strip()
        return re.sub(r"^[!\d/_]+: ", "", first)  # "0/1: tensor 'x' ..." names the compile whose guard failed

    @property
    def file(self) -> str | None:
        """The failed guard's user file (a recompile), else the compiled function's."""
        return self.guard_line[0] if self.guard_line else self.filename

    @property
    def line(self) -> int | None:
        return self.guard_line[1] if self.guard_line else self.function_line

    def compilation(self) -> Any:
        """The full ``Compilation`` of this compile's graph, captured now (once) from what the run kept."""
        if self._compilation is None:
            if self.capture_from is None:
                raise LookupError(f"compile {self.compile_id} kept nothing to capture it from (a frame that "
                                  "made no graph, or a watch made without keep_graphs)")
            self._compilation = self.capture_from()
        return self._compilation

    def __repr__(self) -> str:
        kind = "Recompile" if self.is_recompile else "Compile"
        at = f" step {self.step}" if self.step is not None else ""
        where = f" at {formatting.where((self.file, self.line))}" if self.file and self.line else ""
        why = f": {self.reason[:80]}" if self.reason else ""
        value = f" (value {self.value})" if self.value is not None else ""
        return f"{kind}({self.compile_id} {self.function}{at}{where}{why}{value})"


@dataclass(repr=False)
class BreakCount(Rendered):
    """A graph break and how often it fired during the run (the calls of the graph before it)."""

    reason: str
    filename: str | None
    line: int | None
    count: int
    function: str = ""
    compile_ids: list[str] = field(default_factory=list)
    detail: GraphBreak | None = None

    def __repr__(self) -> str:
        where = f" at {formatting.where((self.filename, self.line))}" if self.filename and self.line else ""
        return f"GraphBreak({self.reason[:80]}{where}, fired {self.count}x)"


@dataclass(repr=False)
class FrameStats(Rendered):
    """One compiled frame (a code object Dynamo compiled) over the run: its compiles, calls and time."""

    frame_id: str
    function: str
    filename: str | None = None
    line: int | None = None
    compile_ids: list[str] = field(default_factory=list)
    calls: int = 0
    timed_calls: int = 0  # calls whose time was measured (sampled)
    timed_seconds: float = 0.0
    recompiles: int = 0
    graph_breaks: int = 0  # breaks inside this frame (distinct)
    cudagraph_replays: int = 0  # its graphs' CUDA graph replays seen (mode="reduce-overhead")
    cudagraph_skips: int = 0  # functions of its graphs the CUDA graph tree gave up on

    @property
    def replays_cuda_graphs(self) -> bool:
        """Whether the frame's compiled graphs replay from CUDA graphs (at least once in the run)."""
        return self.cudagraph_replays > 0

    @property
    def mean_seconds(self) -> float:
        return self.timed_seconds / self.timed_calls if self.timed_calls else 0.0

    @property
    def seconds(self) -> float:
        """Estimated time inside its compiled graphs: the sampled mean times the calls."""
        return self.mean_seconds * self.calls

    def __repr__(self) -> str:
        return (f"Frame({self.frame_id} {self.function}: {self.calls} calls, ~{self.seconds * 1e3:.2f} ms, "
                f"{len(self.compile_ids)} compiles, {self.recompiles} recompiles)")


@dataclass(repr=False)
class WatchReport(Rendered):
    """Everything a watch saw, as it stood when the report was made (``w.report()`` of a live watch is a
    snapshot: the loop going on changes the watch, not this). ``source`` says what was watched: "a loop",
    "calls of f", or the TORCH_TRACE log it was read from."""

    steps: list[Step] = field(default_factory=list)
    compiles: list[CompileEvent] = field(default_factory=list)
    graph_breaks: list[BreakCount] = field(default_factory=list)
    frames: list[FrameStats] = field(default_factory=list)
    source: str = "a loop"
    seconds: float = 0.0
    sample_every: int = 1
    error: str | None = None  # the exception that ended the loop, if one did
    notes: list[str] = field(default_factory=list)
    step_rule: StepRule | None = None  # what made the steps (None: a log of a run no watch marked)
    step_anchor: str = ""  # what the rule counted: the optimizer's class, the outermost frame's function
    active: bool = False  # the loop was still running when this report was made
    # the CUDA graph tree's warm-ups, recordings, re-records, skips and replays per step (a live watch of a
    # program compiled with mode="reduce-overhead"; a log holds none)
    cudagraph_events: list[CudaGraphStepEvent] = field(default_factory=list)

    @property
    def recompiles(self) -> list[CompileEvent]:
        return [c for c in self.compiles if c.is_recompile]

    @property
    def cache(self) -> dict[str, dict[str, int]]:
        """``{"fx_graph": {"hit": 2, "miss": 1}, ...}`` over every compile."""
        out: dict[str, dict[str, int]] = {}
        for event in self.compiles:
            for cache, state in event.cache.items():
                counts = out.setdefault(cache, {})
                counts[state] = counts.get(state, 0) + 1
        return out

    def compile(self, compile_id: str) -> CompileEvent:
        for event in self.compiles:
            if event.compile_id == compile_id:
                return event
        raise KeyError(f"no compile {compile_id!r}; compiles: {[c.compile_id for c in self.compiles]}")

    def summary(self) -> str:
        """One line: steps, compiles, recompiles, graph breaks."""
        if not self.compiles and not any(f.calls for f in self.frames):
            return f"{len(self.steps)} steps, {self.seconds:.3f} s: nothing compiled and no compiled frame ran"
        fired = sum(b.count for b in self.graph_breaks)
        return (f"{len(self.steps)} steps, {self.seconds:.3f} s: {len(self.compiles)} compiles "
                f"({len(self.recompiles)} recompiles), {len(self.graph_breaks)} graph breaks (fired {fired}x), "
                f"{len(self.frames)} frames")

    @property
    def steps_made_by(self) -> str:
        """The step rule in words ("one per optimizer step() (SGD)"), "" when no rule made them."""
        return self.step_rule.describe(self.step_anchor) if self.step_rule is not None else ""

    def __repr__(self) -> str:
        error = f", ended by {self.error}" if self.error else ""
        return f"Watch({self.summary()}{error})"

    def __str__(self) -> str:
        """The whole report as the terminal shows it, in plain text (``print(w)``)."""
        return slots.plain_text(self)


@dataclass(repr=False)
class LiveView(Rendered):
    """What a terminal shows while a watch runs (``explorer.watch(live=True)``): the summary line and a few
    rows of each table (the latest compiles, the breaks that fired most, the busiest frames), so that the
    display stays one screen high however long the run."""

    report: WatchReport
    rows: int = 6

    def __repr__(self) -> str:
        return f"LiveView({self.report.summary()})"
