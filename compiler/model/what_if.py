"""``c.what_if(...)``: one fusion decision changed, the program compiled again, both sides compared.

An edit is named by what the user sees: ``unfuse`` a fused group or kernel (its scheduler nodes as separate
kernels), ``prevent=(a, b)`` two nodes in one kernel kept apart, ``fuse=(k1, k2)`` two kernels Inductor kept
apart for a score reason (never a legality one), ``split=node`` a split reduction run as one (GPU: an unsplit one
split), ``order=(a, b)`` one kernel launched before another (resolved in compiler/model/what_if_order.py),
``materialize=node`` a value Inductor inlined into its users' loop stored to a buffer of its own (resolved in
compiler/model/what_if_materialize.py, as is ``unfuse`` of such a loop). This module resolves those names against
the captured stages into an edit (compiler/model/what_if_edits.py, one class per kind): which loop-IR nodes must
end up apart (or together, or in another order), each named by the post-grad nodes it came from, so the same
nodes are found again when the same program compiles again (the compiler's side is compiler/pipeline/what_if.py,
the patches compiler/_torch/fusion_edits.py, reduction_splits.py, node_order.py and materialize.py). Edits the
compiler cannot make are refused here, before anything compiles, with the reason and the valid choices.

``WhatIf`` holds ``before`` and ``after`` (two Compilations of the same program, linked by their FX nodes
through ``compiler.diff``'s kernel pairing), per kernel the bytes it must move and, once ``measure()`` ran, its
time; peak memory, numerics against eager, and a one-line verdict. ``FusionReport`` is every fusion of a graph
prevented in turn, sorted by what it is worth. Plain data: renderings are in compiler/render/what_if.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from . import cost, slots
from .diff import Diff
from .formatting import did_you_mean, fmt_bytes
from .slots import Rendered
from .stages import FusedGroup, FxNode, GraphCapture, Kernel, LoopIRNode
from .what_if_edits import FuseEdit, FusionEdit, PreventEdit, SplitEdit, UnfuseEdit

# Inductor's reasons for declining a fusion that are about its worth, not its legality ("heuristic not needed
# for correctness" in torch/_inductor/choices.py): a fuse= edit may overrule these and no others
SCORE_REASONS = ("no shared data", "score_fusion_memory_threshold", "exceeds max fusion",
                 "Fusion will increase peak memory", "Nodes are too far away",
                 "fusion_prevent_too_many_reads_and_writes")


class WhatIfError(ValueError):
    """An edit that cannot be made as asked: what is wrong and what could be asked instead. Nothing compiled,
    or what compiled did not make the change (the reason Inductor gave is in the message)."""


def node_key(node: LoopIRNode) -> frozenset[str]:
    """A loop-IR node as the post-grad nodes it came from (its origins, inherited ones included)."""
    return frozenset(node.origins) | frozenset(node.inherited_origins)


def graph_node_names(g: GraphCapture) -> frozenset[str]:
    """The post-grad node names of a graph: how an edit tells its graph from the program's others."""
    return frozenset(n.name for n in g.post_grad.nodes)


# --- naming what the user sees ------------------------------------------------------------------------------
def _group_of(graph: GraphCapture, name: str) -> FusedGroup | None:
    return next((f for f in graph.fused if f.name == name), None)


def _fusions(graph: GraphCapture) -> list[FusedGroup]:
    return [f for f in graph.fused if len(f.nodes) > 1]


def searched_graphs(c: Any, graph: int | str | None) -> list[GraphCapture]:
    """The graphs a name is looked for in: the one ``graph`` names, or every graph of ``c`` in order."""
    return [c.graph(graph)] if graph is not None else list(c.graphs)


