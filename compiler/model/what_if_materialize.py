"""``c.what_if(materialize=node)``, and ``unfuse=`` of a kernel Inductor inlined into one loop: values stored.

Three lines ``a = x.sin(); b = a * 2 + 1; return b.cos()`` are one kernel, yet no fusion made it: Inductor
inlined ``a`` and ``b`` into the loop computing ``cos`` while lowering, so the scheduler saw one node and
``unfuse`` finds nothing to undo. Storing a value in a buffer of its own cuts that loop: ``materialize="a"``
makes ``sin`` one kernel and ``mul, add, cos`` another, and ``unfuse=`` of such a kernel stores the value each
of the user's lines passes to the next (one kernel per line).

A value that can be stored is one some pointwise or reduction node of the loop IR computes inline: a post-grad
node among its origins that no node writes to a buffer. The user names it as an FX node (``"a"``: the value it
hands on), a post-grad node (``"sin"``) or such a node object, or several in a list. A placeholder, a value
stored already (each extern call's, each loop's own), a view (``views``: it names its input's memory at other
indices and computes nothing) and a node no kernel computes are refused before anything compiles, with the
values that can be stored. The edit (``MaterializeEdit``, compiler/model/what_if_edits.py) is made by
compiler/_torch/materialize.py and fusion_edits.py and checked by compiler/pipeline/what_if.py.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

from .formatting import did_you_mean
from .stages import FusedGroup, FxNode, GraphCapture, Kernel, LoopIRNode
from .what_if import (WhatIfError, graph_node_names, node_key, resolve_group, searched_graphs, unfuse_edit)
from .what_if_edits import FusionEdit, MaterializeEdit

Views = Callable[[GraphCapture], frozenset[str]]  # a graph -> its post-grad nodes that are views

_STORABLE_KINDS = ("pointwise", "reduction")  # loop-IR nodes whose inlined values can be stored one by one


def _no_views(g: GraphCapture) -> frozenset[str]:
    return frozenset()


def inlined_values(g: GraphCapture, views: frozenset[str] = frozenset()) -> dict[str, list[LoopIRNode]]:
    """Post-grad node -> the pointwise or reduction nodes computing it inline, for every value of ``g`` that
    some loop computes without a buffer of its own (views left out): what materialize= can store."""
    live = [n for n in g.loop_ir if not n.eliminated]
    stored = {node for n in live for node in n.buffer_nodes.values()}
    out: dict[str, list[LoopIRNode]] = {}
    for n in live:
        if n.kind in _STORABLE_KINDS:
            for origin in n.origins:
                if origin not in stored and origin not in views:
                    out.setdefault(origin, []).append(n)
    order = [n.name for n in g.post_grad.nodes]
    return {name: out[name] for name in order if name in out}


def _shown(g: GraphCapture, name: str) -> str:
    """A post-grad node as the user knows it: ``sin (a)``, with the FX nodes it came from when named otherwise."""
    node = next((n for n in g.post_grad.nodes if n.name == name), None)
    fx = [f for f in (node.fx if node is not None else []) if f != name]
    return f"{name} ({', '.join(fx)})" if fx else name


def _choices(g: GraphCapture, views: frozenset[str]) -> str:
    found = [_shown(g, name) for name in inlined_values(g, views)]
    return f"values a kernel computes inline, which materialize= can store: {found or 'none'}"


def _why_not(g: GraphCapture, name: str, views: frozenset[str]) -> str:
    """Why post-grad node ``name`` of ``g`` cannot be stored, with the values that can."""
    node = next(n for n in g.post_grad.nodes if n.name == name)
    shown = _shown(g, name)
    writers = [(n, buf) for n in g.loop_ir if not n.eliminated for buf, held in n.buffer_nodes.items() if held == name]
    if node.op == "placeholder":
        why = f"{shown} is an input of the graph: it is in memory already"
    elif node.op == "get_attr":
        why = f"{shown} is a parameter or constant of the graph: it is in memory already"
    elif node.op == "output":
        why = "the graph's output is no value of its own"
    elif name in views:
        storable = [_shown(g, i) for i in node.inputs if i in inlined_values(g, views)]
        why = (f"{shown} is a view ({node.target}): its users read {', '.join(node.inputs) or 'its input'} at other "
               f"indices, it computes nothing to store; store {' or '.join(storable) or 'the value it views'} instead")
    elif writers:
        loop, buf = writers[0]
        by = f"an extern call ({loop.extern_target or loop.name})" if loop.kind == "extern" else loop.name
        why = f"{shown} is stored already: {by} writes it to {buf} ({', '.join(loop.kernels) or 'no kernel'})"
    elif not node.loop_ir:
        why = f"{shown} is computed by no kernel (Inductor lowered it as a view of its input, or folded it away)"
    else:
        kinds = sorted({n.kind for n in g.loop_ir if n.name in node.loop_ir})
        why = f"{shown} is computed inside a {'/'.join(kinds)} node, whose values Inductor stores only as a whole"
    return f"{why}; {_choices(g, views)}"


def _values_of(g: GraphCapture, target: Any) -> list[str] | None:
    """The post-grad nodes ``target`` names in ``g`` (None: not a node of ``g``). An FX node stands for the values
    it hands on to other FX nodes (its post-grad nodes read by post-grad nodes it did not make)."""
    post_grad = {n.name: n for n in g.post_grad.nodes}
    fx = {n.name: n for n in g.fx.nodes}
    is_post_grad = (target.name in post_grad and any(n is target for n in g.post_grad.nodes)
                    if isinstance(target, FxNode) else target in post_grad)
    if is_post_grad:
        return [target.name if isinstance(target, FxNode) else target]
    name = target.name if isinstance(target, FxNode) else target
    if name not in fx or (isinstance(target, FxNode) and not any(n is target for n in g.fx.nodes)):
        return None
    made = [p for p in fx[name].post_grad if p in post_grad]
    handed_on = [p for p in made if any(u not in made for u in post_grad[p].users)]
    return handed_on or made[-1:]


def _asked(target: Any) -> list[Any]:
    items = list(target) if isinstance(target, (list, tuple, set, frozenset)) else [target]
    for item in items:
        if isinstance(item, (LoopIRNode, FusedGroup, Kernel)):
            raise WhatIfError(f"materialize= takes values of your program (FX or post-grad nodes, or their names); "
                              f"{type(item).__name__} {getattr(item, 'id', None) or item.name} writes a buffer "
                              "already: unfuse= splits a kernel")
        if not isinstance(item, (str, FxNode)):
            raise WhatIfError(f"materialize= takes FX or post-grad nodes (or their names), got {type(item).__name__}")
    if not items:
        raise WhatIfError("materialize= got no node")
    return items


def _find(graphs: list[GraphCapture], item: Any) -> tuple[GraphCapture, list[str]]:
    for g in graphs:
        found = _values_of(g, item)
        if found:
            return g, found
    name = getattr(item, "name", item)
    known = [n.name for g in graphs for n in g.fx.nodes] + [n.name for g in graphs for n in g.post_grad.nodes]
    raise WhatIfError(f"no node {name!r} in {', '.join(g.id for g in graphs)}{did_you_mean(name, known)}; "
                      f"{'; '.join(_choices(g, frozenset()) for g in graphs)}")


def materialize_edit(c: Any, target: Any, graph: int | str | None = None, views: Views = _no_views) -> FusionEdit:
    """The values ``target`` names (a node or a list of nodes, all of one graph) stored to buffers of their own."""
    graphs = searched_graphs(c, graph)
    items = _asked(target)
    g, names = _find(graphs, items[0])
    for item in items[1:]:
        _, found = _find([g], item)
        names += [n for n in found if n not in names]
    seen = views(g)
    inlined = inlined_values(g, seen)
    for name in names:
        if name not in inlined:
            raise WhatIfError(_why_not(g, name, seen))
    shown = ", ".join(_shown(g, name) for name in names)
    label = f"storing {shown} in a buffer of its own" if len(names) == 1 else f"storing {shown} in buffers of their own"
    return stored_values(g, names, inlined, label)


def stored_values(g: GraphCapture, names: list[str], inlined: dict[str, list[LoopIRNode]], label: str) -> MaterializeEdit:
    """The edit storing ``names``, each computed inline by the loops ``inlined`` lists for it."""
    loops = list({id(n): n for name in names for n in inlined[name]}.values())
    region = frozenset(origin for n in loops for origin in node_key(n))
    note = (f"Inductor inlined {'them' if len(names) > 1 else 'it'} into the loop of {', '.join(n.name for n in loops)} "
            "while lowering; the recompile stores each and keeps it out of its users' kernel. The new kernels may "
            "still fuse with kernels outside that loop.")
    return MaterializeEdit(g.index, (tuple(n.name for n in loops),), (frozenset(node_key(n) for n in loops),),
                           graph_node_names(g), label, note, nodes=frozenset(names), region=region)


# --- unfuse= of one loop: cut it at the user's lines ---------------------------------------------------------
def _line(g: GraphCapture, name: str) -> tuple[str, int] | None:
    """The user's line of a post-grad node: its own, or the one line of the FX nodes it came from."""
    node = next((n for n in g.post_grad.nodes if n.name == name), None)
    if node is None:
        return None
    if node.user_line is not None:
        return tuple(node.user_line)  # type: ignore[return-value]
    fx = {n.name: n for n in g.fx.nodes}
    lines = {tuple(fx[f].user_line) for f in node.fx if f in fx and fx[f].user_line is not None}
    return lines.pop() if len(lines) == 1 else None  # type: ignore[return-value]


