"""What a setting changes in a compiled program: which kernels, which of their nodes, which of the user's lines.

``explorer.bisect`` finds a setting that makes the program match eager: the config change torch's bisector
blamed (``fallback_random=True``), or the pass it blamed turned off (``disabled_passes``). To say where that
setting acts, the program is captured with it and without (compiler/sweeps/bisect.py) and the two
compilations are compared as ``explorer.diff`` compares them: kernels paired by the nodes they compute
(diff_pairing.py). Of each kernel whose code changes, the nodes the setting changes are

- the Dynamo FX nodes it lowers differently: the post-grad ops made from them are other ops
  (``fallback_random`` turns ``rand_like``'s ``inductor_random`` into a call of ``aten.rand_like``); where
  some FX node of the program is lowered differently, only the kernels computing one are named;
- else the FX nodes of the post-grad nodes on the kernel's lines that changed (``emulate_precision_casts``
  adds rounding casts to the lines computing ``mul`` and ``sub``: the post-grad graph is the same);
- else every FX node the kernel computes.

Their lines are the user's lines the setting changes. A changed kernel that computes no node of the
program (a seed generator Inductor adds for its random ops) is said in a note, not named. Plain data over
two compilations: nothing here runs the program.
"""

from __future__ import annotations

import difflib
import re
from typing import Any, Mapping

from .bisect import ChangedKernel, SettingCulprit
from .compilation import Compilation
from .diff import OutputComparison
from .diff_pairing import diff_of
from .stages import GraphCapture, Kernel

LOWERED = "lowered differently"  # how a kernel's nodes changed: other post-grad ops made from them
GENERATED = "generated differently"  # the same ops, other code on their lines
CHANGED = "its code changed"  # no line of the change maps to a node: every node of the kernel


def _ops(graph: GraphCapture, fx_name: str) -> list[str]:
    """The post-grad ops made from one FX node, as a sorted list of targets (names differ between captures)."""
    fx = next((n for n in graph.fx.nodes if n.name == fx_name), None)
    if fx is None:
        return []
    targets = {n.name: n.target for n in graph.post_grad.nodes}
    return sorted(targets.get(name, name) for name in fx.post_grad)


def lowered_differently(before: GraphCapture, after: GraphCapture | None) -> set[str]:
    """FX nodes of ``before`` (by name, which a setting does not change) whose post-grad ops differ in
    ``after``; none when ``after`` is missing or traced other FX nodes."""
    if after is None:
        return set()
    names_after = {n.name for n in after.fx.nodes}
    return {n.name for n in before.fx.nodes if n.op == "call_function" and n.name in names_after
            and _ops(before, n.name) != _ops(after, n.name)}


def _normalized_lines(kernel: Kernel) -> list[str]:
    text = re.sub(rf"\b{re.escape(kernel.name)}\b", "KERNEL", kernel.source) if kernel.name else kernel.source
    return text.splitlines()


def changed_lines(before: Kernel, after: Kernel | None) -> list[int]:
    """Lines of ``before``'s source (1-based) that ``after`` does not have as they are: replaced or removed."""
    lines = _normalized_lines(before)
    if after is None:
        return list(range(1, len(lines) + 1))
    matcher = difflib.SequenceMatcher(a=lines, b=_normalized_lines(after), autojunk=False)
    return [i + 1 for tag, i1, i2, _, _ in matcher.get_opcodes() if tag in ("replace", "delete") for i in range(i1, i2)]


def _nodes_of(kernel: Kernel, after: Kernel | None, graph: GraphCapture, lowered: set[str]) -> tuple[list[str], str]:
    """The FX nodes of ``kernel`` the setting changes, and how (LOWERED, GENERATED or CHANGED)."""
    mine = set(kernel.fx_nodes)
    if mine & lowered:
        return sorted(mine & lowered), LOWERED
    fx_of = {n.name: n.fx for n in graph.post_grad.nodes}
    on_lines = {pg for line in changed_lines(kernel, after) for pg in kernel.line_nodes.get(line, [])}
    from_lines = {fx for pg in on_lines for fx in fx_of.get(pg, [])}
    if from_lines:
        return sorted(from_lines), GENERATED
    return sorted(mine), CHANGED


def _user_lines(graph: GraphCapture, fx_nodes: list[str]) -> list[tuple[str, int]]:
    """The user's lines of ``fx_nodes``: library frames aside (torch's own files)."""
    lines = {n.user_line for n in graph.fx.nodes if n.name in set(fx_nodes) and n.user_line}
    return sorted((str(file), int(line)) for file, line in lines if file not in graph.library_files)


def setting_changes(before: Compilation, after: Compilation, settings: Mapping[str, Any]) -> SettingCulprit:
    """What ``settings`` change from ``before`` (the program as configured) to ``after`` (captured with them)."""
    label = ", ".join(f"{k}={v!r}" for k, v in settings.items())
    diff = diff_of(before, after, OutputComparison(False, "not compared: only the code is"))
    found: list[tuple[ChangedKernel, bool]] = []
    elsewhere: list[str] = []
    for graph_diff in diff.graphs:
        if graph_diff.graph_a is None:
            continue
        graph = before.graph(graph_diff.graph_a)
        other = after.graph(graph_diff.graph_b) if graph_diff.graph_b else None
        lowered = lowered_differently(graph, other)
        kernels_after = {k.id: k for k in other.kernels} if other is not None else {}
        for change in graph_diff.kernels:
            if change.status == "same" or change.a is None:
                continue
            kernel = graph.kernel(change.a)
            paired = kernels_after.get(change.b) if change.b else None
            fx_nodes, how = _nodes_of(kernel, paired, graph, lowered)
            if not fx_nodes:
                elsewhere.append(f"{graph.id}/{kernel.id}")
                continue
            holders = [k.id for k in kernels_after.values() if set(k.fx_nodes) & set(fx_nodes)] if other else []
            post_grad = sorted({pg for fx in graph.fx.nodes if fx.name in set(fx_nodes) for pg in fx.post_grad}
                               & set(kernel.post_grad_nodes)) if how == LOWERED else sorted(
                {pg for line in changed_lines(kernel, paired) for pg in kernel.line_nodes.get(line, [])})
            changed = ChangedKernel(graph.id, kernel.id, holders or ([change.b] if change.b else []), fx_nodes,
                                    post_grad, _user_lines(graph, fx_nodes), how)
            found.append((changed, how == LOWERED))
    if any(lowered for _, lowered in found):  # where ops changed, kernels that only moved along are not named
        found = [(changed, lowered) for changed, lowered in found if lowered]
    notes = []
    if elsewhere:
        notes.append(f"with {label} these kernels change too but compute no node of the program: "
                     + ", ".join(elsewhere))
    if not found:
        notes.append(f"no kernel that computes a node of the program changes its code with {label}: the setting "
                     "acts outside the generated kernels (the wrapper, the runtime)")
    return SettingCulprit(dict(settings), [changed for changed, _ in found], notes)
