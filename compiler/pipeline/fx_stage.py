"""FX GraphModules -> FxStage records (names, ops, shapes, the user's lines), subgraphs included.

Higher-order ops (``cond``, ``while_loop``, ``invoke_subgraph``, activation checkpointing) keep their
bodies as GraphModules held by the graph (``get_attr`` nodes). Their nodes join the stage under a
qualified name, ``<submodule path>.<node name>`` (``cond_true_0.sin``), with ``FxNode.subgraph`` set to
the path, so kernels generated inside a branch link to the branch's own nodes and lines.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Iterator

import torch.fx

from .._torch import fx_meta
from .._torch.pattern_rewrites import Source
from ..model.formatting import shorten
from ..model.stages import FxNode, FxStage
from . import frames

_ARGS_LIMIT = 240


def graph_code(gm: torch.fx.GraphModule) -> str:
    """The graph as readable Python, with shapes annotated where the installed torch can."""
    try:
        return gm.print_readable(print_output=False)
    except Exception:
        return gm.code


def graph_modules(gm: torch.fx.GraphModule) -> Iterator[tuple[str, torch.fx.GraphModule]]:
    """("", gm) and every GraphModule below it by dotted path, each module once (a subgraph invoked
    twice is one module)."""
    seen: set[int] = set()
    for path, module in gm.named_modules():
        if isinstance(module, torch.fx.GraphModule) and id(module) not in seen:
            seen.add(id(module))
            yield path, module


def qualified(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def fx_stage(stage: str, gm: torch.fx.GraphModule | None) -> FxStage:
    if gm is None:
        return FxStage(stage=stage, code="", nodes=[])
    nodes: list[FxNode] = []
    for path, module in graph_modules(gm):
        for node in module.graph.nodes:
            shape, dtype = fx_meta.value_info(node)
            stack = frames.without_entry(fx_meta.user_frames(node))
            nodes.append(
                FxNode(
                    name=qualified(path, node.name),
                    op=node.op,
                    target=fx_meta.target_name(node),
                    args=shorten(str(tuple(node.args)) if node.op != "output" else str(node.args[0]), _ARGS_LIMIT),
                    shape=shape,
                    dtype=dtype,
                    inputs=[qualified(path, n.name) for n in node.all_input_nodes],
                    users=[qualified(path, n.name) for n in node.users],
                    user_line=frames.source_line(tuple(stack)),
                    stack=stack,
                    subgraph=path or None,
                    module=fx_meta.module_path(node),
                )
            )
    return FxStage(stage=stage, code="", nodes=nodes, module=gm, code_pending=functools.partial(graph_code, gm))


class StageNames:
    """The qualified names of a GraphModule's nodes, subgraphs included, looked up by object.

    Inductor lowers each subgraph with its own ``GraphLowering`` (found by ``path_of`` its module), and
    IR origins are fx.Node objects of whichever graph they belong to (named by ``name_of``).
    """

    def __init__(self, gm: torch.fx.GraphModule) -> None:
        modules = list(graph_modules(gm))
        self._module_paths = {id(module): path for path, module in modules}
        self.graph_paths = {id(module.graph): path for path, module in modules}

    def path_of(self, module: object) -> str | None:
        return self._module_paths.get(id(module))

    def name_of(self, node: torch.fx.Node) -> str:
        return qualified(self.graph_paths.get(id(node.graph), ""), node.name)


def link_post_grad_to_fx(post_grad: FxStage, fx: FxStage, post_gm: torch.fx.GraphModule | None,
                         graph_paths: dict[int, str], inputs: dict[str, list[str]],
                         rewrites: dict[Source, list[Source]] | None = None) -> None:
    """Fill ``post_grad_node.fx`` and ``fx_node.post_grad``.

    Graph inputs link as ``inputs`` says (see ``input_links``). Other nodes, in order of trust: the
    ``from_node`` ancestry in meta, resolved by graph id (so ``sin`` inside a cond branch is the
    branch's ``sin``), with the ancestry of the nodes a pattern rewrite erased to make it (``rewrites``:
    the ``mm`` of an ``addmm``, ownership rule 4); the same name in the Dynamo graph; the FX nodes traced
    on the same stack, else on the same user line (backward graphs record little ancestry, nor do the
    nodes a loss's decomposition makes); and last, for nodes with no trace of their own, the FX nodes of
    their inputs. The ``copy_`` that functionalization adds to write a mutated input
    back has a stack trace but no ancestry: it links through the value it writes first, since neither its
    name nor its line tells one input's write-back from another's (every ``p.copy_(...)`` of a loop over
    parameters is on one line). An FX call that common-subexpression elimination merged into an identical
    one links to what its twin made, and a factory (``torch.arange``) a decomposition folded into its
    users' nodes to what they made.
    """
    if post_gm is None:
        return
    fx_names = {n.name: n for n in fx.nodes if n.op not in ("placeholder", "output", "get_attr")}
    fx_inputs = {n.name: n for n in fx.nodes if n.op == "placeholder"}
    on_line: dict[Any, list[FxNode]] = {}
    on_stack: dict[tuple[tuple[str, int], ...], list[FxNode]] = {}
    for n in fx_names.values():
        on_line.setdefault(n.user_line, []).append(n)
        if n.stack:
            on_stack.setdefault(_place(n), []).append(n)

    @functools.cache  # a backward graph has many nodes per (line, module instance): 1,920 calls at 24 layers
    def same_instance(line: Any, place: tuple[tuple[str, int], ...], module: str | None) -> list[str]:
        return _same_instance(on_stack.get(place) or on_line.get(line, []), module)

    by_name = {n.name: n for n in post_grad.nodes}
    write_backs: dict[str, Callable[[], list[str]]] = {}  # linked through their inputs first, else as the rest
    for path, module in graph_modules(post_gm):
        for node in module.graph.nodes:
            record = by_name.get(qualified(path, node.name))
            if record is None or node.op == "output":
                continue
            if node.op == "placeholder" and not path:
                record.fx = [name for name in inputs.get(record.name, []) if name in fx_names or name in fx_inputs]
                continue
            link = functools.partial(_origins, node, record, path, fx_names, graph_paths, same_instance, rewrites or {})
            if _writes_back(node) and not fx_meta.origin_sources(node):
                write_backs[record.name] = link
                continue
            record.fx = link()
    for record in post_grad.nodes:  # in graph order, so chains of trace-less nodes inherit too
        if not record.fx and record.op == "call_function":
            record.fx = [f for name in record.inputs if name in by_name and by_name[name].op != "placeholder"
                         for f in by_name[name].fx]
            record.fx = list(dict.fromkeys(record.fx)) or (write_backs[record.name]() if record.name in write_backs else [])
    every = {**fx_names, **fx_inputs}
    for record in post_grad.nodes:
        if record.module is None and record.fx:
            record.module = every[record.fx[0]].module
        for name in record.fx:
            if record.name not in every[name].post_grad:
                every[name].post_grad.append(record.name)
    for name, twin in _merged_calls(fx).items():  # calls CSE merged into an identical one go with it
        _link(every[name], [by_name[p] for p in every[twin].post_grad if p in by_name])
    for name, users in _folded_factories(fx).items():  # a factory folded into its users' nodes goes with them
        _link(every[name], [by_name[p] for user in users for p in every[user].post_grad if p in by_name])


def _writes_back(node: torch.fx.Node) -> bool:
    """A ``copy_`` into an input of the graph: functionalization's write-back of a mutated input."""
    return (node.op == "call_function" and getattr(node.target, "__name__", "").startswith("copy_")
            and bool(node.args) and isinstance(node.args[0], torch.fx.Node) and node.args[0].op == "placeholder")


def _link(fx_node: FxNode, post_grad_nodes: list[FxNode]) -> None:
    for record in post_grad_nodes:
        if fx_node.name not in record.fx:
            record.fx.append(fx_node.name)
        if record.name not in fx_node.post_grad:
            fx_node.post_grad.append(record.name)


def _folded_factories(fx: FxStage) -> dict[str, list[str]]:
    """FX calls that make a tensor from no tensor (``torch.arange(16)``, ``torch.zeros(...)``) and made no
    post-grad node: a decomposition folded them into their users' nodes (``arange(16) + 0`` became one
    ``iota``), so they go with what their users made (ownership rule 4)."""
    records = {n.name: n for n in fx.nodes}

    def tensor(name: str) -> bool:
        node = records.get(name)
        return node is not None and node.shape is not None and (node.dtype or "").startswith("torch.")

    out = {}
    for node in fx.nodes:
        if node.op not in ("call_function", "call_method") or node.post_grad or not tensor(node.name):
            continue
        users = [u for u in node.users if u in records and records[u].post_grad]
        if users and not any(tensor(i) for i in node.inputs):
            out[node.name] = users
    return out


def _merged_calls(fx: FxStage) -> dict[str, str]:
    """FX call -> the identical call (same target, arguments and keyword arguments) it was merged into by
    common-subexpression elimination: it made no post-grad node of its own, its twin did (ownership rule 4).
    A call whose value nothing uses made nothing either, but because it was dead code: it is no twin's.
    Read from the live Dynamo graph, whose arguments compare exactly; empty for a log's graph."""
    if fx.module is None:
        return {}
    records = {n.name: n for n in fx.nodes}
    live = _live(fx)
    first: dict[Any, str] = {}
    out = {}
    for path, module in graph_modules(fx.module):
        for node in module.graph.nodes:
            if node.op not in ("call_function", "call_method"):
                continue
            try:
                key = (path, node.op, node.target, _plain(node.args), _plain(node.kwargs))
                hash(key)
            except TypeError:  # an argument that cannot be compared exactly: never merged here
                continue
            name = qualified(path, node.name)
            twin = first.setdefault(key, name)
            record = records.get(name)
            if (twin != name and record is not None and not record.post_grad and records[twin].post_grad
                    and name in live):
                out[name] = twin
    return out


def _live(fx: FxStage) -> set[str]:
    """The FX nodes whose values reach a graph's output or an in-place call (``p.add_(...)``, ``t.copy_(...)``):
    the rest is dead code, which made no post-grad node."""
    records = {n.name: n for n in fx.nodes}
    stack = [n.name for n in fx.nodes if n.op == "output" or _in_place(n.target)]
    live: set[str] = set()
    while stack:
        name = stack.pop()
        if name in live or name not in records:
            continue
        live.add(name)
        stack.extend(records[name].inputs)
    return live


_IN_PLACE_OPERATORS = frozenset({"iadd", "isub", "imul", "itruediv", "ifloordiv", "imod", "ipow", "iand", "ior", "ixor",
                                 "ilshift", "irshift", "imatmul"})


def _in_place(target: str) -> bool:
    """``add_``, ``torch.Tensor.copy_``, ``operator.iadd`` (``x += 1``): a call that writes its first argument."""
    module, _, name = target.rpartition(".")
    if module in ("operator", "_operator"):
        return name in _IN_PLACE_OPERATORS
    return name.endswith("_") and not name.endswith("__")


def _plain(value: Any) -> Any:
    """Arguments as hashable values, nodes by name."""
    if isinstance(value, torch.fx.Node):
        return ("node", value.name)
    if isinstance(value, (list, tuple)):
        return tuple(_plain(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, _plain(v)) for k, v in value.items()))
    return value