def resolve_group(c: Any, target: Any, graph: int | str | None = None,
                  offered: Callable[[GraphCapture], list[FusedGroup]] = _fusions) -> tuple[GraphCapture, FusedGroup]:
    """A fused group named by the group, its name, a kernel or a kernel's id or name (an unknown name is refused
    with the groups ``offered`` and their kernels)."""
    graphs = searched_graphs(c, graph)
    if isinstance(target, FusedGroup):
        for g in graphs:
            if any(f is target for f in g.fused):
                return g, target
        raise WhatIfError(f"group {target.name} is not a group of this compilation")
    if isinstance(target, Kernel):
        target = target.id if any(k is target for g in graphs for k in g.kernels) else target.name
    if not isinstance(target, str):
        raise WhatIfError(f"unfuse= takes a fused group or a kernel (the object, or its name/id), got "
                          f"{type(target).__name__}")
    for g in graphs:
        group = _group_of(g, target)
        if group is None:
            kernel = next((k for k in g.kernels if target in (k.id, k.name)), None)
            group = _group_of(g, kernel.group) if kernel is not None and kernel.group else None
        if group is not None:
            return g, group
    choices = [f.name for g in graphs for f in offered(g)] + [k for g in graphs for f in offered(g) for k in f.kernels]
    raise WhatIfError(f"no fused group or kernel {target!r}{did_you_mean(target, choices)}; "
                      f"groups that can be split and their kernels: {choices or 'none (nothing was fused)'}")


def _computed_nodes(graph: GraphCapture) -> list[str]:
    return [n.name for n in graph.post_grad.nodes if n.loop_ir] + [n.name for n in graph.fx.nodes if n.post_grad]


def resolve_node(c: Any, target: Any, graph: int | str | None = None) -> tuple[GraphCapture, list[LoopIRNode]]:
    """The loop-IR nodes computing a node named by the user: an FX or post-grad node (object or name) or a
    loop-IR node (object or name, ``op3``)."""
    graphs = searched_graphs(c, graph)
    name = target.name if isinstance(target, (FxNode, LoopIRNode)) else target
    if not isinstance(name, str):
        raise WhatIfError(f"prevent= and split= take nodes (FX, post-grad or loop-IR nodes, or their names), got "
                          f"{type(target).__name__}")
    for g in graphs:
        by_name = {n.name: n for n in g.loop_ir if not n.eliminated}
        if not isinstance(target, FxNode) and name in by_name:
            return g, [by_name[name]]
        post_grad = {n.name: n for n in g.post_grad.nodes}
        fx = {n.name: n for n in g.fx.nodes}
        names: list[str] = []
        if name in post_grad and (not isinstance(target, FxNode) or any(n is target for n in g.post_grad.nodes)):
            names = post_grad[name].loop_ir
        elif name in fx:
            names = [op for pg in fx[name].post_grad if pg in post_grad for op in post_grad[pg].loop_ir]
        nodes = [by_name[n] for n in dict.fromkeys(names) if n in by_name]
        if nodes:
            return g, nodes
    choices = sorted({n for g in graphs for n in _computed_nodes(g)})
    raise WhatIfError(f"no node {name!r} computed by a kernel{did_you_mean(name, choices)}; "
                      f"nodes (FX and post-grad): {choices[:40]}")


def _names(nodes: Iterable[LoopIRNode]) -> str:
    return ", ".join(o for n in nodes for o in n.origins) or ", ".join(n.name for n in nodes)


def _edit(kind: type[FusionEdit], g: GraphCapture, parts: list[list[LoopIRNode]], label: str,
          note: str = "") -> FusionEdit:
    keys = tuple(frozenset(node_key(n) for n in part) for part in parts)
    shared = [n.name for n in g.loop_ir if not n.eliminated and any(node_key(n) in k for k in keys)
              and not any(n in part for part in parts)]
    if shared:
        note = (note + " " if note else "") + (f"{', '.join(shared)} came from the same post-grad nodes as a node "
                                               "named here, so the edit applies to them too.")
    return kind(g.index, tuple(tuple(n.name for n in part) for part in parts), keys, graph_node_names(g), label, note)


