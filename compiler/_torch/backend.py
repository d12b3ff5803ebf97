"""A torch.compile backend that is Inductor itself, with a hook around each inner compile.

``compile_fx(..., inner_compile=...)`` is Inductor's own extension point: AOT autograd calls the inner
compiler once per forward/inference graph and (lazily, at the first backward) once per backward graph.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

import torch.fx
from torch._inductor.compile_fx import compile_fx, compile_fx_inner


def make_backend(
    on_dynamo_graph: Callable[[torch.fx.GraphModule, list[Any]], int],
    around_inner: Callable[..., Any],
) -> Callable[[torch.fx.GraphModule, list[Any]], Any]:
    """``around_inner(dynamo_index, compile_inner, gm, inputs, **kwargs)`` wraps every inner compile."""

    def backend(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Any:
        index = on_dynamo_graph(gm, example_inputs)
        inner = functools.partial(around_inner, index, compile_fx_inner)
        return compile_fx(gm, example_inputs, inner_compile=inner)

    return backend


def graph_kind(kwargs: dict[str, Any]) -> str:
    if kwargs.get("is_backward"):
        return "backward"
    if kwargs.get("is_inference"):
        return "inference"
    return "forward"


def copy_graph_module(gm: torch.fx.GraphModule) -> torch.fx.GraphModule:
    """A GraphModule sharing ``gm``'s submodules and parameters but with its own graph.

    Inductor's pre-grad passes rewrite the Dynamo graph in place; the copy keeps what Dynamo produced.
    Node meta is copied shallowly by ``graph_copy`` (no tensor data is duplicated). So is what Dynamo
    tells AOTAutograd beside the graph (the module's meta, ``_param_name_to_source``, each placeholder's
    ``_dynamo_source``): without it a copy compiled again is not taken for a Dynamo graph, its parameters
    are not static inputs, and the partitioner saves other tensors for the backward.
    """
    graph = torch.fx.Graph()
    value_map: dict[torch.fx.Node, torch.fx.Node] = {}
    out = graph.graph_copy(gm.graph, value_map)
    graph.output(out)
    copy = torch.fx.GraphModule(gm, graph)
    copy.meta = dict(gm.meta)
    for name in ("_param_name_to_source", "_source_to_user_stacks"):
        if hasattr(gm, name):
            setattr(copy, name, getattr(gm, name))
    for node, copied in value_map.items():
        if hasattr(node, "_dynamo_source"):
            copied._dynamo_source = node._dynamo_source
    return copy
