"""``c.what_if(...)`` and ``c.fusion_report()``: the same program compiled again with one decision changed.

``WAYS`` holds one row per edit kind (compiler/model/what_if_edits.py): how the user's value is resolved against
the captured stages (compiler/model/what_if*.py: unknown names and edits the compiler cannot make are refused
there, before anything compiles), the patch that makes the edit during the compile (compiler/_torch/
fusion_edits.py, reduction_splits.py, node_order.py, materialize.py, each restored on exit), and the check of
what compiled: the edit must show in the new stages, or the result is refused with what Inductor said. The
compilation's own function, inputs, keyword arguments and settings (toggles and the Inductor overrides it was
captured under, its grad mode, backward and dynamic shapes) are captured again by ``capture``, as
``explorer.compile`` would. The original compilation is never changed (a measure() keeps its reports on the
WhatIf).

The fusion report runs one such compile per fused group of a graph (``fusion_worth``); here in this process,
one after another (``fusion_report_here``), or in sweep workers (compiler/sweeps/fusion_report.py, which
fills ``c.fusion_report()`` and calls back here for each trial).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any, Callable, ContextManager

import torch

from .._torch import fusion_edits, node_order, reduction_splits
from .._torch.materialize import Outcome as Stored
from .._torch.materialize import nodes_realized, view_nodes
from ..model import progress, slots
from ..model.compilation import Compilation
from ..model.diff_pairing import diff
from ..model.errors import CompileError
from ..model.stages import FusedGroup, GraphCapture
from ..model.what_if import (FusionReport, FusionWorth, Side, WhatIf, WhatIfError, fuse_edit, node_key, prevent_edit,
                             side_of, sort_worth, split_edit, split_reductions)
from ..model.what_if_edits import (EditKind, FuseEdit, FusionEdit, MaterializeEdit, OrderEdit, SplitEdit,
                                   PairEdit)
from ..model.what_if_materialize import materialize_edit, unfuse_or_cut
from ..model.what_if_order import launch_order, order_edit
from .capture import capture


@dataclass(frozen=True)
class EditWay:
    """How one kind of edit is made: ``resolve`` names what the user asked (compilation, value, graph) as an edit
    of the captured stages, or refuses it; ``patch`` is the block that makes it in the compiles inside it (its
    value: what the patch did, for ``check``); ``check`` refuses a recompile that did not make it."""

    resolve: Callable[[Compilation, Any, int | str | None], FusionEdit]
    patch: Callable[[Any], ContextManager[Any]]
    check: Callable[[Any, Compilation, Any], None]
    asks: str  # how the keyword takes its value, for the message of a call that asked no edit or several


def _views(g: GraphCapture) -> frozenset[str]:
    return view_nodes({n.name: n.target for n in g.post_grad.nodes if n.op == "call_function"})


def _scheduled(edit: PairEdit) -> ContextManager[Any]:
    return fusion_edits.fusion_decided(edit.decide, offers=isinstance(edit, FuseEdit), ends_kernel=edit.ends_kernel)


@contextlib.contextmanager
def _stored(edit: MaterializeEdit) -> Any:
    """The values stored while lowering, then kept out of their users' kernels by the scheduler."""
    with nodes_realized(edit.realize) as outcome, \
            fusion_edits.fusion_decided(edit.decide, ends_kernel=edit.ends_kernel):
        yield outcome


def _edited_graph(edit: FusionEdit, after: Compilation) -> GraphCapture:
    if len(after.graphs) <= edit.graph:
        raise WhatIfError(f"the recompile made {len(after.graphs)} graphs, not the graph g{edit.graph} edited")
    return after.graphs[edit.graph]


def _groups_of_parts(edit: FusionEdit, after: Compilation) -> list[set[str]]:
    graph = _edited_graph(edit, after)
    groups = [{n.group or n.name for n in graph.loop_ir if not n.eliminated and node_key(n) in keys} for keys in edit.keys]
    missing = [" ".join(part) for part, found in zip(edit.parts, groups) if not found]
    if missing:
        raise WhatIfError(f"the recompile has no scheduler node for {missing}: the program did not compile to the "
                          "same nodes again")
    return groups


def _check_apart(edit: FusionEdit, after: Compilation, outcome: Any = None) -> None:
    """Each part's nodes must be in fused groups of their own."""
    groups = _groups_of_parts(edit, after)
    for i, first in enumerate(groups):
        for second in groups[i + 1:]:
            if first & second:
                raise WhatIfError(f"Inductor fused {sorted(first & second)} anyway: it reached that fusion without asking "
                                  "Scheduler.can_fuse about the pair, so this edit cannot be made on the installed torch")


