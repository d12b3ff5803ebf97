"""The Dynamo stage: what happened before the FX graph existed.

Guards (what must stay true for a compiled graph to be reused), graph breaks (where Dynamo stopped
tracing and why, with the graphs on either side), symbols (the dynamic dimensions and their ranges),
recompiles (which guard failed, and the graphs compiled for it) and Dynamo's own per-frame
compilation metrics. The same objects come from a live capture and from a TORCH_TRACE log: both are
built from torch's structured trace records (compiler/pipeline/dynamo_records.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from . import formatting
from .slots import Rendered

UserLine = tuple[str, int]


@dataclass(repr=False)
class Guard(Rendered):
    """One check Dynamo installed: the compiled graph runs only while all of them hold."""

    kind: str  # Dynamo's guard type: TENSOR_MATCH, TYPE_MATCH, ID_MATCH, EQUALS_MATCH, SHAPE_ENV, ...
    code: str  # what is checked, as Dynamo prints it
    source: str | None = None  # the guarded value: L['x'], G['torch'], L['self'].fc.weight
    user_line: UserLine | None = None  # the user line that made Dynamo install it
    user_code: str = ""  # that line's text, as Dynamo recorded it
    compile_id: str | None = None

    def __repr__(self) -> str:
        where = f" @ {formatting.where(self.user_line)}" if self.user_line else ""
        return f"Guard({self.kind}: {self.code[:80]}{where})"


@dataclass(repr=False)
class GraphBreak(Rendered):
    """Where Dynamo stopped tracing, why, and the graphs compiled before and after it."""

    reason: str  # one line: "Failed to trace builtin operator"
    explanation: str = ""
    hints: list[str] = field(default_factory=list)
    user_line: UserLine | None = None  # the user line that broke the graph
    stack: list[tuple[str, int, str]] = field(default_factory=list)  # user frames, outermost first
    compile_id: str | None = None  # the frame compile that broke
    resume: str | None = None  # the compile id of the frame that runs what follows the break
    graphs_before: list[str] = field(default_factory=list)  # graph ids (g<index>) in this compilation
    graphs_after: list[str] = field(default_factory=list)
    # Dynamo could not resume after this break and gave up on the whole frame, which then ran eagerly
    # (a break inside a loop, say): why, in Dynamo's words; "" for an ordinary break
    frame_skipped: str = ""

    def __repr__(self) -> str:
        where = f" at {formatting.where(self.user_line)}" if self.user_line else ""
        skipped = "; frame skipped, ran eagerly" if self.frame_skipped else ""
        return f"GraphBreak({self.reason}{where}: {self.graphs_before} | {self.graphs_after}{skipped})"


@dataclass(frozen=True)
class ShapeGuard:
    """A guard Dynamo's ShapeEnv added on symbols (``s77 <= 4``), and the user line that caused it."""

    expr: str
    user_line: UserLine | None = None


@dataclass(repr=False)
class ShapeSymbol(Rendered):
    """A dynamic dimension (or int) Dynamo traced symbolically."""

    name: str  # s77, u0
    source: str | None = None  # L['x'].size()[0]
    value: str | None = None  # the example value the compile saw (its hint)
    initial_range: str = ""  # [2, int_oo] when created
    range: str = ""  # after the guards below narrowed it
    unbacked: bool = False  # data-dependent (no example value)
    specialized: str | None = None  # the constant it was specialized to, if any
    specialization_reason: str = ""
    guards: list[ShapeGuard] = field(default_factory=list)
    user_line: UserLine | None = None  # where it was created
    compile_id: str | None = None

    def __repr__(self) -> str:
        special = f" = {self.specialized}" if self.specialized is not None else ""
        return f"ShapeSymbol({self.name}{special} from {self.source}, range {self.range or self.initial_range})"


@dataclass(repr=False)
class Recompile(Rendered):
    """A frame compiled again because a guard of an earlier compile failed."""

    compile_id: str
    reasons: list[str]  # Dynamo's words: "tensor 'x' size mismatch at index 0. expected 8, actual 16"
    function: str = ""
    graphs: list[str] = field(default_factory=list)  # the graphs compiled for it

    def __repr__(self) -> str:
        return f"Recompile({self.compile_id} {self.function}: {self.reasons[0][:80] if self.reasons else '?'} -> {self.graphs})"


@dataclass(repr=False)
class FrameMetrics(Rendered):
    """Dynamo's own compilation metrics for one frame compile (``compilation_metrics`` records)."""

    compile_id: str
    kind: str  # "frame" (a whole frame compile) | "backward" (a lazily compiled backward)
    values: dict[str, Any] = field(default_factory=dict)  # scalar fields as Dynamo named them

    @property
    def function(self) -> str:
        return str(self.values.get("co_name") or "")

    @property
    def seconds(self) -> float:
        for key in ("entire_frame_compile_time_s", "inductor_compile_time_s"):
            value = self.values.get(key)
            if isinstance(value, (int, float)):
                return float(value)
        return 0.0

    def __repr__(self) -> str:
        return f"FrameMetrics({self.compile_id} {self.kind} {self.function}: {self.seconds:.3f}s)"


@dataclass(frozen=True)
class DynamoFrame:
    """One frame compile: the function Dynamo traced and the graphs it produced."""

    compile_id: str
    function: str
    filename: str | None = None
    line: int | None = None
    graphs: tuple[str, ...] = ()
    skipped: str = ""  # why Dynamo gave up on this frame, which then ran eagerly ("" when it compiled)


@dataclass(repr=False)
class DynamoStage(Rendered):
    """Everything Dynamo reported for one compilation, in compile order."""

    frames: list[DynamoFrame] = field(default_factory=list)
    guards: list[Guard] = field(default_factory=list)  # grouped by kind, kinds in order of first appearance
    graph_breaks: list[GraphBreak] = field(default_factory=list)
    symbols: list[ShapeSymbol] = field(default_factory=list)
    recompiles: list[Recompile] = field(default_factory=list)
    compile_metrics: list[FrameMetrics] = field(default_factory=list)

    @property
    def skipped_frames(self) -> list[DynamoFrame]:
        """The frames Dynamo gave up on: they ran eagerly, with no compiled graph."""
        return [f for f in self.frames if f.skipped]

    def guards_by_kind(self) -> dict[str, list[Guard]]:
        grouped: dict[str, list[Guard]] = {}
        for guard in self.guards:
            grouped.setdefault(guard.kind, []).append(guard)
        return grouped

    def user_lines(self) -> set[UserLine]:
        """Every user line a guard, break or symbol points at (their text goes into the trace's sources)."""
        lines = {g.user_line for g in self.guards} | {b.user_line for b in self.graph_breaks}
        lines |= {s.user_line for s in self.symbols} | {g.user_line for s in self.symbols for g in s.guards}
        lines |= {(f, n) for b in self.graph_breaks for f, n, _ in b.stack}
        return {line for line in lines if line}

    def __bool__(self) -> bool:
        return bool(self.frames or self.guards or self.graph_breaks or self.symbols or self.compile_metrics)

    def __repr__(self) -> str:
        skipped = f", {len(self.skipped_frames)} skipped (ran eagerly)" if self.skipped_frames else ""
        return (f"DynamoStage({len(self.frames)} frames{skipped}, {len(self.guards)} guards, {len(self.graph_breaks)} "
                f"graph breaks, {len(self.symbols)} symbols, {len(self.recompiles)} recompiles)")
