"""Two compilations of the same code -> a ``Diff`` (compiler/model/diff.py), from their stages alone.

A kernel that is there again (the same name computing the same nodes) is paired with itself first.
The others are paired by the Dynamo FX nodes they compute, not by name: the FX graph is the same for
both compilations of one piece of code, while kernel names, counts and languages move with the
toggles. So an extern ``mm`` that a native-matmul compilation replaced by a Triton kernel with
``tl.dot`` (fused with its epilogue) shows up as one *changed* pair, not an unrelated removal and
addition. Kernels whose nodes went into a kernel that is already paired are reported as removed,
with ``now_in`` naming where their nodes went. A JIT compile and an AOT compile (``explorer.export``) of
the same model trace the same code into differently named FX nodes, and two torch releases may name
FX nodes, post-grad nodes and kernels differently or cut the program into other graphs: then graphs and
FX nodes are matched by the line they were traced at first (diff_lines.py), so kernels pair by the
user's lines whatever torch called them, and fused groups are compared by the FX nodes they compute.

``diff(a, b)`` (``compiler.diff``, ``explorer.diff``) is here, in the model, so that two saved traces
compare without importing torch; only when both compilations are live and hold their outputs does it
call the ``compare_outputs`` slot, which compiler/runs/diff.py fills with the element-wise comparison.
"""

from __future__ import annotations

import difflib
import re
from typing import Any

from . import diff_reports, slots
from .compilation import Compilation
from .diff import Diff, GraphDiff, KernelChange, MemoryChange, OutputComparison, StageCount
from .diff_lines import fx_renames, pair_graphs, same_layout
from .stages import FusedGroup, GraphCapture, Kernel

COUNTED_STAGES = ("fx", "post_grad", "loop_ir", "fused", "kernels")


def label(c: Compilation) -> str:
    toggles = ", ".join(f"{k}={v}" for k, v in sorted(c.toggles.items()))
    return f"{c.function}[{toggles or 'defaults'}]" + (" (AOT)" if c.export is not None else "")


def _nodes(k: Kernel, rename: dict[str, str] | None = None) -> list[str]:
    names = list(k.fx_nodes or k.post_grad_nodes or [k.name])
    return [rename.get(n, n) for n in names] if rename and k.fx_nodes else names


def _user_lines(*kernels: Kernel) -> list[tuple[str, int]]:
    """The lines of the user's code the kernels compute: library frames aside, as their line numbers move
    between torch releases."""
    return sorted({(file, line) for k in kernels for file, line in k.user_lines
                   if k.graph is None or file not in k.graph.library_files})


def _normalized(k: Kernel) -> str:
    return re.sub(rf"\b{re.escape(k.name)}\b", "KERNEL", k.source) if k.name else k.source


def _source_diff(a: Kernel | None, b: Kernel | None) -> str:
    before = _normalized(a).splitlines() if a else []
    after = _normalized(b).splitlines() if b else []
    if before == after:
        return ""
    return "\n".join(difflib.unified_diff(before, after, a.id if a else "(none)", b.id if b else "(none)", lineterm=""))


def _pair_kernels(a: list[Kernel], b: list[Kernel], rename: dict[str, str] | None = None) -> list[KernelChange]:
    """``rename``: ``b``'s FX node names as ``a`` names them (matched by line: diff_lines.py), else None."""
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
                                        sorted(sets_a[i] | sets_b[pair_of_a[i]]), text, lines=_user_lines(ka, kb)))
        else:
            holders = [b[j].id for j, sb in enumerate(sets_b) if sets_a[i] & sb]
            changes.append(KernelChange("removed", ka.id, None, ka.language, None, sorted(sets_a[i]),
                                        _source_diff(ka, None), holders, lines=_user_lines(ka)))
    for j, kb in enumerate(b):
        if j not in used_b:
            changes.append(KernelChange("added", None, kb.id, None, kb.language, sorted(sets_b[j]), _source_diff(None, kb),
                                        lines=_user_lines(kb)))
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