def _check_together(edit: FusionEdit, after: Compilation, outcome: Any = None) -> None:
    """The two parts must share a fused group, or the reason Inductor still declined it is the refusal."""
    groups = _groups_of_parts(edit, after)
    if set.intersection(*groups):
        return
    graph = after.graphs[edit.graph]
    apart = [nf.reason for nf in graph.not_fused
             if any(set(nf.node1.split("_")) & g for g in groups) and any(set(nf.node2.split("_")) & g for g in groups)]
    reason = "; ".join(dict.fromkeys(apart)) or ("its code generator's own check, which logs no reason (loops "
                                                  "it cannot merge, such as reductions over different dimensions)")
    raise WhatIfError(f"Inductor still declined this fusion with its score heuristics relaxed, so it is not a "
                      f"score decision: {reason}")


def _check_split(edit: SplitEdit, after: Compilation, outcome: Any = None) -> None:
    names = edit.unsplit_nodes | edit.split_nodes
    graph = after.graphs[edit.graph] if len(after.graphs) > edit.graph else None
    nodes = [n for n in graph.loop_ir if set(n.origins) & names] if graph is not None else []
    count = len(split_reductions(graph, nodes)) if graph is not None else 0
    if edit.unsplit_nodes and count != 1:
        raise WhatIfError(f"the recompile did not run {', '.join(sorted(names))} as one reduction")
    if edit.split_nodes and count < 2:
        raise WhatIfError(f"the recompile did not split {', '.join(sorted(names))}: its reduction is too small or "
                          "its size not static (a split leaves each partial at least 32 elements, and more partials "
                          "than Inductor unrolls)")


def _check_order(edit: OrderEdit, after: Compilation, outcome: node_order.Outcome) -> None:
    """``after`` must launch the first part's kernel before the second's."""
    groups = _groups_of_parts(edit, after)
    graph = after.graphs[edit.graph]
    order = launch_order(graph)
    first, second = ([order.index(k) for f in graph.fused if f.name in part for k in f.kernels if k in order]
                     for part in groups)
    if first and second and min(first) < min(second):
        return
    if outcome.blocked:
        why = f"Inductor's scheduler has a dependency the post-grad graph does not show: {'; '.join(outcome.blocked)}"
    elif not outcome.moved:
        why = "the scheduler pass did not find both kernels' nodes in the scheduled graph"
    else:
        why = ("a later pass of Inductor's scheduler (reorder_for_peak_memory, or the comm-overlap reorder) put them "
               "back in order")
    raise WhatIfError(f"the recompile did not run them in the order asked: {why}; launch order: {order}")


def _check_stored(edit: MaterializeEdit, after: Compilation, outcome: Stored) -> None:
    """Each value asked must have a buffer of its own in ``after``, and each cut of the loop kernels of its own."""
    graph = _edited_graph(edit, after)
    live = [n for n in graph.loop_ir if not n.eliminated]
    for name in sorted(edit.nodes):
        if not any(name in n.buffer_nodes.values() for n in live):
            why = outcome.kept.get(name) or ("the lowering never reached it" if name not in outcome.stored else
                                             "it was stored while lowering, then no scheduler node wrote it")
            raise WhatIfError(f"the recompile did not store {name}: {why}")
    kernels: dict[frozenset[str], set[str]] = {}
    for n in live:
        cut = edit.cut(node_key(n))
        if cut is not None:
            kernels.setdefault(cut, set()).update(n.kernels)
    cuts = list(kernels.items())
    for i, (first, first_kernels) in enumerate(cuts):
        for second, second_kernels in cuts[i + 1:]:
            if first_kernels & second_kernels:
                raise WhatIfError(f"Inductor put {', '.join(sorted(first)) or 'the rest of the loop'} and "
                                  f"{', '.join(sorted(second)) or 'the rest of the loop'} into one kernel anyway "
                                  f"({', '.join(sorted(first_kernels & second_kernels))}): it reached that fusion "
                                  "without asking Scheduler.can_fuse about the pair")


WAYS: dict[EditKind, EditWay] = {
    EditKind.UNFUSE: EditWay(lambda c, value, graph: unfuse_or_cut(c, value, graph, _views), _scheduled, _check_apart,
                             "unfuse=group or kernel"),
    EditKind.PREVENT: EditWay(prevent_edit, _scheduled, _check_apart, "prevent=(node_a, node_b)"),
    EditKind.FUSE: EditWay(fuse_edit, _scheduled, _check_together, "fuse=(kernel_a, kernel_b)"),
    EditKind.SPLIT: EditWay(split_edit, lambda edit: reduction_splits.splits_changed(edit.turn_split), _check_split,
                            "split=a reduction's node"),
    EditKind.ORDER: EditWay(order_edit, lambda edit: node_order.reordered(edit.pick, edit.same_kernel), _check_order,
                            "order=(kernel_a, kernel_b)"),
    EditKind.MATERIALIZE: EditWay(lambda c, value, graph: materialize_edit(c, value, graph, _views), _stored,
                                  _check_stored, "materialize=a node or nodes"),
}