def line_cuts(g: GraphCapture, loop: LoopIRNode, views: frozenset[str] = frozenset()) -> list[str]:
    """The values ``loop`` computes inline that one of the user's lines hands to another line of the same loop."""
    inlined = inlined_values(g, views)
    users = {n.name: n.users for n in g.post_grad.nodes}
    inside = set(loop.origins)
    cuts = []
    for name in loop.origins:
        line = _line(g, name)
        if name not in inlined or line is None:
            continue
        if any(u in inside and _line(g, u) not in (None, line) for u in users.get(name, [])):
            cuts.append(name)
    order = [n.name for n in g.post_grad.nodes]
    return sorted(cuts, key=order.index)


def _lines_of(g: GraphCapture, loop: LoopIRNode) -> list[tuple[str, int]]:
    return sorted({line for name in loop.origins if (line := _line(g, name)) is not None})


def splittable(g: GraphCapture) -> list[FusedGroup]:
    """The groups unfuse= can split: several scheduler nodes, or one loop holding several of the user's lines."""
    return [f for f in g.fused if len(f.nodes) > 1 or
            (g.loop_ir_node(f.nodes[0]).kind in _STORABLE_KINDS and len(_lines_of(g, g.loop_ir_node(f.nodes[0]))) > 1)]


def _lines_text(lines: Iterable[tuple[str, int]]) -> str:
    return ", ".join(f"{file.rsplit('/', 1)[-1]}:{line}" for file, line in lines)