def _origins(node: torch.fx.Node, record: FxNode, path: str, fx_names: dict[str, FxNode],
             graph_paths: dict[int, str], same_instance: Callable[[Any, Any, str | None], list[str]],
             rewrites: dict[Source, list[Source]]) -> list[str]:
    sources = fx_meta.origin_sources(node)
    if rewrites:
        sources += [s for s in _erased_for([(node.name, id(node.graph)), *sources], rewrites) if s not in sources]
    exact = [qualified(graph_paths[gid], name) for name, gid in sources if gid in graph_paths]
    origins = [name for name in dict.fromkeys(exact) if name in fx_names]
    if not origins:
        origins = [name for name, _ in sources if name in fx_names]
    if not origins and qualified(path, node.name) in fx_names and record.user_line == fx_names[record.name].user_line:
        origins = [record.name]
    if not origins and record.user_line is not None:
        origins = same_instance(record.user_line, _place(record), record.module)
    return list(dict.fromkeys(origins))


def _place(node: FxNode) -> tuple[tuple[str, int], ...]:
    """Where a node was traced: every frame of its stack, so that two calls of a library function from
    different lines of the user's code (the same innermost line) are two places."""
    return tuple((file, line) for file, line, _ in node.stack)


def _erased_for(sources: list[Source], rewrites: dict[Source, list[Source]]) -> list[Source]:
    """The ancestry of every node erased by the rewrites that made one of ``sources``, and of those
    that made the erased ones (a rewrite of a rewrite)."""
    out: dict[Source, None] = {}
    stack = [s for s in sources if s in rewrites]
    seen: set[Source] = set()
    while stack:
        made = stack.pop()
        if made in seen:
            continue
        seen.add(made)
        for erased in rewrites[made]:
            out[erased] = None
            if erased in rewrites:
                stack.append(erased)
    return list(out)


