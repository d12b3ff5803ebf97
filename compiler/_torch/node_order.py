"""Two scheduled nodes' order changed for a compile (``c.what_if(order=(a, b))``).

After fusion, Inductor's scheduler holds one node per kernel-to-be, in the order codegen writes (and the
wrapper launches) them; ``config._post_fusion_custom_pass`` is handed that list and returns the one to use.
The block installs such a pass: ``pick`` names, by their post-grad origins, the nodes to run first and the
nodes they must now precede. Those nodes move to just before the first of the others, together with what
they need that ran in between (each node's ``ancestors``, transitive, or else the buffers it reads); the rest
keeps its order, so every dependency still runs before its users. A move whose nodes need the nodes they
should precede is not made: ``Outcome.blocked`` says which buffer they need.

The C++ backend writes consecutive scheduler nodes into one C++ function: with ``same_kernel`` (were two
nodes one kernel in the compile being edited?) the function ends between neighbours that were not, so the
move changes the order of kernels, never what each computes. A pass the user set keeps running after ours.
Later passes of the scheduler may reorder again (``reorder_for_peak_memory``): what compiled is checked
by the caller. Feature-probed: ``available()`` is False where the post-fusion pass is missing.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

from torch._inductor import config as _config

from . import guard, inductor_config
from .fusion_edits import GraphNames, Members, cpp_kernels_ended, members
from .scheduler_passes import POST_FUSION_KEY

# (post-grad node names of the graph being scheduled, each node's members) ->
#   (indices of the nodes to run first, indices of the nodes they must precede), or None: leave the graph alone
Pick = Callable[[frozenset[str], list[Members]], "tuple[list[int], list[int]] | None"]
SameKernel = Callable[[Members, Members], bool]  # were these two nodes one kernel in the compile being edited


def available() -> bool:
    return hasattr(_config, POST_FUSION_KEY)


@dataclass
class Outcome:
    """What the pass did, read by the caller after the compile."""

    moved: bool = False
    blocked: list[str] = field(default_factory=list)  # why a move was not made: the buffer the nodes need


def _ops(node: Any) -> set[str]:
    names = getattr(node, "get_operation_names", None)
    return set(names()) if names is not None else {node.get_name()}


def _needs(node: Any, other: Any) -> set[str]:
    """What ``node`` needs from ``other``: the buffers it reads that ``other`` writes, or (through nodes in
    between) ``other``'s operations among its ancestors."""
    reads = {dep.name for dep in node.read_writes.reads} | {dep.name for dep in node.unmet_dependencies}
    direct = reads & set(other.get_buffer_names())
    if direct:
        return direct
    ancestors = set(getattr(node, "ancestors", ())) - _ops(node)
    return ancestors & _ops(other)


def moved(nodes: list[Any], first: list[int], second: list[int], outcome: Outcome) -> list[Any]:
    """``nodes`` with those at ``first`` (and what they need in between) just before the first of ``second``."""
    target = min(second)
    late = [i for i in first if i > target]
    if not late:
        return nodes
    taken = set(late)
    for j in range(max(late) - 1, target - 1, -1):  # backwards: what a taken node needs is taken too
        if j in taken:
            continue
        need = [(i, n) for i in sorted(taken) if (n := _needs(nodes[i], nodes[j]))]
        if need:
            if j in second:
                reader, values = need[0]
                asked = nodes[min(late)].get_name()
                through = "" if reader in late else f"{nodes[reader].get_name()}, which needs "
                outcome.blocked.append(f"{asked} needs {through}{', '.join(sorted(values))} from {nodes[j].get_name()}")
                return nodes
            taken.add(j)
    outcome.moved = True
    span = range(target, max(late) + 1)
    return (nodes[:target] + [nodes[i] for i in span if i in taken] + [nodes[i] for i in span if i not in taken]
            + nodes[max(late) + 1:])


@contextlib.contextmanager
def reordered(pick: Pick, same_kernel: SameKernel | None = None) -> Iterator[Outcome]:
    """Inside the block, each graph's scheduled nodes are reordered as ``pick`` asks (the module's docstring)."""
    if not available():
        raise RuntimeError("the installed torch's Inductor has no post-fusion scheduler pass to reorder nodes with")
    outcome = Outcome()
    graph_names = GraphNames()
    existing = getattr(_config, POST_FUSION_KEY)
    ends: dict[int, bool] = {}  # id of a scheduler node -> its C++ kernel ends after it

    def scheduler_pass(nodes: list[Any]) -> list[Any]:
        ends.clear()  # a graph's codegen ends before the next graph is scheduled
        with guard.never_breaking(__name__):
            found = [members(n) for n in nodes]
            picked = pick(graph_names(), found)
            if picked is not None:
                before = list(nodes)
                order = moved(before, *picked, outcome)
                if order is not before and same_kernel is not None:
                    kept = {id(n): m for n, m in zip(nodes, found)}
                    ends.update({id(a): not same_kernel(kept[id(a)], kept[id(b)]) for a, b in zip(order, order[1:])})
                nodes = order
        return existing(nodes) if existing is not None else nodes

    with contextlib.ExitStack() as stack:
        stack.enter_context(inductor_config.patched({POST_FUSION_KEY: scheduler_pass}))
        if same_kernel is not None:
            stack.enter_context(cpp_kernels_ended(lambda snode: ends.get(id(snode), False)))
        yield outcome
