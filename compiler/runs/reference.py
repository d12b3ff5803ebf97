"""The values a post-grad graph's nodes take in eager PyTorch, node by node, as the reference for numerics.

``eager`` runs every node with the dtypes the graph says (bfloat16 ops round after every op, as eager
PyTorch does). ``float64`` runs the same nodes with every floating tensor, and every floating dtype
argument (casts, factory functions), in float64: as close to the exact result as the graph allows.
Random operators draw other numbers than the compiled kernels do, so every node that depends on one
is reported as random instead of compared.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.fx

_RANDOM_WORDS = ("rand", "bernoulli", "dropout", "seed", "normal", "multinomial", "uniform", "exponential")


def _is_random(node: torch.fx.Node) -> bool:
    if node.op != "call_function":
        return False
    name = str(getattr(node.target, "__name__", node.target)).lower()
    return any(word in name for word in _RANDOM_WORDS)


def random_nodes(gm: torch.fx.GraphModule) -> dict[str, str]:
    """Node name -> the random operator it depends on, for every node downstream of one."""
    source: dict[str, str] = {}
    for node in gm.graph.nodes:
        if _is_random(node):
            source[node.name] = node.name
            continue
        for parent in node.all_input_nodes:
            if parent.name in source:
                source[node.name] = source[parent.name]
                break
    return source


def input_updates(gm: torch.fx.GraphModule) -> dict[str, str]:
    """Graph input -> the node whose value the graph copies into it (``copy_(primals_7, add_3)``): the
    value a kernel that updates that input in place must leave there."""
    out: dict[str, str] = {}
    for node in gm.graph.nodes:
        if node.op == "call_function" and "copy_" in str(node.target) and len(node.args) >= 2:
            dst, src = node.args[0], node.args[1]
            if isinstance(dst, torch.fx.Node) and dst.op == "placeholder" and isinstance(src, torch.fx.Node):
                out[dst.name] = src.name
    return out


def _upcast(value: Any) -> Any:
    if isinstance(value, torch.Tensor) and value.is_floating_point() and value.dtype != torch.float64:
        return value.to(torch.float64)
    if isinstance(value, torch.dtype) and value.is_floating_point:
        return torch.float64
    if isinstance(value, (list, tuple)):
        return type(value)(_upcast(v) for v in value)
    return value


class _Recording(torch.fx.Interpreter):
    """Runs a graph node by node, appending each node's value to ``values`` under its qualified name.

    A higher-order op's body runs here too, node by node (a ``cond``'s branch that the predicate picks,
    a ``while_loop``'s body once per iteration, an ``invoke_subgraph``'s region), so the kernels Inductor
    generated inside it have values to compare with: one per time the body ran."""

    def __init__(self, gm: torch.fx.GraphModule, upcast: bool, values: dict[str, list[Any]],
                 paths: dict[int, str], path: str = "") -> None:
        super().__init__(gm, garbage_collect_values=False)
        self.upcast, self.values, self.paths, self.path = upcast, values, paths, path

    def run_node(self, n: torch.fx.Node) -> Any:
        result = super().run_node(n)
        self.values.setdefault(f"{self.path}.{n.name}" if self.path else n.name, []).append(result)
        return result

    def call_function(self, target: Any, args: Any, kwargs: Any) -> Any:
        if self.upcast:
            args, kwargs = _upcast(args), {k: _upcast(v) for k, v in kwargs.items()}
        body = _BODIES.get(target)
        if body is not None and not kwargs:
            return body(self, *args)
        return super().call_function(target, args, kwargs)

    def body(self, gm: torch.fx.GraphModule, *operands: Any) -> Any:
        """Run a subgraph of the graph on ``operands`` node by node, recording its values."""
        path = self.paths.get(id(gm))
        if path is None:
            return gm(*operands)
        return _Recording(gm, self.upcast, self.values, self.paths, path).run(*operands)


def _cond(run: _Recording, pred: Any, true_fn: Any, false_fn: Any, operands: Any) -> Any:
    return run.body(true_fn if bool(pred) else false_fn, *operands)


def _while_loop(run: _Recording, cond_fn: Any, body_fn: Any, carried: Any, additional: Any = ()) -> Any:
    carried = tuple(carried)
    while bool(run.body(cond_fn, *carried, *additional)):
        carried = tuple(run.body(body_fn, *carried, *additional))
    return carried


def _invoke_subgraph(run: _Recording, subgraph: Any, identifier: Any, *operands: Any) -> Any:
    return run.body(subgraph, *operands)


_BODIES = {op: body for name, body in (("cond", _cond), ("while_loop", _while_loop), ("invoke_subgraph", _invoke_subgraph))
           if (op := getattr(torch.ops.higher_order, name, None)) is not None}


def node_values(gm: torch.fx.GraphModule, inputs: list[Any], upcast: bool = False) -> dict[str, list[Any]]:
    """Every node's values when the graph runs eagerly on ``inputs`` (which it may mutate: pass clones),
    by qualified name (``true_graph_0.sin`` inside a branch), one per time it ran: a node of the graph
    once, a node of a loop's body once per iteration, a branch that did not run never."""
    paths = {id(module): path for path, module in gm.named_modules() if path}
    values: dict[str, list[Any]] = {}
    with torch.no_grad():
        _Recording(gm, upcast, values, paths).run(*[_upcast(x) if upcast else x for x in inputs])
    return values
