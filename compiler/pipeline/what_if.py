"""``c.what_if(...)`` and ``c.fusion_report()``: the same program compiled again with one fusion decision changed.

The edit is resolved against the captured stages first (compiler/model/what_if.py: unknown names and edits the
scheduler cannot make are refused there, before anything compiles). Then the compilation's own function,
inputs, keyword arguments and settings (toggles and the Inductor overrides it was captured under, its grad
mode, backward and dynamic shapes) are captured again, by ``capture`` as ``explorer.compile`` would, with the
scheduler's ``can_fuse`` answering the edited pairs (compiler/_torch/fusion_edits.py, restored on exit).
What compiled is checked: the edit must show in the new fused groups, or the result is refused with what
Inductor said. The original compilation is never changed (a measure() keeps its reports on the WhatIf).

The fusion report runs one such compile per fused group of a graph (``fusion_worth``); here in this process,
one after another (``fusion_report_here``), or in sweep workers (compiler/sweeps/fusion_report.py, which
fills ``c.fusion_report()`` and calls back here for each trial).
"""

from __future__ import annotations

import contextlib
from typing import Any

import torch

from .._torch import fusion_edits, node_order, reduction_splits
from ..model import progress, slots
from ..model.compilation import Compilation
from ..model.diff_pairing import diff
from ..model.errors import CompileError
from ..model.stages import FusedGroup
from ..model.what_if import (FusionEdit, FusionReport, FusionWorth, Side, WhatIf, WhatIfError, fuse_edit, node_key,
                             prevent_edit, side_of, sort_worth, split_edit, split_reductions, unfuse_edit)
from ..model.what_if_order import launch_order, order_edit
from .capture import capture

_EDITS = {"unfuse": unfuse_edit, "prevent": prevent_edit, "fuse": fuse_edit, "split": split_edit, "order": order_edit}
_ASK = ("unfuse=group or kernel, prevent=(node_a, node_b), fuse=(kernel_a, kernel_b), split=a reduction's node or "
        "order=(kernel_a, kernel_b)")


def _the_edit(c: Compilation, edits: dict[str, Any], graph: int | str | None) -> FusionEdit:
    asked = {name: value for name, value in edits.items() if value is not None}
    if len(asked) != 1:
        raise WhatIfError(f"what_if takes exactly one edit, got {sorted(asked) or 'none'}: {_ASK}")
    if c.export is not None:
        raise WhatIfError("what_if recompiles with torch.compile; this is an AOT compilation (explorer.export)")
    if c.live is None or c.live.example_inputs is None:
        raise WhatIfError(f"{c.function} was loaded from a file: what_if compiles the program again, which needs "
                          "the live function and inputs; compile it with explorer.compile(...)")
    (kind, value), = asked.items()
    return _EDITS[kind](c, value, graph)


def _edited(edit: FusionEdit) -> Any:
    """The block that makes ``edit`` in the compiles inside it (its value: what the order pass did, or None)."""
    if edit.kind == "split":
        return reduction_splits.splits_changed(edit.turn_split)
    if edit.kind == "order":
        return node_order.reordered(edit.pick, edit.same_kernel)
    return fusion_edits.fusion_decided(edit.decide, offers=edit.kind == "fuse", ends_kernel=edit.ends_kernel)


def _recompiled(c: Compilation, edit: FusionEdit) -> tuple[Compilation, Any]:
    """The program of ``c`` captured again as it was, with ``edit`` made by the scheduler, and what the
    edit's block reported."""
    live = c.live
    assert live is not None
    config = {**c.inductor_overrides, **c.toggles}
    grad = torch.set_grad_enabled(live.grad_enabled) if live.grad_enabled is not None else contextlib.nullcontext()
    with grad, _edited(edit) as outcome:
        # cold: Inductor's cache keys do not see the edit, so a warm capture could serve the unedited graph
        after = capture(live.target, *(live.example_inputs or ()), config=config or None, backward=c.backward,
                        dynamic=True if c.symbols else False, kwargs=live.call_kwargs, cache=False)
    return after, outcome


def _groups_of_parts(edit: FusionEdit, after: Compilation) -> list[set[str]]:
    if len(after.graphs) <= edit.graph:
        raise WhatIfError(f"the recompile made {len(after.graphs)} graphs, not the graph g{edit.graph} edited")
    graph = after.graphs[edit.graph]
    groups = [{n.group or n.name for n in graph.loop_ir if not n.eliminated and node_key(n) in keys} for keys in edit.keys]
    missing = [" ".join(part) for part, found in zip(edit.parts, groups) if not found]
    if missing:
        raise WhatIfError(f"the recompile has no scheduler node for {missing}: the program did not compile to the "
                          "same nodes again")
    return groups


def _check_split(edit: FusionEdit, after: Compilation) -> None:
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


def _check_order(edit: FusionEdit, after: Compilation, outcome: node_order.Outcome) -> None:
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


def _check(edit: FusionEdit, after: Compilation, outcome: Any = None) -> None:
    """The edit must show in ``after``'s fused groups (a split: in its reduction nodes; an order: in its
    wrapper's launches)."""
    if edit.kind == "split":
        return _check_split(edit, after)
    if edit.kind == "order":
        return _check_order(edit, after, outcome)
    groups = _groups_of_parts(edit, after)
    graph = after.graphs[edit.graph]
    if edit.kind == "fuse":
        together = set.intersection(*groups)
        if not together:
            apart = [nf.reason for nf in graph.not_fused
                     if any(set(nf.node1.split("_")) & g for g in groups) and any(set(nf.node2.split("_")) & g for g in groups)]
            reason = "; ".join(dict.fromkeys(apart)) or ("its code generator's own check, which logs no reason (loops "
                                                          "it cannot merge, such as reductions over different dimensions)")
            raise WhatIfError(f"Inductor still declined this fusion with its score heuristics relaxed, so it is not a "
                              f"score decision: {reason}")
        return
    for i, first in enumerate(groups):
        for second in groups[i + 1:]:
            if first & second:
                raise WhatIfError(f"Inductor fused {sorted(first & second)} anyway: it reached that fusion without asking "
                                  "Scheduler.can_fuse about the pair, so this edit cannot be made on the installed torch")


@slots.what_if.fill
def what_if(c: Compilation, *, unfuse: Any = None, prevent: Any = None, fuse: Any = None, split: Any = None,
            order: Any = None, graph: int | str | None = None, measure: bool = False) -> WhatIf:
    edit = _the_edit(c, {"unfuse": unfuse, "prevent": prevent, "fuse": fuse, "split": split, "order": order}, graph)
    after, outcome = _recompiled(c, edit)
    _check(edit, after, outcome)
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