def unfuse_edit(c: Any, target: Any, graph: int | str | None = None) -> FusionEdit:
    g, group = resolve_group(c, target, graph)
    nodes = [g.loop_ir_node(n) for n in group.nodes]
    if len(nodes) < 2:
        kinds = {n.kind for n in nodes}
        why = ("an extern call (a library kernel), never fused" if kinds <= {"extern"} else
               "one scheduler node: its operations were inlined into one loop while lowering, before fusion")
        raise WhatIfError(f"{group.name} ({_names(nodes)}) is {why}, so there is no fusion to undo; "
                          f"fused groups: {[f.name for f in _fusions(g)] or 'none'}")
    return _edit(UnfuseEdit, g, [[n] for n in nodes], f"unfusing {group.name} ({_names(nodes)})",
                 "Its nodes may still fuse with nodes outside the group.")


def prevent_edit(c: Any, pair: Any, graph: int | str | None = None) -> FusionEdit:
    first, second = _pair(pair, "prevent")
    g, nodes_a = resolve_node(c, first, graph)
    _, nodes_b = resolve_node(c, second, g.index)
    common = [n.name for n in nodes_a if n in nodes_b]
    if common:
        raise WhatIfError(f"{_label(first)} and {_label(second)} are computed by one scheduler node ({', '.join(common)}): "
                          "Inductor inlined them into one loop while lowering, not by fusing, so the scheduler "
                          "cannot keep them apart")
    groups_a, groups_b = {n.group for n in nodes_a}, {n.group for n in nodes_b}
    if not groups_a & groups_b:
        raise WhatIfError(f"{_label(first)} and {_label(second)} are not fused (fused groups "
                          f"{', '.join(sorted(str(x) for x in groups_a))} and {', '.join(sorted(str(x) for x in groups_b))}, "
                          f"kernels {_kernels(g, groups_a)} and {_kernels(g, groups_b)}): nothing to prevent")
    return _edit(PreventEdit, g, [nodes_a, nodes_b], f"keeping {_label(first)} and {_label(second)} apart")


def fuse_edit(c: Any, pair: Any, graph: int | str | None = None) -> FusionEdit:
    first, second = _pair(pair, "fuse")
    g, group_a = resolve_group(c, first, graph) if not _is_node(first) else _group_of_node(c, first, graph)
    _, group_b = resolve_group(c, second, g.index) if not _is_node(second) else _group_of_node(c, second, g.index)
    if group_a is group_b:
        raise WhatIfError(f"{_label(first)} and {_label(second)} are already one kernel ({_kernels(g, {group_a.name})})")
    nodes_a = [g.loop_ir_node(n) for n in group_a.nodes]
    nodes_b = [g.loop_ir_node(n) for n in group_b.nodes]
    for group, nodes in ((group_a, nodes_a), (group_b, nodes_b)):
        if any(n.kind in ("extern", "nop") for n in nodes):
            raise WhatIfError(f"cannot fuse {group.name}: it is an extern call (a library kernel) or a no-op, "
                              "which Inductor never fuses with generated code (a legality rule, not a score)")
    reasons = declined(g, group_a, group_b)
    legality = [r for r in reasons if not is_score_reason(r)]
    if legality:
        raise WhatIfError(f"Inductor kept {group_a.name} and {group_b.name} apart for a legality reason, not a score: "
                          f"{'; '.join(dict.fromkeys(legality))}. Only score reasons can be overruled: "
                          f"{', '.join(SCORE_REASONS)}")
    note = ("Inductor declined it: " + "; ".join(dict.fromkeys(reasons)) if reasons else
            "Inductor never considered this pair (they share no buffer); Inductor's legality checks still decide.")
    return _edit(FuseEdit, g, [nodes_a, nodes_b],
                 f"fusing {group_a.name} ({_names(nodes_a)}) with {group_b.name} ({_names(nodes_b)})", note)


