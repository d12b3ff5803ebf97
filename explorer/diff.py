"""explorer.diff(a, b): what changed between two compilations of the same code.

A kernel that is there again (the same name computing the same nodes) is paired with itself first.
The others are paired by the Dynamo FX nodes they compute, not by name: the FX graph is the same for
both compilations of one piece of code, while kernel names, counts and languages move with the
toggles. So an extern ``mm`` that a native-matmul compilation replaced by a Triton kernel with
``tl.dot`` (fused with its epilogue) shows up as one *changed* pair, not an unrelated removal and
addition. Kernels whose nodes went into a kernel that is already paired are reported as removed,
with ``now_in`` naming where their nodes went. A JIT compile and an AOT compile (``explorer.export``) of
the same model trace the same code into differently named FX nodes; their nodes are matched by the
user's line they were traced at first (``fx_renames``).
"""

from __future__ import annotations

import difflib
import html
import math
import re
from dataclasses import asdict, dataclass, field
from typing import Any

from compiler import Compilation, GraphCapture, Kernel
from compiler.model.formatting import fmt_bytes
from compiler.runs.replay import flat_tensors

COUNTED_STAGES = ("fx", "post_grad", "loop_ir", "fused", "kernels")


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
    fused_only_a: list[list[str]]  # fused groups (by their post-grad origins) that only a has
    fused_only_b: list[list[str]]
    kernels: list[KernelChange]
    memory: MemoryChange | None = None

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
class Diff:
    a: str
    b: str
    toggles: dict[str, tuple[Any, Any]]
    graphs: list[GraphDiff]
    timings: dict[str, tuple[float | None, float | None]]
    outputs: OutputComparison
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
        parts = [toggles, f"kernels +{c['added']} -{c['removed']} ~{c['changed']} ={c['same']}",
                 f"fused groups differing: {fused}"]
        peaks = [g.memory for g in self.graphs if g.memory is not None and g.memory.delta is not None]
        if peaks:
            parts.append("peak memory " + ", ".join(f"{fmt_bytes(m.peak_a)} -> {fmt_bytes(m.peak_b)}" for m in peaks))
        if self.outputs.compared:
            eq = "bitwise equal" if self.outputs.bitwise_equal else "not bitwise equal"
            parts.append(f"outputs {eq}, max abs {self.outputs.max_abs:.3g}, max rel {self.outputs.max_rel:.3g}")
        else:
            parts.append(f"outputs not compared ({self.outputs.note})")
        return "; ".join(parts)

    def to_json(self) -> dict[str, Any]:
        return _strict({
            "a": self.a, "b": self.b, "summary": self.summary,
            "toggles": [{"name": k, "a": a, "b": b} for k, (a, b) in self.toggles.items()],
            "graphs": [{**asdict(g), "changed": g.changed} for g in self.graphs],
            "timings": [{"stage": k, "a": a, "b": b} for k, (a, b) in self.timings.items()],
            "outputs": asdict(self.outputs),
        })

    def widget(self) -> Any:
        """The explorer view of ``b`` with this diff shown above it."""
        from widgets import ExplorerWidget

        return ExplorerWidget(self._b.trace_view(), diff=self.to_json())

    def __repr__(self) -> str:
        return f"Diff({self.a} -> {self.b}: {self.summary})"

    def __rich__(self) -> Any:
        from rich.console import Group
        from rich.syntax import Syntax
        from rich.table import Table

        table = Table(title=f"{self.a} -> {self.b}", show_lines=False)
        errors = any(k.error_a is not None or k.error_b is not None for k in self.kernels)
        for column in ("graph", "kernel a", "kernel b", "status", "nodes") + (("error a", "error b") if errors else ()):
            table.add_column(column)
        for g in self.graphs:
            for k in g.kernels:
                table.add_row(g.graph, f"{k.a or ''} {k.a_language or ''}", f"{k.b or ''} {k.b_language or ''}",
                              k.status, ", ".join(k.nodes), *((_e(k.error_a), _e(k.error_b)) if errors else ()))
        parts: list[Any] = [self.summary, table]
        for k in self.kernels:
            if k.status == "changed" and k.source_diff:
                parts.append(Syntax(k.source_diff, "diff", theme="ansi_light"))
        return Group(*parts)

    def _repr_html_(self) -> str:
        esc = html.escape
        rows = "".join(
            f"<tr><td>{esc(g.graph)}</td><td>{esc(k.status)}</td><td><code>{esc(k.a or '')}</code> {esc(k.a_language or '')}</td>"
            f"<td><code>{esc(k.b or '')}</code> {esc(k.b_language or '')}</td><td>{esc(', '.join(k.nodes))}</td></tr>"
            for g in self.graphs for k in g.kernels)
        diffs = "".join(
            f"<details><summary>{esc(k.a or '')} &rarr; {esc(k.b or '')}</summary><pre>{esc(k.source_diff)}</pre></details>"
            for k in self.kernels if k.source_diff and k.status == "changed")
        return (f"<div><p><strong>{esc(self.a)} &rarr; {esc(self.b)}</strong>: {esc(self.summary)}</p>"
                "<table><tr><th>graph</th><th>status</th><th>kernel a</th><th>kernel b</th><th>nodes</th></tr>"
                f"{rows}</table>{diffs}</div>")


