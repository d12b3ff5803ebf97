"""``Diff``: what changed between two compilations of the same code, as plain data.

A diff holds the torch release of each side, the toggles that differ, per graph the node counts of each
stage, the fused groups only one side has, the kernels paired across the two sides (``KernelChange``:
added, removed, changed or the same, with each side's time and error where a report has them) and the
planned peak memory, then the compile and run times and how the outputs compare. The pairing that
builds it is ``diff_pairing.py`` (graphs and FX nodes matched by line in ``diff_lines.py``, the
reports' figures in ``diff_reports.py``); ``compiler.diff(a, b)`` (compiler/runs/diff.py) compares the
outputs with torch. Renderings (compiler/render/diff.py) and JSON (compiler/io/diff.py) fill the
slots this class calls.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from . import slots
from .formatting import fmt_bytes
from .slots import Rendered


@dataclass
class StageCount:
    stage: str
    a: int
    b: int


@dataclass
class KernelChange:
    status: str  # added | removed | changed | same
    a: str | None
    b: str | None
    a_language: str | None
    b_language: str | None
    nodes: list[str]  # FX nodes (else post-grad nodes) the kernel(s) implement
    source_diff: str = ""  # unified diff of the sources ("" when the sources are the same)
    now_in: list[str] = field(default_factory=list)  # removed kernels: b kernels holding their nodes
    error_a: float | None = None  # max relative error of the kernel in a's / b's latest numerics report
    error_b: float | None = None
    ms_a: float | None = None  # mean ms per run of the kernel in a's / b's latest profile
    ms_b: float | None = None
    lines: list[tuple[str, int]] = field(default_factory=list)  # the user's lines the kernel(s) compute

    def __repr__(self) -> str:
        sides = {"added": f"+ {self.b}", "removed": f"- {self.a}", "same": f"= {self.a}"}
        text = sides.get(self.status, f"~ {self.a} ({self.a_language}) -> {self.b} ({self.b_language})")
        return f"KernelChange({text} for {self.nodes})"


@dataclass
class MemoryChange:
    """Planned peak memory and buffer reuse of one graph on both sides (None where a side has no timeline)."""

    peak_a: int | None
    peak_b: int | None
    reused_a: int | None  # buffers taking over a freed buffer's storage (# reuse), in-place updates included
    reused_b: int | None

    @property
    def delta(self) -> int | None:
        return None if self.peak_a is None or self.peak_b is None else self.peak_b - self.peak_a


@dataclass
class GraphDiff:
    graph: str
    kind: str
    counts: list[StageCount]
    fused_only_a: list[list[str]]  # fused groups that only a has: their post-grad origins, or where FX nodes
    # were matched by line (diff_lines.py), the FX nodes those come from (a's names)
    fused_only_b: list[list[str]]
    kernels: list[KernelChange]
    memory: MemoryChange | None = None
    graph_a: str | None = None  # a's id of this graph (None: a has none); ``graph`` is b's id, else a's
    graph_b: str | None = None  # b's; the two differ where graphs were paired by their lines (diff_lines.py)

    @property
    def ids(self) -> str:
        """``g0``, or ``g0 -> g1`` where the two sides number the graph differently."""
        if self.graph_a and self.graph_b and self.graph_a != self.graph_b:
            return f"{self.graph_a} -> {self.graph_b}"
        return self.graph

    @property
    def changed(self) -> bool:
        return bool(self.fused_only_a or self.fused_only_b or any(c.a != c.b for c in self.counts)
                    or any(k.status != "same" for k in self.kernels) or (self.memory and self.memory.delta))


@dataclass
class OutputComparison:
    compared: bool
    note: str = ""
    max_abs: float | None = None  # largest |a - b| over all elements
    max_rel: float | None = None  # max_abs relative to the largest |b| of that tensor (stable near zeros)
    bitwise_equal: bool | None = None


@dataclass(repr=False)
class Diff(Rendered):
    a: str
    b: str
    toggles: dict[str, tuple[Any, Any]]
    graphs: list[GraphDiff]
    timings: dict[str, tuple[float | None, float | None]]
    outputs: OutputComparison
    torch: tuple[str, str] = ("", "")  # the torch release each side was compiled with
    run_ms: tuple[float | None, float | None] = (None, None)  # time per run in each side's latest profile
    _b: Any = field(default=None, repr=False, compare=False)  # the newer Compilation, for widget()

    @property
    def kernels(self) -> list[KernelChange]:
        return [k for g in self.graphs for k in g.kernels]

    def counts(self) -> dict[str, int]:
        out = {"added": 0, "removed": 0, "changed": 0, "same": 0}
        for k in self.kernels:
            out[k.status] += 1
        return out

    @property
    def summary(self) -> str:
        toggles = ", ".join(f"{k}: {_v(a)} -> {_v(b)}" for k, (a, b) in self.toggles.items()) or "same toggles"
        c = self.counts()
        fused = sum(len(g.fused_only_a) + len(g.fused_only_b) for g in self.graphs)
        parts = [f"torch {self.torch[0]} -> {self.torch[1]}"] if self.torch[0] != self.torch[1] else []
        parts += [toggles, f"kernels +{c['added']} -{c['removed']} ~{c['changed']} ={c['same']}",
                 f"fused groups differing: {fused}"]
        peaks = [g.memory for g in self.graphs if g.memory is not None and g.memory.delta is not None]
        if peaks:
            parts.append("peak memory " + ", ".join(f"{fmt_bytes(m.peak_a)} -> {fmt_bytes(m.peak_b)}" for m in peaks))
        if None not in self.run_ms:
            parts.append(f"run {self.run_ms[0]:.3g} ms -> {self.run_ms[1]:.3g} ms")
        if self.outputs.compared:
            eq = "bitwise equal" if self.outputs.bitwise_equal else "not bitwise equal"
            parts.append(f"outputs {eq}, max abs {self.outputs.max_abs:.3g}, max rel {self.outputs.max_rel:.3g}")
        else:
            parts.append(f"outputs not compared ({self.outputs.note})")
        return "; ".join(parts)

    def to_json(self) -> dict[str, Any]:
        """What the explorer widget shows above ``b`` (compiler/io/diff.py; strict JSON)."""
        return slots.diff_json(self)

    def widget(self) -> Any:
        """The explorer view of ``b`` with this diff shown above it (the widget view explorer provides)."""
        widget = slots.widget(self._b.trace_view)
        widget.diff = self.to_json()
        return widget

    def __repr__(self) -> str:
        return f"Diff({self.a} -> {self.b}: {self.summary})"


def _v(value: Any) -> str:
    return "default" if value is None else repr(value)