def split_reductions(g: GraphCapture, nodes: Iterable[LoopIRNode]) -> list[LoopIRNode]:
    """The reduction nodes of ``g`` computing what ``nodes`` compute: two or more when Inductor split it."""
    origins = {o for n in nodes for o in n.origins}
    return [n for n in g.loop_ir if not n.eliminated and n.kind == "reduction" and origins & set(n.origins)]


def split_edit(c: Any, target: Any, graph: int | str | None = None) -> FusionEdit:
    """A split reduction run as one, or (GPU) a reduction Inductor ran as one split."""
    g, nodes = resolve_node(c, target, graph)
    reductions = split_reductions(g, nodes)
    keys = (frozenset(node_key(n) for n in reductions),)
    names = frozenset(o for n in reductions for o in n.origins)
    graph_nodes = graph_node_names(g)
    if len(reductions) >= 2:
        return SplitEdit(g.index, (tuple(n.name for n in reductions),), keys, graph_nodes,
                         f"running {', '.join(sorted(names))} unsplit", unsplit_nodes=names)
    if not reductions:
        raise WhatIfError(f"{_label(target)} is not a reduction: split= turns a reduction's split off (or, on a GPU, "
                          f"on). Split reductions here: {_split_choices(g) or 'none'}")
    languages = {k.language for k in g.kernels if k.group == reductions[0].group}
    if languages != {"triton"}:
        raise WhatIfError(f"{_label(target)} runs as one reduction in a {'/'.join(sorted(languages)) or 'no'} kernel, "
                          "and only Inductor's Triton backend (GPU) splits a reduction: the C++ backend reduces to a "
                          "single element in one kernel, so there is no split to turn on. Split reductions here: "
                          f"{_split_choices(g) or 'none'}")
    return SplitEdit(g.index, (tuple(n.name for n in reductions),), keys, graph_nodes,
                     f"splitting {', '.join(sorted(names))}", split_nodes=names)


def _split_choices(g: GraphCapture) -> list[str]:
    reductions = [n for n in g.loop_ir if not n.eliminated and n.kind == "reduction"]
    counts: dict[str, int] = {}
    for n in reductions:
        for o in n.origins:
            counts[o] = counts.get(o, 0) + 1
    return sorted(o for o, count in counts.items() if count > 1)


def declined(g: GraphCapture, group_a: FusedGroup, group_b: FusedGroup) -> list[str]:
    """Inductor's reasons (``g.not_fused``) for keeping a node of one group apart from a node of the other."""
    a, b = set(group_a.nodes), set(group_b.nodes)
    out = []
    for record in g.not_fused:
        one, two = set(record.node1.split("_")), set(record.node2.split("_"))
        if (one & a and two & b) or (one & b and two & a):
            out.append(record.reason)
    return out


def is_score_reason(reason: str) -> bool:
    return reason.startswith(SCORE_REASONS)


def _is_node(target: Any) -> bool:
    return isinstance(target, (FxNode, LoopIRNode))


def _group_of_node(c: Any, target: Any, graph: int | str | None) -> tuple[GraphCapture, FusedGroup]:
    g, nodes = resolve_node(c, target, graph)
    group = _group_of(g, nodes[0].group or "")
    if group is None:
        raise WhatIfError(f"{_label(target)} is in no fused group")
    return g, group


def _pair(pair: Any, what: str) -> tuple[Any, Any]:
    if not isinstance(pair, (tuple, list)) or len(pair) != 2:
        raise WhatIfError(f"{what}= takes a pair (a, b), got {pair!r}")
    return pair[0], pair[1]


def _label(target: Any) -> str:
    return getattr(target, "id", None) or getattr(target, "name", None) or str(target)


def _kernels(g: GraphCapture, groups: set[str | None]) -> str:
    names = [k for f in g.fused if f.name in groups for k in f.kernels]
    return ", ".join(names) or ", ".join(str(x) for x in groups)