def _strict(value: Any) -> Any:
    """Strict JSON for the widget: infinite or NaN errors become strings."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {k: _strict(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_strict(v) for v in value]
    return value


def _e(value: float | None) -> str:
    return "–" if value is None else f"{value:.3g}"


def _v(value: Any) -> str:
    return "default" if value is None else repr(value)


def label(c: Compilation) -> str:
    toggles = ", ".join(f"{k}={v}" for k, v in sorted(c.toggles.items()))
    return f"{c.function}[{toggles or 'defaults'}]" + (" (AOT)" if c.export is not None else "")


def _nodes(k: Kernel, rename: dict[str, str] | None = None) -> list[str]:
    names = list(k.fx_nodes or k.post_grad_nodes or [k.name])
    return [rename.get(n, n) for n in names] if rename and k.fx_nodes else names


def fx_renames(a: GraphCapture, b: GraphCapture) -> dict[str, str]:
    """``b``'s FX node names -> ``a``'s for the same operation: the n-th operation traced at one source line
    (the innermost frame of its stack) in each graph. A JIT graph (Dynamo) and an exported program trace
    the same code but name nodes differently (Dynamo names ``h = torch.relu(...)`` after the variable,
    ``h``; export ``relu``)."""
    def by_line(graph: GraphCapture) -> dict[tuple[Any, int], str]:
        seen: dict[Any, int] = {}
        out = {}
        for node in graph.fx.nodes:
            if node.op in ("placeholder", "get_attr", "output"):
                continue
            line = tuple(node.stack[-1][:2]) if node.stack else node.user_line  # None: code without a file
            position = seen.get(line, 0)
            seen[line] = position + 1
            out[(line, position)] = node.name
        return out

    names_a, names_b = by_line(a), by_line(b)
    return {name: names_a[key] for key, name in names_b.items() if key in names_a}


def _normalized(k: Kernel) -> str:
    return re.sub(rf"\b{re.escape(k.name)}\b", "KERNEL", k.source) if k.name else k.source


def _source_diff(a: Kernel | None, b: Kernel | None) -> str:
    before = _normalized(a).splitlines() if a else []
    after = _normalized(b).splitlines() if b else []
    if before == after:
        return ""
    return "\n".join(difflib.unified_diff(before, after, a.id if a else "(none)", b.id if b else "(none)", lineterm=""))


def _pair_kernels(a: list[Kernel], b: list[Kernel], rename: dict[str, str] | None = None) -> list[KernelChange]:
    """``rename``: ``b``'s FX node names as ``a`` names them (a JIT and an AOT compile), else None."""
    sets_a = [set(_nodes(k)) for k in a]
    sets_b = [set(_nodes(k, rename)) for k in b]
    pair_of_a = _same_kernels(a, b, rename)
    used_b = set(pair_of_a.values())
    candidates = []
    for i, sa in enumerate(sets_a):
        for j, sb in enumerate(sets_b):
            shared = sa & sb
            if shared and i not in pair_of_a and j not in used_b:
                # an extern call whose nodes a generated kernel now computes is what that kernel replaced:
                # pair those first, even when the kernel also absorbed an epilogue with more overlap
                replaced = a[i].language == "extern" and b[j].language != "extern"
                same_language = a[i].language == b[j].language
                candidates.append((replaced, len(shared) / len(sa | sb), a[i].name == b[j].name, same_language,
                                   -i, -j, i, j))
    candidates.sort(reverse=True)
    for *_, i, j in candidates:
        if i not in pair_of_a and j not in used_b:
            pair_of_a[i] = j
            used_b.add(j)
    changes: list[KernelChange] = []
    for i, ka in enumerate(a):
        if i in pair_of_a:
            kb = b[pair_of_a[i]]
            text = _source_diff(ka, kb)
            status = "same" if not text and ka.language == kb.language else "changed"
            changes.append(KernelChange(status, ka.id, kb.id, ka.language, kb.language,
                                        sorted(sets_a[i] | sets_b[pair_of_a[i]]), text))
        else:
            holders = [b[j].id for j, sb in enumerate(sets_b) if sets_a[i] & sb]
            changes.append(KernelChange("removed", ka.id, None, ka.language, None, sorted(sets_a[i]),
                                        _source_diff(ka, None), holders))
    for j, kb in enumerate(b):
        if j not in used_b:
            changes.append(KernelChange("added", None, kb.id, None, kb.language, sorted(sets_b[j]), _source_diff(None, kb)))
    return changes


