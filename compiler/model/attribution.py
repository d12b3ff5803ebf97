"""How a kernel's time reaches the nodes and lines of the program: the one rule behind every node and line
time (``c.profile()``'s maps, ``Profile.lines(depth)``, its call tree, the views' heat).

1. A kernel's time goes to the post-grad nodes it computes (``provenance.computing_nodes``: views left out),
   each in proportion to what it costs on its own (``cost.node_cost``: the bytes its tensors occupy and its
   FLOPs, from shapes and dtypes), never by node count; where hardware counters measured the kernel
   (``c.counters()``), in proportion to the warp stall samples of its source lines that each node wrote
   (``counters.node_samples``). An extern kernel computes one node, which takes it whole.
2. A post-grad node's time goes to the FX nodes it was made from, again by cost: the ``addmm`` a rewrite made
   of a matmul and a bias add gives nearly all of it to the matmul's FX node. Views and free ops get none.
3. Each FX node's time goes to its line at the depth asked for (``compiler/model/lines.py``); a post-grad node
   made from no FX node keeps its time on its own line, and a kernel whose nodes are unknown on its first line.

Every map this makes sums to the time of the kernels it could place, so a line's share is a share of the
profile's attributed time.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any, Mapping

from . import cost, counters, lines, provenance


@dataclass
class Spread:
    """Kernel times spread over one compilation's nodes (``spread``)."""

    post_grad_ms: dict[str, dict[str, float]] = field(default_factory=dict)  # graph id -> post-grad node -> ms
    fx_node_ms: dict[str, dict[str, float]] = field(default_factory=dict)  # graph id -> FX node -> ms
    # what carries a line, with its time: FX nodes, post-grad nodes made from no FX node, and a stand-in at
    # the first line of each kernel whose nodes are unknown
    traced: list[tuple[Any, float]] = field(default_factory=list)

    def by_depth(self, depth: str, library_files: Mapping[str, str]) -> dict[Any, float]:
        """Time per line (or module path) at ``depth``."""
        out: dict[Any, float] = defaultdict(float)
        for node, ms in self.traced:
            key = lines.key_at(node, depth, library_files)
            if key is not None and ms > 0:
                out[key] += ms
        return dict(out)

    def tree(self, library_files: Mapping[str, str]) -> list[lines.CallNode]:
        return lines.call_tree(self.traced, library_files)

    def line_totals(self, library_files: Mapping[str, str]) -> dict[lines.Line, float]:
        return lines.line_totals(self.traced, library_files)


@dataclass
class _KernelLine:
    """A kernel none of whose nodes is known, standing in for a node at the kernel's first line."""

    user_line: Any
    stack: tuple = ()
    module: str | None = None


def measured(c: Any) -> dict[tuple[str, str], dict[str, float]]:
    """(graph id, kernel id) -> post-grad node -> samples, from the newest counters of each kernel measured."""
    graphs = {g.id: g for g in c.graphs}
    out: dict[tuple[str, str], dict[str, float]] = {}
    for report in c.counter_reports:
        for row in report.kernels:
            graph = graphs.get(row.graph) if row.graph else None
            if graph is not None and row.samples:
                nodes = {n.name: n for n in graph.post_grad.nodes}
                out[(graph.id, row.kernel)] = counters.node_samples(row, graph.kernel(row.kernel), nodes)
    return out


def spread(c: Any, kernel_ms: Mapping[tuple[str, str], float]) -> Spread:
    """``kernel_ms``: (graph id, kernel id) -> ms. The times spread by the rule above, with the compilation's
    hardware counters where it has them."""
    out = Spread()
    samples = measured(c) if c.counter_reports else {}
    post_grad: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    fx: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    graphs = {g.id: g for g in c.graphs}
    stages: dict[str, tuple[dict[str, Any], dict[str, Any], dict[str, Any], float]] = {}
    for (graph_id, kernel_id), ms in kernel_ms.items():
        graph = graphs.get(graph_id)
        if graph is None or ms <= 0:
            continue
        if graph_id not in stages:
            stages[graph_id] = ({n.name: n for n in graph.post_grad.nodes}, {n.name: n for n in graph.fx.nodes},
                                {k.id: k for k in graph.kernels},
                                cost.balance(c.device_name or c.device, _main_float(graph)))
        pg_nodes, fx_nodes, kernels, balance = stages[graph_id]
        kernel = kernels.get(kernel_id)
        if kernel is None:  # a report of a kernel its graph no longer lists
            continue
        known = [n for n in provenance.computing_nodes(kernel, pg_nodes) if n in pg_nodes]
        if not known:
            if kernel.user_lines:
                out.traced.append((_KernelLine(tuple(kernel.user_lines[0])), ms))
            continue
        for name, share in _node_shares(known, pg_nodes, balance, samples.get((graph_id, kernel_id))).items():
            node_ms = ms * share
            post_grad[graph_id][name] += node_ms
            made_from = [f for f in dict.fromkeys(pg_nodes[name].fx) if f in fx_nodes]
            if not made_from:
                out.traced.append((pg_nodes[name], node_ms))
                continue
            for fx_name, fx_share in cost.split_by_cost(made_from, fx_nodes, balance).items():
                fx[graph_id][fx_name] += node_ms * fx_share
                out.traced.append((fx_nodes[fx_name], node_ms * fx_share))
    out.post_grad_ms = {g: dict(m) for g, m in post_grad.items()}
    out.fx_node_ms = {g: dict(m) for g, m in fx.items()}
    return out


def _node_shares(names: list[str], nodes: Mapping[str, Any], balance: float,
                 samples: Mapping[str, float] | None) -> dict[str, float]:
    """Each computing node's share of its kernel: by its measured samples where counters have any, else by cost."""
    weights = {n: samples.get(n, 0.0) for n in names} if samples else {}
    total = sum(weights.values())
    if total > 0:
        return {n: w / total for n, w in weights.items()}
    return cost.split_by_cost(names, nodes, balance)


def _main_float(graph: Any) -> str:
    """The floating dtype most of the graph's ops produce (the one its device's FLOP rate is read for)."""
    counts = Counter(n.dtype for n in graph.post_grad.nodes if n.op == "call_function" and "float" in (n.dtype or ""))
    return counts.most_common(1)[0][0] if counts else "float32"
