"""Which graph and which Dynamo FX node of one compilation is which of another's, by the user's source lines.

Two compilations of the same code trace the same lines, but not always into the same names or graphs: a
JIT compile (Dynamo) and an exported program name nodes differently (``h = torch.relu(...)`` is ``h`` in
one, ``relu`` in the other), and two torch releases may name FX nodes, post-grad nodes and kernels their
own way or cut the program into a different number of graphs. The user's lines are what both sides
share, so ``compiler.diff`` (diff_pairing.py) matches graphs and FX nodes by them before it pairs
kernels by the FX nodes they compute.
"""

from __future__ import annotations

from typing import Any

from .stages import FxNode, GraphCapture

Line = Any  # (file, line), or None for code without a file


def _line(node: FxNode, innermost: bool) -> Line:
    """``innermost``: the innermost frame of the node's stack, which may be a library's line (a JIT and an
    AOT compile run the same torch); else the user's line, since a library's line numbers move between
    torch releases."""
    if innermost and node.stack:
        return tuple(node.stack[-1][:2])
    return tuple(node.user_line) if node.user_line else None


def fx_renames(a: GraphCapture, b: GraphCapture, innermost: bool = True) -> dict[str, str]:
    """``b``'s FX node names -> ``a``'s for the same operation: the n-th operation traced at one source line
    in each graph (``innermost``: the innermost frame's line, else the user's; see ``_line``)."""
    def by_line(graph: GraphCapture) -> dict[tuple[Line, int], str]:
        seen: dict[Line, int] = {}
        out = {}
        for node in graph.fx.nodes:
            if node.op in ("placeholder", "get_attr", "output"):
                continue
            line = _line(node, innermost)
            position = seen.get(line, 0)
            seen[line] = position + 1
            out[(line, position)] = node.name
        return out

    names_a, names_b = by_line(a), by_line(b)
    return {name: names_a[key] for key, name in names_b.items() if key in names_a}


def same_layout(a: list[GraphCapture], b: list[GraphCapture]) -> bool:
    """Both compilations cut the program into the same graphs, in the same order (then graphs pair by index)."""
    return [g.kind for g in a] == [g.kind for g in b]


def user_lines(graph: GraphCapture) -> set[Line]:
    """The user's lines the graph's operations were traced at."""
    return {tuple(n.user_line) for n in graph.fx.nodes
            if n.user_line and n.op not in ("placeholder", "get_attr", "output")}


def pair_graphs(a: list[GraphCapture], b: list[GraphCapture]) -> list[tuple[GraphCapture | None, GraphCapture | None]]:
    """Each graph of ``a`` with the graph of ``b`` tracing the same code: by index when the layouts match,
    else by the share of user lines two graphs have in common (the same kind first); a graph tracing no
    line the other side has stays alone. ``a``'s order, then ``b``'s graphs that only it has."""
    if same_layout(a, b):
        return list(zip(a, b))
    lines_a, lines_b = [user_lines(g) for g in a], [user_lines(g) for g in b]
    candidates = sorted(((len(la & lb) / len(la | lb), ga.kind == gb.kind, -i, -j, i, j)
                         for i, (ga, la) in enumerate(zip(a, lines_a)) for j, (gb, lb) in enumerate(zip(b, lines_b))
                         if la & lb), reverse=True)
    pair_of_a: dict[int, int] = {}
    for *_, i, j in candidates:
        if i not in pair_of_a and j not in pair_of_a.values():
            pair_of_a[i] = j
    pairs: list[tuple[GraphCapture | None, GraphCapture | None]] = [
        (ga, b[pair_of_a[i]] if i in pair_of_a else None) for i, ga in enumerate(a)]
    return pairs + [(None, gb) for j, gb in enumerate(b) if j not in pair_of_a.values()]