def _group_key(g: GraphCapture, group: FusedGroup, rename: dict[str, str] | None) -> tuple[str, ...]:
    """A fused group as its post-grad origins, or, where FX nodes are matched by line (``rename``), as the FX
    nodes those come from: post-grad names are torch's own and need not match across the two sides."""
    origins = group.origins or group.nodes
    if rename is None:
        return tuple(sorted(origins))
    fx_of = {n.name: n.fx for n in g.post_grad.nodes}
    return tuple(sorted({rename.get(f, f) for o in origins for f in fx_of.get(o) or [o]}))


def _graph_diff(a: GraphCapture | None, b: GraphCapture | None, by_line: str | None = None) -> GraphDiff:
    """``by_line``: how to match FX nodes across the sides, by ``innermost`` frame (one side is an exported
    program) or by ``user`` line (two torch releases, or graphs paired by line); None: by name."""
    ref = b or a
    assert ref is not None
    counts = [StageCount(s, _count(a, s) if a else 0, _count(b, s) if b else 0) for s in COUNTED_STAGES]
    rename = fx_renames(a, b, innermost=by_line == "innermost") if by_line and a and b else None
    # a's FX names are the ones b's are renamed to: a's groups map to FX nodes with no renaming ({})
    groups_a = {_group_key(a, f, None if rename is None else {}) for f in (a.fused if a else [])}
    groups_b = {_group_key(b, f, rename) for f in (b.fused if b else [])}
    return GraphDiff(
        graph=ref.id, kind=ref.kind, counts=counts,
        fused_only_a=[list(t) for t in sorted(groups_a - groups_b)],
        fused_only_b=[list(t) for t in sorted(groups_b - groups_a)],
        kernels=_pair_kernels(a.kernels if a else [], b.kernels if b else [], rename),
        memory=_memory_change(a, b),
        graph_a=a.id if a else None, graph_b=b.id if b else None,
    )


def _memory_change(a: GraphCapture | None, b: GraphCapture | None) -> MemoryChange | None:
    ma, mb = (a.memory if a else None), (b.memory if b else None)
    if ma is None and mb is None:
        return None
    return MemoryChange(ma.peak_bytes if ma else None, mb.peak_bytes if mb else None,
                        len(ma.reuse_marks) if ma else None, len(mb.reuse_marks) if mb else None)


def diff_of(a: Compilation, b: Compilation, outputs: OutputComparison) -> Diff:
    """What changed from ``a`` to ``b`` (toggles, stages, kernels, compile times), given how their outputs
    compare."""
    names = sorted(set(a.toggles) | set(b.toggles))
    toggles = {n: (a.toggles.get(n), b.toggles.get(n)) for n in names if a.toggles.get(n) != b.toggles.get(n)}
    if (a.export is None) != (b.export is None):
        by_line: str | None = "innermost"
    elif a.torch != b.torch or not same_layout(a.graphs, b.graphs):
        by_line = "user"
    else:
        by_line = None
    graphs = [_graph_diff(ga, gb, by_line) for ga, gb in pair_graphs(a.graphs, b.graphs)]
    diff_reports.attach(graphs, a, b)
    stages = [k for k in a.timings if k in b.timings] + [k for k in b.timings if k not in a.timings]
    timings = {k: (a.timings.get(k), b.timings.get(k)) for k in stages}
    return Diff(label(a), label(b), toggles, graphs, timings, outputs, torch=(a.torch, b.torch),
                run_ms=(diff_reports.run_ms(a), diff_reports.run_ms(b)), _b=b)


def diff(a: Compilation, b: Compilation) -> Diff:
    """What changed from ``a`` to ``b`` (toggles, stages, kernels, compile times, outputs)."""
    for name, c in (("a", a), ("b", b)):
        if not isinstance(c, Compilation):
            raise TypeError(f"explorer.diff compares two Compilations; {name} is a {type(c).__name__}")
    if a.outputs is None or b.outputs is None:
        outputs = OutputComparison(False, "a compilation loaded from a file has no outputs")
    else:
        outputs = slots.compare_outputs(a.outputs, b.outputs)
    return diff_of(a, b, outputs)