def _same_kernels(a: list[Kernel], b: list[Kernel], rename: dict[str, str] | None = None) -> dict[int, int]:
    """Kernels of ``b`` that are a kernel of ``a`` again: the same name computing the same post-grad and FX
    nodes (a toggle that only changes code keeps every kernel's name and nodes). Paired before any
    matching by overlap, so an unchanged kernel is never taken by a neighbour sharing an FX node."""
    waiting: dict[tuple[Any, ...], list[int]] = {}
    for j, kb in enumerate(b):
        waiting.setdefault(_identity(kb, rename), []).append(j)
    pairs: dict[int, int] = {}
    for i, ka in enumerate(a):
        same = waiting.get(_identity(ka))
        if same:
            pairs[i] = same.pop(0)
    return pairs


def _identity(k: Kernel, rename: dict[str, str] | None = None) -> tuple[Any, ...]:
    fx_nodes = [rename.get(n, n) for n in k.fx_nodes] if rename else k.fx_nodes
    return k.name, k.language, tuple(sorted(k.post_grad_nodes)), tuple(sorted(fx_nodes))


def _count(g: GraphCapture, stage: str) -> int:
    value = getattr(g, stage)
    return len(value.nodes) if hasattr(value, "nodes") else len(value)


def _graph_diff(a: GraphCapture | None, b: GraphCapture | None, across_export: bool = False) -> GraphDiff:
    """``across_export``: one side is an exported program, whose FX nodes are matched to the other's by line."""
    ref = b or a
    assert ref is not None
    counts = [StageCount(s, _count(a, s) if a else 0, _count(b, s) if b else 0) for s in COUNTED_STAGES]
    groups_a = {tuple(sorted(f.origins or f.nodes)) for f in (a.fused if a else [])}
    groups_b = {tuple(sorted(f.origins or f.nodes)) for f in (b.fused if b else [])}
    return GraphDiff(
        graph=ref.id, kind=ref.kind, counts=counts,
        fused_only_a=[list(t) for t in sorted(groups_a - groups_b)],
        fused_only_b=[list(t) for t in sorted(groups_b - groups_a)],
        kernels=_pair_kernels(a.kernels if a else [], b.kernels if b else [],
                              fx_renames(a, b) if across_export and a and b else None),
        memory=_memory_change(a, b),
    )