def unfuse_or_cut(c: Any, target: Any, graph: int | str | None = None, views: Views = _no_views) -> FusionEdit:
    """``unfuse=``: a fused group's nodes kept apart (compiler/model/what_if.py), or one loop of several of the
    user's lines cut at each line (the values one line hands to the next stored)."""
    g, group = resolve_group(c, target, graph, offered=splittable)
    if len(group.nodes) > 1:
        return unfuse_edit(c, group, g.index)
    loop = g.loop_ir_node(group.nodes[0])
    if loop.kind not in _STORABLE_KINDS:
        return unfuse_edit(c, group, g.index)  # refused there, with the reason
    seen = views(g)
    cuts = line_cuts(g, loop, seen)
    names = ", ".join(loop.origins)
    groups = f"groups unfuse= can split: {[f.name for f in splittable(g)] or 'none'}"
    if not any(name in inlined_values(g, seen) for name in loop.origins):
        raise WhatIfError(f"{group.name} ({names}) is one scheduler node computing one value: nothing was fused or "
                          f"inlined into it, so there is nothing to undo; {groups}")
    if not cuts:
        lines = _lines_of(g, loop)
        where = f"of one line of yours ({_lines_text(lines)})" if lines else "of no line of yours"
        raise WhatIfError(f"{group.name} ({names}) is one loop {where}: Inductor inlined its operations while "
                          "lowering, so there is no fusion to undo and no line to cut it at; materialize= one of its "
                          f"values to cut it there ({_choices(g, seen)}); {groups}")
    shown = ", ".join(_shown(g, name) for name in cuts)
    label = f"cutting {group.name} ({names}) at your lines {_lines_text(_lines_of(g, loop))} by storing {shown}"
    return stored_values(g, cuts, inlined_values(g, seen), label)
