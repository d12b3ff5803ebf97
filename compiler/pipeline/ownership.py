"""What each loop-IR node computes, told apart from what Inductor lists it as coming from.

Inductor's ``origins`` of an IR node are the FX node being lowered plus the origins of every
unrealized input handed to it (``gather_origins``), and inside a higher-order op's subgraph also the
enclosing op's. An extern matmul handed an unrealized LayerNorm realizes it into a buffer of its own,
computed by another node, yet both list the LayerNorm's nodes; a ``cond`` branch's kernel lists the
predicate. Taken as they are, every node of a LayerNorm kernel is claimed again by the matmul after
it, and line times and diffs follow the wrong kernel. The rule:

- a node lowered inside a subgraph computes only nodes of that subgraph (the others are the
  enclosing op's, lowered in the outer graph);
- a node does not compute what the producers of the buffers it reads list (those producers do),
  except the FX node whose lowering created it: the stages of one op (a split reduction's passes, a
  fallback kernel and its outputs) read each other and all compute that op.

What a node lists but does not compute is kept as ``inherited``, so nothing Inductor said is lost.

A TORCH_TRACE log holds no loop IR, only Inductor's kernel -> node map, which over-claims the same way
(``log_claims``): each node goes to the first kernel in codegen order that lists it.
"""

from __future__ import annotations

from typing import Any

from ..model.stages import FxNode


def buffer_name(dep: str) -> str:
    """``buf3`` of a recorded dependency ``buf3[c0 + 96*c1]`` (or ``buf3[*]``)."""
    return dep.split("[", 1)[0]


def split_origins(records: list[dict[str, Any]], lowered_by: dict[str, str],
                  subgraph_of: dict[str, str | None]) -> None:
    """Set each raw loop-IR record's ``origins`` to the post-grad nodes it computes and ``inherited`` to
    the rest of Inductor's list. ``lowered_by``: operation -> the post-grad node whose lowering made it;
    ``subgraph_of``: post-grad node -> the subgraph path holding it (None in the main graph)."""
    listed = {record["name"]: list(record["origins"]) for record in records}
    producer = {buffer: record["name"] for record in records for buffer in record["buffers"]}
    for record in records:
        origins = listed[record["name"]]
        inside = [o for o in origins if subgraph_of.get(o) == record.get("subgraph")] or origins
        creator = lowered_by.get(record["name"])
        read = {o for dep in record["reads"] if (source := producer.get(buffer_name(dep))) not in (None, record["name"])
                for o in listed[source]}
        computed = [o for o in inside if o not in read or o == creator]
        record["origins"] = computed
        record["inherited"] = [o for o in origins if o not in computed]


def log_claims(claims: list[list[str]], post_grad: list[FxNode]) -> list[list[str]]:
    """The nodes each kernel of a TORCH_TRACE log computes, from Inductor's kernel -> node map (``claims``,
    kernels in codegen order): subgraph names qualified, then every node kept by its first claimant."""
    targets = {n.name: "get_attr" if n.op == "get_attr" else n.target for n in post_grad}
    graphs: dict[str | None, set[str]] = {}
    for node in post_grad:
        graphs.setdefault(node.subgraph, set()).add(node.name[len(node.subgraph) + 1:] if node.subgraph else node.name)
    if len(graphs) > 1:
        claims = [qualify_claims(nodes, graphs) for nodes in claims]
    return first_claims(claims, targets)


def first_claims(claims: list[list[str]], targets: dict[str, str]) -> list[list[str]]:
    """Node lists of kernels in codegen order, each node kept by the first kernel that lists it: without
    the loop IR (a TORCH_TRACE log) only Inductor's over-claiming map is there, and a kernel over-claims
    the nodes of the kernels that produced its inputs, which ran before it. The higher-order op itself
    (``cond``) and its subgraph attributes are the wrapper's control flow, computed by no kernel.
    ``targets``: post-grad node -> its target (``get_attr`` nodes map to "get_attr")."""
    taken: set[str] = set()
    out = []
    for nodes in claims:
        mine = [n for n in nodes if n not in taken and not _control_flow(targets.get(n, ""))]
        taken.update(mine)
        out.append(mine or [n for n in nodes if not _control_flow(targets.get(n, ""))] or list(nodes))
    return out


def _control_flow(target: str) -> bool:
    return target == "get_attr" or target.startswith("torch.ops.higher_order.")


def qualify_claims(nodes: list[str], graph_names: dict[str | None, set[str]]) -> list[str]:
    """A log's kernel -> node list names a subgraph's nodes without their subgraph (``sin`` for
    ``true_graph_0.sin``). A kernel listing names found only in one subgraph lives there (the outer
    names it lists are the enclosing op's, which Inductor adds to everything lowered inside it): its
    names found in that subgraph are qualified with it. Of several, the subgraph with the most such
    names wins. ``graph_names``: graph (None for the main one, else the subgraph path) -> bare names."""
    def unique(path: str | None) -> int:
        others = set().union(*(names for other, names in graph_names.items() if other != path))
        return sum(1 for n in nodes if n in graph_names[path] and n not in others)

    home = max((path for path in graph_names if path is not None), key=unique, default=None)
    if home is None or not unique(home):
        return list(nodes)
    return [f"{home}.{n}" if n in graph_names[home] else n for n in nodes]
