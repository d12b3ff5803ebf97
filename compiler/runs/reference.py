"""The values a post-grad graph's nodes take in eager PyTorch, node by node, as the reference for numerics.

``eager`` runs every node with the dtypes the graph says (bfloat16 ops round after every op, as eager
PyTorch does). ``float64`` runs the same nodes with every floating tensor, and every floating dtype
argument (casts, factory functions), in float64: as close to the exact result as the graph allows.
Random operators draw other numbers than the compiled kernels do, so every node that depends on one
is reported as random instead of compared.

``on_own_inputs`` runs the same nodes once more, each on the values the compiled program computed
before it (its buffers, where it kept one): what each kernel's nodes give on the kernel's own inputs,
the reference of its local error.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

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


def mutated_inputs(gm: torch.fx.GraphModule) -> set[str]:
    """The graph inputs an op of the graph may write, given the input or a view of it: ``copy_`` into
    them, any op FX counts as impure (a mutable schema: an ``index_put_`` Inductor re-inplaced; a random
    op), and a ``cond`` / ``while_loop`` / ``invoke_subgraph``, whose bodies may write what they are passed."""
    out = set(input_updates(gm))
    base: dict[torch.fx.Node, torch.fx.Node] = {n: n for n in gm.graph.nodes if n.op == "placeholder"}  # view -> input
    for node in gm.graph.nodes:
        if node.op != "call_function":
            continue
        if getattr(node.target, "is_view", False):
            if node.args and node.args[0] in base:
                base[node] = base[node.args[0]]
        elif node.target in _BODIES or node.is_impure():
            out.update(base[p].name for p in node.all_input_nodes if p in base)
    return out


def run_inputs(gm: torch.fx.GraphModule, inputs: list[Any], upcast: bool, written: set[str], keep: bool = True) -> list[Any]:
    """``inputs`` for a run of ``gm``. Those it writes (``written``: ``mutated_inputs``) are copied when
    the caller ``keep``s its own (and in float64 for a float64 run); the others are passed as they are:
    they are only read, and a float64 run upcasts each where an op reads it, so a run that stops early
    (an attention with no float64 kernel) converts only what it reached. Copying every input of a 7B
    model twice would copy 24 GB, and upcasting them all 47 GB more."""
    placeholders = [n.name for n in gm.graph.nodes if n.op == "placeholder"]
    out = []
    for name, value in zip(placeholders, inputs):
        if name in written and isinstance(value, torch.Tensor):
            if upcast and value.is_floating_point() and value.dtype != torch.float64:
                value = value.detach().to(torch.float64)
            elif keep:
                value = value.detach().clone()
        out.append(value)
    return out + list(inputs[len(placeholders):])


def _upcast(value: Any) -> Any:
    if isinstance(value, torch.Tensor) and value.is_floating_point() and value.dtype != torch.float64:
        return value.to(torch.float64)
    if isinstance(value, torch.dtype) and value.is_floating_point:
        return torch.float64
    if isinstance(value, (list, tuple)):
        return type(value)(_upcast(v) for v in value)
    return value


class _Eager(torch.fx.Interpreter):
    """Runs a graph node by node, handing each node's value to ``seen`` under its qualified name.

    A higher-order op's body runs here too, node by node (a ``cond``'s branch that the predicate picks,
    a ``while_loop``'s body once per iteration, an ``invoke_subgraph``'s region), so the kernels Inductor
    generated inside it have values to compare with: one per time the body ran."""

    def __init__(self, gm: torch.fx.GraphModule, upcast: bool, paths: dict[int, str], path: str = "",
                 garbage_collect_values: bool = False) -> None:
        super().__init__(gm, garbage_collect_values=garbage_collect_values)
        self.upcast, self.paths, self.path = upcast, paths, path

    def run_node(self, n: torch.fx.Node) -> Any:
        return self.seen(f"{self.path}.{n.name}" if self.path else n.name, super().run_node(n))

    def seen(self, name: str, value: Any) -> Any:
        """What the nodes after ``name`` read as its value."""
        raise NotImplementedError

    def within(self, gm: torch.fx.GraphModule, path: str) -> _Eager:
        """The same run, inside the subgraph ``gm`` at ``path``."""
        raise NotImplementedError

    def call_function(self, target: Any, args: Any, kwargs: Any) -> Any:
        if self.upcast:
            args, kwargs = _upcast(args), {k: _upcast(v) for k, v in kwargs.items()}
        body = _BODIES.get(target)
        if body is not None and not kwargs:
            return body(self, *args)
        return super().call_function(target, args, kwargs)

    def body(self, gm: torch.fx.GraphModule, *operands: Any) -> Any:
        """Run a subgraph of the graph on ``operands`` node by node."""
        path = self.paths.get(id(gm))
        if path is None:
            return gm(*operands)
        return self.within(gm, path).run(*operands)


class _Streaming(_Eager):
    """Hands each node's value to ``visit(name, run, value)``, ``run`` counting the times the node ran, and
    keeps none past its last use in the graph: what the visitor keeps is all that stays."""

    def __init__(self, gm: torch.fx.GraphModule, upcast: bool, visit: Callable[[str, int, Any], None],
                 runs: dict[str, int], paths: dict[int, str], path: str = "") -> None:
        super().__init__(gm, upcast, paths, path, garbage_collect_values=True)
        self.visit, self.runs = visit, runs

    def seen(self, name: str, value: Any) -> Any:
        run = self.runs.get(name, 0)
        self.runs[name] = run + 1
        self.visit(name, run, value)
        return value

    def within(self, gm: torch.fx.GraphModule, path: str) -> _Eager:
        return _Streaming(gm, self.upcast, self.visit, self.runs, self.paths, path)


class _OnOwnInputs(_Eager):
    """Gives the nodes after a node the compiled program's value of it, where the program kept one, and
    an extern kernel's node the very arguments the program called it with.

    Keeps no values (each is dropped after its last use): a node's own value is handed to ``check``
    with the compiled one, then the compiled one replaces it."""

    def __init__(self, gm: torch.fx.GraphModule, upcast: bool, compiled: Mapping[tuple[str, int], torch.Tensor],
                 given: Mapping[tuple[str, int], list[Any]], check: Callable[[str, int, torch.Tensor], None],
                 runs: dict[str, int], paths: dict[int, str], path: str = "") -> None:
        super().__init__(gm, upcast, paths, path, garbage_collect_values=True)
        self.compiled, self.given, self.check, self.runs = compiled, given, check, runs
        self.externs = {name for name, _ in given}

    def fetch_args_kwargs_from_env(self, n: torch.fx.Node) -> tuple[Any, dict[str, Any]]:
        args, kwargs = super().fetch_args_kwargs_from_env(n)
        name = f"{self.path}.{n.name}" if self.path else n.name
        if name not in self.externs:
            return args, kwargs
        given = self.given.get((name, self.runs.get(name, 0)))
        return (args if given is None else _given(args, given)), kwargs

    def seen(self, name: str, value: Any) -> Any:
        run = self.runs.get(name, 0)
        self.runs[name] = run + 1
        compiled = self.compiled.get((name, run))
        if compiled is None or not isinstance(value, torch.Tensor) or compiled.shape != value.shape:
            return value
        self.check(name, run, value)
        if compiled.dtype == value.dtype and compiled.device == value.device and compiled.stride() == value.stride():
            return compiled
        # in the reference's own dtype and layout: a view the graph takes of it must read what it read
        return torch.empty_like(value).copy_(compiled)

    def within(self, gm: torch.fx.GraphModule, path: str) -> _Eager:
        return _OnOwnInputs(gm, self.upcast, self.compiled, self.given, self.check, self.runs, self.paths, path)


def _given(args: tuple[Any, ...], given: list[Any]) -> tuple[Any, ...]:
    """``args`` with its tensors replaced, in order, by the tensors of ``given`` (the arguments an extern
    kernel was called with), each where the shapes agree; ``args`` as they are when the counts differ."""
    tensors = [g for g in given if isinstance(g, torch.Tensor)]
    if len(tensors) != sum(isinstance(a, torch.Tensor) for a in args):
        return args
    supply = iter(tensors)
    out = []
    for arg in args:
        if isinstance(arg, torch.Tensor):
            tensor = next(supply)
            out.append(tensor if tensor.shape == arg.shape else arg)
        else:
            out.append(arg)
    return tuple(out)


def _cond(run: _Eager, pred: Any, true_fn: Any, false_fn: Any, operands: Any) -> Any:
    return run.body(true_fn if bool(pred) else false_fn, *operands)


def _while_loop(run: _Eager, cond_fn: Any, body_fn: Any, carried: Any, additional: Any = ()) -> Any:
    carried = tuple(carried)
    while bool(run.body(cond_fn, *carried, *additional)):
        carried = tuple(run.body(body_fn, *carried, *additional))
    return carried


def _invoke_subgraph(run: _Eager, subgraph: Any, identifier: Any, *operands: Any) -> Any:
    return run.body(subgraph, *operands)


_BODIES = {op: body for name, body in (("cond", _cond), ("while_loop", _while_loop), ("invoke_subgraph", _invoke_subgraph))
           if (op := getattr(torch.ops.higher_order, name, None)) is not None}


def node_values(gm: torch.fx.GraphModule, inputs: list[Any], upcast: bool = False,
                written: set[str] | None = None) -> dict[str, list[Any]]:
    """Every node's values when the graph runs eagerly on ``inputs`` (left as they are: those it writes,
    ``written`` or ``mutated_inputs(gm)``, are copied first), by qualified name (``true_graph_0.sin``
    inside a branch), one per time it ran: a node of the graph once, a node of a loop's body once per
    iteration, a branch that did not run never."""
    values: dict[str, list[Any]] = {}
    stream_values(gm, inputs, lambda name, run, value: values.setdefault(name, []).append(value), upcast, written)
    return values


def stream_values(gm: torch.fx.GraphModule, inputs: list[Any], visit: Callable[[str, int, Any], None],
                  upcast: bool = False, written: set[str] | None = None) -> None:
    """Run the graph eagerly as ``node_values`` does, handing each node's value to ``visit(name, run,
    value)`` instead of keeping it: a float64 run of a 7B model kept whole held 70 GB more than its eager
    run, and every block of it was a new device allocation (2 of a check's first 3.7 s on an H200)."""
    paths = {id(module): path for path, module in gm.named_modules() if path}
    written = mutated_inputs(gm) if written is None else written
    with torch.no_grad():
        _Streaming(gm, upcast, visit, {}, paths).run(*run_inputs(gm, inputs, upcast, written))


def on_own_inputs(gm: torch.fx.GraphModule, inputs: list[Any], compiled: Mapping[tuple[str, int], torch.Tensor],
                  given: Mapping[tuple[str, int], list[Any]], check: Callable[[str, int, torch.Tensor], None],
                  upcast: bool = False, written: set[str] | None = None) -> None:
    """Run the graph eagerly where every node the compiled program kept a value of takes that value:
    ``compiled`` maps (qualified node name, which run of it) to the compiled program's tensor, ``given``
    to the arguments an extern kernel computing the node was called with (its tensor arguments replace
    the node's, in order). Before a node's value is replaced, ``check(name, run, value)`` gets the value
    the node has when it is run on what the compiled program computed before it: for a node a kernel
    computes, the kernel's reference on the kernel's own inputs. One pass over the graph for every
    kernel at once; the inputs it writes (``written`` or ``mutated_inputs(gm)``) are written (pass
    clones to keep them)."""
    paths = {id(module): path for path, module in gm.named_modules() if path}
    written = mutated_inputs(gm) if written is None else written
    with torch.no_grad():
        _OnOwnInputs(gm, upcast, compiled, given, check, {}, paths).run(
            *run_inputs(gm, inputs, upcast, written, keep=False))
