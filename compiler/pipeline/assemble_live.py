"""A live inner compile -> a linked GraphCapture: what needs its GraphModules, around assemble_stages.

The FX stages are read from the Dynamo and post-grad GraphModules (and linked through their nodes'
meta), each shape-padding decision is placed on the post-grad nodes made from its matmul, and the
wrapper's conversion to FX (``g.wrapper.fx``) is left pending with the kernels the compiled wrapper
loaded. The rest is assemble.py's, which a compile read from a log shares.
"""

from __future__ import annotations

import functools
from typing import Any

from .._torch import fx_meta
from .._torch import wrapper_fx as fx_converter
from ..model.stages import GraphCapture, Kernel, LoopIRNode
from .assemble import InnerRecord, loaded_kernels, assemble_stages
from .fx_stage import fx_stage, graph_modules, input_links, link_post_grad_to_fx, qualified
from .wrapper_graph import wrapper_fx


def assemble(index: int, record: InnerRecord, dynamo_module: Any, forward: GraphCapture | None = None) -> GraphCapture:
    """``forward``: for a backward graph, the forward graph of the same Dynamo graph (its saved values)."""
    fx = fx_stage("fx", dynamo_module)  # its own copy: forward and backward link it differently
    post_grad = fx_stage("post_grad", record.post_grad_module)
    inputs = input_links(post_grad, fx, forward.post_grad if forward is not None else None)
    link_post_grad_to_fx(post_grad, fx, record.post_grad_module, record.dynamo_graph_paths, inputs, record.rewrites)
    graph = assemble_stages(index, record, fx, post_grad, _pad_decisions_of(record))
    if record.wrapper_fx is not None and record.wrapper_language == "python":  # the FX converter reads Python lines
        graph.wrapper.fx_pending = functools.partial(_wrapper_fx, record.wrapper_fx, graph.kernels, graph.loop_ir,
                                                     graph.memory, record.compiled_fn)
    return graph


def _wrapper_fx(planned: fx_converter.PlannedWrapper, kernels: list[Kernel], loop_ir: list[LoopIRNode],
                memory: Any, compiled_fn: Any) -> Any:
    """g.wrapper.fx on first read: Inductor's converter run on the planned lines, with the kernels the
    compiled wrapper loaded, linked to kernel ids."""
    return wrapper_fx(fx_converter.convert(planned, loaded_kernels(kernels, compiled_fn)), kernels, loop_ir, memory)



def _pad_decisions_of(record: InnerRecord) -> list[dict[str, Any]]:
    """The shape-padding decisions whose matmul ended up in this graph, linked to its post-grad nodes
    (the decision names a node of the joint graph; post-grad nodes record it in ``from_node``)."""
    if record.post_grad_module is None:
        return []
    made_from: dict[tuple[str, int | None], list[str]] = {}
    own_names: set[str] = set()
    for path, module in graph_modules(record.post_grad_module):
        for node in module.graph.nodes:
            if not path:
                own_names.add(node.name)
            for source in [(node.name, id(module.graph)), *fx_meta.origin_sources(node)]:
                made_from.setdefault(source, []).append(qualified(path, node.name))
    out = []
    for decision in record.pad_decisions:
        nodes = made_from.get((decision["node"], decision["graph_id"]), [])
        if not nodes and decision["node"] in own_names and record.kind != "backward":
            # a matmul left unpadded is the same node in an inference graph, with no ancestry recorded
            nodes = [decision["node"]]
        if nodes:  # a training step's matmul lands in the forward or the backward graph
            out.append({**{k: v for k, v in decision.items() if k != "graph_id"}, "nodes": nodes})
    return out
