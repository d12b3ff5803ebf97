"""``c.what_if(...)`` and ``c.fusion_report()``: the same program compiled again with one fusion decision changed.

The edit is resolved against the captured stages first (compiler/model/what_if.py: unknown names and edits the
scheduler cannot make are refused there, before anything compiles). Then the compilation's own function,
inputs, keyword arguments and settings (toggles and the Inductor overrides it was captured under, its grad
mode, backward and dynamic shapes) are captured again, by ``capture`` as ``explorer.compile`` would, with the
scheduler's ``can_fuse`` answering the edited pairs (compiler/_torch/fusion_edits.py, restored on exit).
What compiled is checked: the edit must show in the new fused groups, or the result is refused with what
Inductor said. The original compilation is never changed (a measure() keeps its reports on the WhatIf).

The fusion report runs one such compile per fused group of a graph, in this process, one after another
(not yet in sweep workers).
"""

from __future__ import annotations

import contextlib
from typing import Any

import torch

from .._torch import fusion_edits, reduction_splits
from ..model import slots
from ..model.compilation import Compilation
from ..model.diff_pairing import diff
from ..model.what_if import (FusionEdit, FusionReport, FusionWorth, WhatIf, WhatIfError, fuse_edit, node_key,
                             prevent_edit, side_of, sort_worth, split_edit, split_reductions, unfuse_edit)
from .capture import capture

_EDITS = {"unfuse": unfuse_edit, "prevent": prevent_edit, "fuse": fuse_edit, "split": split_edit}
_NOT_YET = {"order": "the order of kernels"}


def _the_edit(c: Compilation, edits: dict[str, Any], graph: int | str | None) -> FusionEdit:
    asked = {name: value for name, value in edits.items() if value is not None}
    for name, what in _NOT_YET.items():
        if name in asked:
            raise WhatIfError(f"what_if({name}=...) ({what}) is not supported yet; supported: unfuse=group or kernel, "
                              "prevent=(node_a, node_b), fuse=(kernel_a, kernel_b), split=a split reduction's node")
    if len(asked) != 1:
        raise WhatIfError(f"what_if takes exactly one edit, got {sorted(asked) or 'none'}: unfuse=group or kernel, "
                          "prevent=(node_a, node_b), fuse=(kernel_a, kernel_b) or split=a split reduction's node")
    if c.export is not None:
        raise WhatIfError("what_if recompiles with torch.compile; this is an AOT compilation (explorer.export)")
    if c.live is None or c.live.example_inputs is None:
        raise WhatIfError(f"{c.function} was loaded from a file: what_if compiles the program again, which needs "
                          "the live function and inputs; compile it with explorer.compile(...)")
    (kind, value), = asked.items()
    return _EDITS[kind](c, value, graph)


def _recompiled(c: Compilation, edit: FusionEdit) -> Compilation:
    """The program of ``c`` captured again as it was, with ``edit`` made by the scheduler."""
    live = c.live
    assert live is not None
    config = {**c.inductor_overrides, **c.toggles}
    grad = torch.set_grad_enabled(live.grad_enabled) if live.grad_enabled is not None else contextlib.nullcontext()
    edited = (reduction_splits.splits_off(edit.unsplit) if edit.kind == "split" else
              fusion_edits.fusion_decided(edit.decide, offers=edit.kind == "fuse", ends_kernel=edit.ends_kernel))
    with grad, edited:
        return capture(live.target, *(live.example_inputs or ()), config=config or None, backward=c.backward,
                       dynamic=True if c.symbols else False, kwargs=live.call_kwargs)


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


def _check(edit: FusionEdit, after: Compilation) -> None:
    """The edit must show in ``after``'s fused groups (a split: in its reduction nodes)."""
    if edit.kind == "split":
        graph = after.graphs[edit.graph] if len(after.graphs) > edit.graph else None
        nodes = [n for n in graph.loop_ir if set(n.origins) & edit.unsplit_nodes] if graph is not None else []
        if graph is None or len(split_reductions(graph, nodes)) != 1:
            raise WhatIfError(f"the recompile did not run {', '.join(sorted(edit.unsplit_nodes))} as one reduction")
        return
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
    after = _recompiled(c, edit)
    _check(edit, after)
    result = WhatIf(edit, c, after, diff(c, after), (side_of(c.graphs[edit.graph]), side_of(after.graphs[edit.graph])))
    return result.measure() if measure else result


@slots.fusion_report.fill
def fusion_report(c: Compilation, graph: int | str = 0, measure: bool = True, runs: int = 10) -> FusionReport:
    g = c.graph(graph)
    fusions = [f for f in g.fused if len(f.nodes) > 1]
    rows: list[FusionWorth] = []
    baseline = None
    for group in fusions:
        try:
            result = what_if(c, unfuse=group, graph=g.index)
        except WhatIfError as error:
            rows.append(FusionWorth(group.name, list(group.origins), (1, 0), None, None, "", str(error)))
            continue
        if measure:
            result.measure(runs=runs, before=baseline)
            baseline = result.sides[0]
        fused, unfused = result.sides
        rows.append(FusionWorth(
            group.name, list(group.origins), result.kernel_counts(),
            unfused.bytes - fused.bytes if fused.bytes is not None and unfused.bytes is not None else None,
            unfused.total_ms - fused.total_ms if fused.total_ms is not None and unfused.total_ms is not None else None,
            result.verdict))
    return FusionReport(c.function, g.id, sort_worth(rows), measure,
                        "one compile per fusion, in this process, one after another")
