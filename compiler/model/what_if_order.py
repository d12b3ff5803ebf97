"""``c.what_if(order=(a, b))``: kernel ``a`` launched before kernel ``b``, resolved against the captured stages.

``a`` and ``b`` are named as the explorer shows them: kernels (objects, ids or names), fused groups, or nodes
(FX, post-grad or loop-IR names), each standing for the kernel that computes it. The order asked must be
possible: ``a`` may not need, directly or through other kernels, a value ``b`` computes. That is read from
the post-grad graph (each kernel's nodes and their inputs, through nodes no kernel computes such as views),
so an impossible order is refused before anything compiles, with the value that binds them and the kernels
that could be asked instead. The edit names each kernel's scheduler nodes by their post-grad origins (as
every what_if edit does, compiler/model/what_if.py); the compile side is compiler/_torch/node_order.py.
"""

from __future__ import annotations

from typing import Any

from .formatting import did_you_mean
from .stages import FusedGroup, FxNode, GraphCapture, Kernel, LoopIRNode
from .what_if import WhatIfError, graph_node_names, node_key, resolve_node, searched_graphs
from .what_if_edits import OrderEdit


def launch_order(g: GraphCapture) -> list[str]:
    """The graph's kernel ids in the order the wrapper launches them (first launch of each; a kernel's lines
    also include where the wrapper defines it, ``name = async_compile...``, which launches nothing)."""
    lines = g.wrapper.kernel_lines if g.wrapper is not None else {}
    source = g.wrapper.source.splitlines() if g.wrapper is not None else []
    calls = [(line, kernel) for line, kernel in sorted(lines.items())
             if 0 < line <= len(source) and "async_compile" not in source[line - 1]]
    launched = list(dict.fromkeys(kernel for _, kernel in calls))
    return launched + [k.id for k in g.kernels if k.id not in launched]


def _kernel_named(g: GraphCapture, target: Any) -> Kernel | None:
    if isinstance(target, Kernel):
        return next((k for k in g.kernels if k is target or k.id == target.id), None)
    if isinstance(target, FusedGroup):
        target = target.name
    if not isinstance(target, str):
        return None
    kernel = next((k for k in g.kernels if target in (k.id, k.name)), None)
    group = next((f for f in g.fused if f.name == target), None)
    if kernel is None and group is not None and group.kernels:
        kernel = next((k for k in g.kernels if k.id == group.kernels[0]), None)
    return kernel


def resolve_kernel(c: Any, target: Any, graph: int | str | None = None) -> tuple[GraphCapture, Kernel]:
    """The kernel a user names: a kernel, a fused group, or a node (the kernel computing it)."""
    graphs = searched_graphs(c, graph)
    for g in graphs:
        kernel = _kernel_named(g, target) if not isinstance(target, (FxNode, LoopIRNode)) else None
        if kernel is not None:
            return g, kernel
    if isinstance(target, (str, FxNode, LoopIRNode)):
        try:
            g, nodes = resolve_node(c, target, graph)
        except WhatIfError:
            pass
        else:
            groups = {n.group or n.name for n in nodes}
            kernel = next((k for k in g.kernels if k.group in groups or set(k.loop_ir) & {n.name for n in nodes}), None)
            if kernel is not None:
                return g, kernel
    choices = [k.id for g in graphs for k in g.kernels]
    name = getattr(target, "name", target)
    raise WhatIfError(f"no kernel, fused group or node {name!r}{did_you_mean(str(name), choices)}; kernels in launch "
                      f"order: {[k for g in graphs for k in launch_order(g)]}")


def kernel_inputs(g: GraphCapture) -> dict[str, dict[str, str]]:
    """Kernel id -> {kernel it reads from: the post-grad value it reads}, through nodes no kernel computes."""
    nodes = {n.name: n for n in g.post_grad.nodes}
    owner = {n: k.id for k in g.kernels for n in k.post_grad_nodes}
    needs: dict[str, dict[str, str]] = {}
    for k in g.kernels:
        found: dict[str, str] = {}
        seen: set[str] = set()
        todo = [i for n in k.post_grad_nodes if n in nodes for i in nodes[n].inputs]
        while todo:
            value = todo.pop()
            if value in seen or value not in nodes:
                continue
            seen.add(value)
            if value in owner:
                if owner[value] != k.id:
                    found.setdefault(owner[value], value)
            else:
                todo.extend(nodes[value].inputs)
        needs[k.id] = found
    return needs


def dependency_path(needs: dict[str, dict[str, str]], start: str, goal: str) -> list[tuple[str, str, str]] | None:
    """The chain (kernel, value it reads, kernel that computes it) by which ``start`` needs ``goal``, if any."""
    came: dict[str, tuple[str, str]] = {}
    todo = [start]
    while todo:
        kernel = todo.pop(0)
        for source, value in needs.get(kernel, {}).items():
            if source in came or source == start:
                continue
            came[source] = (kernel, value)
            if source == goal:
                path = []
                while source != start:
                    reader, read = came[source]
                    path.append((reader, read, source))
                    source = reader
                return path[::-1]
            todo.append(source)
    return None


def _fx_name(g: GraphCapture, value: str) -> str:
    node = next((n for n in g.post_grad.nodes if n.name == value), None)
    fx = [n for n in node.fx if n != value] if node is not None else []
    return f"{value} ({', '.join(fx)})" if fx else value


def _scheduled(g: GraphCapture, kernel: Kernel) -> list[LoopIRNode]:
    """The loop-IR (scheduler) nodes a kernel computes."""
    return [n for n in g.loop_ir if not n.eliminated and n.name in kernel.loop_ir]


def order_edit(c: Any, pair: Any, graph: int | str | None = None) -> OrderEdit:
    if not isinstance(pair, (tuple, list)) or len(pair) != 2:
        raise WhatIfError(f"order= takes a pair (a, b): run a's kernel before b's, got {pair!r}")
    g, first = resolve_kernel(c, pair[0], graph)
    _, second = resolve_kernel(c, pair[1], g.index)
    order = launch_order(g)
    if first.id == second.id:
        raise WhatIfError(f"{pair[0]} and {pair[1]} are computed by one kernel ({first.id}): there is no order of "
                          f"kernels between them; kernels in launch order: {order}")
    needs = kernel_inputs(g)
    can_precede = [k for k in order[order.index(second.id) + 1:] if dependency_path(needs, k, second.id) is None]
    if order.index(first.id) < order.index(second.id):
        raise WhatIfError(f"{first.id} already runs before {second.id} (launch order: {order}); kernels that could "
                          f"be moved before {second.id}: {can_precede or 'none'}")
    path = dependency_path(needs, first.id, second.id)
    if path is not None:
        chain = ", which ".join(f"needs {_fx_name(g, value)} from {source}" for _, value, source in path)
        raise WhatIfError(f"{first.id} cannot run before {second.id}: {first.id} {chain}. Kernels that could be "
                          f"moved before {second.id}: {can_precede or 'none'}")
    parts = [_scheduled(g, k) for k in (first, second)]
    if not all(parts):
        raise WhatIfError(f"the capture recorded no scheduler node for {first.id if not parts[0] else second.id}, so "
                          "the scheduler cannot be told where it is")
    kernels = tuple(frozenset(node_key(n) for n in _scheduled(g, k)) for k in g.kernels)
    return OrderEdit(g.index, tuple(tuple(n.name for n in part) for part in parts),
                     tuple(frozenset(node_key(n) for n in part) for part in parts), graph_node_names(g),
                     f"running {first.id} before {second.id}", kernel_keys=kernels)