def _the_edit(c: Compilation, edits: dict[str, Any], graph: int | str | None) -> FusionEdit:
    asked = {name: value for name, value in edits.items() if value is not None}
    if len(asked) != 1:
        ways = ", ".join(way.asks for way in WAYS.values())
        raise WhatIfError(f"what_if takes exactly one edit, got {sorted(asked) or 'none'}: {ways}")
    if c.export is not None:
        raise WhatIfError("what_if recompiles with torch.compile; this is an AOT compilation (explorer.export)")
    if c.live is None or c.live.example_inputs is None:
        raise WhatIfError(f"{c.function} was loaded from a file: what_if compiles the program again, which needs "
                          "the live function and inputs; compile it with explorer.compile(...)")
    (kind, value), = asked.items()
    return WAYS[EditKind(kind)].resolve(c, value, graph)


def _recompiled(c: Compilation, edit: FusionEdit) -> tuple[Compilation, Any]:
    """The program of ``c`` captured again as it was, with ``edit`` made by its patch, and what the patch did."""
    live = c.live
    assert live is not None
    config = {**c.inductor_overrides, **c.toggles}
    grad = torch.set_grad_enabled(live.grad_enabled) if live.grad_enabled is not None else contextlib.nullcontext()
    with grad, WAYS[edit.kind].patch(edit) as outcome:
        # cold: Inductor's cache keys do not see the edit, so a warm capture could serve the unedited graph
        after = capture(live.target, *(live.example_inputs or ()), config=config or None, backward=c.backward,
                        dynamic=True if c.symbols else False, kwargs=live.call_kwargs, cache=False)
    return after, outcome


@slots.what_if.fill
def what_if(c: Compilation, *, unfuse: Any = None, prevent: Any = None, fuse: Any = None, split: Any = None,
            order: Any = None, materialize: Any = None, graph: int | str | None = None, measure: bool = False) -> WhatIf:
    edit = _the_edit(c, {"unfuse": unfuse, "prevent": prevent, "fuse": fuse, "split": split, "order": order,
                         "materialize": materialize}, graph)
    after, outcome = _recompiled(c, edit)
    WAYS[edit.kind].check(edit, after, outcome)
    result = WhatIf(edit, c, after, diff(c, after), (side_of(c.graphs[edit.graph]), side_of(after.graphs[edit.graph])))
    return result.measure() if measure else result


def fusion_worth(c: Compilation, group: FusedGroup, measure: bool, runs: int,
                 baseline: Side | None = None) -> tuple[FusionWorth, Side | None]:
    """One fusion of ``c`` prevented in a compile of its own: its row, and the original's measured figures
    (``baseline``: those of an earlier trial, so the original is measured once). A refused edit, or a compile
    that failed, is a row with its reason: the report goes on."""
    try:
        result = what_if(c, unfuse=group, graph=group_graph(c, group))
    except (WhatIfError, CompileError) as error:
        return FusionWorth(group.name, list(group.origins), (1, 0), None, None, "", str(error)), baseline
    if measure:
        result.measure(runs=runs, before=baseline)
    fused, unfused = result.sides
    return FusionWorth(
        group.name, list(group.origins), result.kernel_counts(),
        unfused.bytes - fused.bytes if fused.bytes is not None and unfused.bytes is not None else None,
        unfused.total_ms - fused.total_ms if fused.total_ms is not None and unfused.total_ms is not None else None,
        result.verdict), (fused if measure else baseline)


def group_graph(c: Compilation, group: FusedGroup) -> int:
    return next(g.index for g in c.graphs if any(f is group for f in g.fused))


def fusions(c: Compilation, graph: int | str) -> list[FusedGroup]:
    """The fused groups of several nodes of one graph: what a fusion report prevents, one at a time."""
    return [f for f in c.graph(graph).fused if len(f.nodes) > 1]


def fusion_report_here(c: Compilation, graph: int | str = 0, measure: bool = True, runs: int = 10) -> FusionReport:
    """Every fusion of a graph prevented in turn, in this process, one after another."""
    g = c.graph(graph)
    rows: list[FusionWorth] = []
    baseline = None
    groups = fusions(c, graph)
    for done, group in enumerate(groups):
        progress.step("fusions", done, len(groups), group.name)
        row, baseline = fusion_worth(c, group, measure, runs, baseline)
        rows.append(row)
    progress.step("fusions", len(groups), len(groups))
    return FusionReport(c.function, g.id, sort_worth(rows), measure,
                        "one compile per fusion, in this process, one after another")