def _same_instance(candidates: list[FxNode], module: str | None) -> list[str]:
    """Of the FX nodes on a backward node's user line, those of the same module instance.

    A line of a block's forward runs once per instance (24 layers of one block class share every line):
    linking to all of them made each backward node of a 24-layer model point at about 120 FX nodes. The
    node's module path (``3.mlp.up``) picks the candidates sharing the longest prefix with it, give or
    take one level (the line's own module calls its children: ``3.mlp``, ``3.mlp.up``, ``3.mlp.down``)."""
    if not module:
        return [n.name for n in candidates]
    parts = module.split(".")
    shared: dict[str | None, int] = {}  # candidate module -> leading path parts in common with ``module``
    for theirs in {n.module for n in candidates}:
        other = (theirs or "").split(".")
        shared[theirs] = next((i for i, (a, b) in enumerate(zip(parts, other)) if a != b), min(len(parts), len(other)))
    depth = max(shared.values(), default=0)
    if depth == 0:
        return [n.name for n in candidates]
    return [n.name for n in candidates if shared[n.module] >= max(1, depth - 1)]


def input_links(post_grad: FxStage, fx: FxStage, forward: FxStage | None) -> dict[str, list[str]]:
    """Post-grad graph inputs -> the FX nodes their values come from.

    A forward or inference graph takes Dynamo's inputs in order (AOT autograd keeps the order unless
    it deduplicates inputs): paired by position when number, shapes and dtypes agree. A backward graph
    (``forward`` is its forward's post-grad stage) takes values the forward saved, under the forward
    node's own name, and the incoming gradients (``tangents_*``, which link to nothing).
    """
    ours = [n for n in post_grad.nodes if n.op == "placeholder" and n.subgraph is None]
    if forward is not None:
        saved = {n.name: n.fx for n in forward.nodes}
        return {n.name: list(saved[n.name]) for n in ours if n.name in saved}
    theirs = [n for n in fx.nodes if n.op == "placeholder" and n.subgraph is None]
    if len(ours) != len(theirs):
        return {}
    for a, b in zip(ours, theirs):
        if a.shape is not None and b.shape is not None and (a.shape != b.shape or a.dtype != b.dtype):
            return {}
    return {a.name: [b.name] for a, b in zip(ours, theirs)}