# --- the comparison -----------------------------------------------------------------------------------------
def kernel_traffic(kernel: Kernel, graph: GraphCapture) -> tuple[float | None, str]:
    """Bytes a kernel must move and where the figure comes from: the trace's cost rule (compiler/model/cost.py,
    Inductor's own estimate for Triton kernels, inputs and output for extern calls) where it gives one; else
    (C++ kernels) the post-grad values that cross the kernel's edge: each value it reads that another kernel or
    the caller made, each value it makes that another kernel or the caller reads, once, at their FX sizes. A
    value a later kernel computes again (Inductor recomputes cheap pointwise ops) is not written for it."""
    rule = cost.kernel_bytes(kernel, graph)
    if rule is not None:
        return rule, "cost rule"
    nodes = {n.name: n for n in graph.post_grad.nodes}
    inside = set(kernel.post_grad_nodes)
    if not inside:
        return None, ""
    computing: dict[str, list[set[str]]] = {}  # node -> the node sets of the kernels computing it
    for other in graph.kernels:
        members = set(other.post_grad_nodes)
        for name in members:
            computing.setdefault(name, []).append(members)

    def read_as_buffer(value: str, user: str) -> bool:
        """Whether ``user``, outside this kernel, reads ``value`` from memory: the caller does (no kernel computes
        the graph's output), and so does a kernel that does not compute ``value`` again itself."""
        return not computing.get(user) or any(value not in members for members in computing[user])

    read = {i for n in inside if n in nodes for i in nodes[n].inputs if i not in inside and i in nodes}
    written = {n for n in inside if n in nodes and any(u not in inside and read_as_buffer(n, u) for u in nodes[n].users)}
    return float(sum(cost._nbytes(nodes[n]) for n in read | written)), "edges"


@dataclass
class KernelSide:
    kernel: str
    language: str
    nodes: list[str]  # the FX nodes it computes (else post-grad nodes)
    bytes: float | None
    ms: float | None = None  # mean per call in the newest measure(), None before


@dataclass
class Side:
    """One compilation's figures in a WhatIf."""

    kernels: list[KernelSide]
    peak_bytes: int | None  # planned peak of the edited graph (Inductor's memory plan)
    total_ms: float | None = None  # time inside the compiled graphs per call, once measured
    line_ms: dict[tuple[str, int], float] = field(default_factory=dict)
    numerics_ok: bool | None = None  # every kernel within tolerance against eager, once measured
    max_rel: float | None = None  # worst kernel's max relative error against eager

    @property
    def bytes(self) -> float | None:
        known = [k.bytes for k in self.kernels if k.bytes is not None]
        return sum(known) if known else None


def side_of(graph: GraphCapture) -> Side:
    rows = []
    for k in graph.kernels:
        traffic, _ = kernel_traffic(k, graph)
        rows.append(KernelSide(k.id, k.language, list(k.fx_nodes or k.post_grad_nodes), traffic))
    return Side(rows, graph.memory.peak_bytes if graph.memory is not None else None)