def _memory_change(a: GraphCapture | None, b: GraphCapture | None) -> MemoryChange | None:
    ma, mb = (a.memory if a else None), (b.memory if b else None)
    if ma is None and mb is None:
        return None
    return MemoryChange(ma.peak_bytes if ma else None, mb.peak_bytes if mb else None,
                        len(ma.reuse_marks) if ma else None, len(mb.reuse_marks) if mb else None)


def compare_outputs(a: Any, b: Any) -> OutputComparison:
    """Max absolute / relative difference and bitwise equality of two (nested) outputs."""
    import torch

    ta, tb = flat_tensors(a), flat_tensors(b)
    if not ta or len(ta) != len(tb):
        return OutputComparison(False, "no outputs to compare" if not ta else f"{len(ta)} vs {len(tb)} tensors")
    max_abs = max_rel = 0.0
    bitwise = True
    for x, y in zip(ta, tb):
        if x.shape != y.shape:
            return OutputComparison(False, f"shapes differ: {list(x.shape)} vs {list(y.shape)}")
        x, y = x.detach().cpu(), y.detach().cpu()
        bitwise = bitwise and x.dtype == y.dtype and torch.equal(x, y)
        if x.numel() == 0:
            continue
        xd, yd = x.double(), y.double()
        delta = (xd - yd).abs()
        max_abs = max(max_abs, float(delta.max()))
        scale = float(yd.abs().max())
        max_rel = max(max_rel, float(delta.max()) / scale if scale > 0 else (0.0 if float(delta.max()) == 0 else float("inf")))
    return OutputComparison(True, "", max_abs, max_rel, bitwise)


def _kernel_errors(c: Compilation) -> dict[tuple[str, str], float | None]:
    """(graph id, kernel id) -> max relative error in the compilation's latest numerics report."""
    if not c.numerics:
        return {}
    return {(row.graph, row.kernel): row.max_rel for row in c.numerics[-1].kernels.values()}


def _attach_errors(graphs: list[GraphDiff], a: Compilation, b: Compilation) -> None:
    errors_a, errors_b = _kernel_errors(a), _kernel_errors(b)
    for g in graphs:
        for change in g.kernels:
            change.error_a = errors_a.get((g.graph, change.a)) if change.a else None
            change.error_b = errors_b.get((g.graph, change.b)) if change.b else None


def diff(a: Compilation, b: Compilation) -> Diff:
    """What changed from ``a`` to ``b`` (toggles, stages, kernels, compile times, outputs)."""
    for name, c in (("a", a), ("b", b)):
        if not isinstance(c, Compilation):
            raise TypeError(f"explorer.diff compares two Compilations; {name} is a {type(c).__name__}")
    names = sorted(set(a.toggles) | set(b.toggles))
    toggles = {n: (a.toggles.get(n), b.toggles.get(n)) for n in names if a.toggles.get(n) != b.toggles.get(n)}
    graphs_a = {g.index: g for g in a.graphs}
    graphs_b = {g.index: g for g in b.graphs}
    across_export = (a.export is None) != (b.export is None)
    graphs = [_graph_diff(graphs_a.get(i), graphs_b.get(i), across_export) for i in sorted(set(graphs_a) | set(graphs_b))]
    _attach_errors(graphs, a, b)
    stages = [k for k in a.timings if k in b.timings] + [k for k in b.timings if k not in a.timings]
    timings = {k: (a.timings.get(k), b.timings.get(k)) for k in stages}
    if a.outputs is None or b.outputs is None:
        outputs = OutputComparison(False, "a compilation loaded from a file has no outputs")
    else:
        outputs = compare_outputs(a.outputs, b.outputs)
    return Diff(label(a), label(b), toggles, graphs, timings, outputs, b)