@dataclass(repr=False)
class WhatIf(Rendered):
    """``c.what_if(...)``: ``before`` (the compilation asked) and ``after`` (the same program with one decision
    changed), the edit, the kernel pairing (``diff``, compiler.diff's) and each side's figures."""

    edit: FusionEdit
    before: Any  # Compilation, never changed
    after: Any  # Compilation
    diff: Diff
    sides: tuple[Side, Side]
    measured: bool = False

    @property
    def graph(self) -> str:
        return f"g{self.edit.graph}"

    def kernel_counts(self) -> tuple[int, int]:
        return len(self.sides[0].kernels), len(self.sides[1].kernels)

    def kernel_pairs(self) -> list[tuple[Any, Any, Any]]:
        """(the diff's kernel change, its kernel's figures before, after; None where a side has none) per kernel
        pair of the edited graph: what the terminal's and the widget's tables show."""
        before = {k.kernel: k for k in self.sides[0].kernels}
        after = {k.kernel: k for k in self.sides[1].kernels}
        graph = next((g for g in self.diff.graphs if g.graph == self.graph), None)
        return [(change, before.get(change.a or ""), after.get(change.b or ""))
                for change in (graph.kernels if graph is not None else [])]

    @property
    def verdict(self) -> str:
        """One line: what the edit does to traffic and time, e.g. "unfusing op0_op1 (add, mul) costs 1.5 KB
        more traffic and 0.004 ms more per call (1 -> 2 kernels)"."""
        before, after = self.sides
        counts = f"{len(before.kernels)} -> {len(after.kernels)} kernels"
        parts = []
        if before.bytes is not None and after.bytes is not None:
            delta = after.bytes - before.bytes
            parts.append("moves the same bytes" if delta == 0 else
                         f"{'saves' if delta < 0 else 'costs'} {fmt_bytes(abs(delta))} {'of' if delta < 0 else 'more'} traffic")
        if before.total_ms is not None and after.total_ms is not None:
            delta_ms = after.total_ms - before.total_ms
            parts.append(f"{'saves' if delta_ms < 0 else 'costs'} {abs(delta_ms):.3g} ms{'' if delta_ms < 0 else ' more'} "
                         "per call")
        elif not self.measured:
            parts.append("time not measured (w.measure())")
        numerics = ""
        if after.numerics_ok is False:
            numerics = "; its numerics diverge from eager"
        return f"{self.edit.label} {' and '.join(parts) or 'changes nothing measurable'} ({counts}){numerics}"

    def measure(self, runs: int = 20, warmup: int = 3, before: Side | None = None) -> "WhatIf":
        """Time both sides (torch.profiler, per kernel and per line) and check each against eager, in this process.
        The figures are kept here; ``before``'s own ``profiles`` and ``numerics`` are left as they were.
        ``before``: the original's figures from an earlier measure, taken as they are (a fusion report
        measures the original once)."""
        sides = [(self.after, self.sides[1])]
        if before is not None and before.total_ms is not None:
            self.sides = (before, self.sides[1])
        else:
            sides.insert(0, (self.before, self.sides[0]))
        for compilation, side in sides:
            profile = slots.profile(compilation, runs=runs, warmup=warmup)
            graph = compilation.graphs[self.edit.graph]
            side.total_ms = profile.total_ms
            side.line_ms = dict(profile.line_ms)
            for row in side.kernels:
                row.ms = next((ms for key, ms in profile.kernel_ms.items()
                               if profile.kernels[key].kernel == row.kernel and profile.kernels[key].graph == graph.id),
                              0.0)
            report = slots.check_numerics(compilation, "eager", None, None, None)
            side.numerics_ok = report.ok
            errors = [r.max_rel for r in report.kernels.values() if r.max_rel is not None]
            side.max_rel = max(errors) if errors else None
        self.measured = True
        return self

    def __repr__(self) -> str:
        return f"WhatIf({self.verdict})"


@dataclass
class FusionWorth:
    """One fusion of a graph, prevented: what it is worth (the unfused side minus the fused one)."""

    group: str
    nodes: list[str]
    kernels: tuple[int, int]  # kernels with the fusion, without it
    bytes_saved: float | None  # traffic the fusion saves (positive: fusing moves fewer bytes)
    ms_saved: float | None  # time per call it saves (positive: the fused program is faster), once measured
    verdict: str
    error: str | None = None  # why this fusion could not be prevented


@dataclass(repr=False)
class FusionReport(Rendered):
    """Every fusion of one graph, each prevented in a compile of its own, sorted by what it saves."""

    function: str
    graph: str
    rows: list[FusionWorth]
    measured: bool
    how: str  # how the compiles ran ("in this process, one after another")

    def __repr__(self) -> str:
        return f"FusionReport({self.function} {self.graph}: {len(self.rows)} fusions, {self.how})"


def sort_worth(rows: list[FusionWorth]) -> list[FusionWorth]:
    return sorted(rows, key=lambda r: (r.error is not None, -(r.ms_saved if r.ms_saved is not None else 0.0),
                                       -(r.bytes_saved or 0.0), r.group))
