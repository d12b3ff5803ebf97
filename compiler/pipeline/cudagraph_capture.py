"""What a capture keeps of CUDA graphs (``g.cudagraphs``), from three sources, for each graph compiled with
``triton.cudagraphs`` (``mode="reduce-overhead"``):

- the partitions the scheduler made (compiler/_torch/cudagraph_partitions.py), linked here to the graph's
  fused groups, kernels, post-grad nodes and lines;
- what Inductor decided for the compiled graph (compiler/_torch/cudagraph_compile.py): recorded whole, by
  partitions, or skipped with a reason, whose node is found in the post-grad graph;
- the CUDA graph tree's events while the capture's call runs (compiler/model/cudagraph_events.py): the
  warm-up, and the skip the tree decides at the first run (a mutated input).

A graph without partitions (``graph_partition`` off, or a graph served warm whose store kept them) is one
partition: the graph whole.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from .._torch import cudagraph_compile, inductor_config
from .._torch.cudagraph_partitions import PartitionRecord
from ..model.cudagraph_events import link_skip
from ..model.cudagraphs import (CudaGraphPartition, CudaGraphSkip, GraphCudaGraphs, PartitionReason, SkipKind, skip_kind,
                               skip_message)

KEY = "triton.cudagraphs"
NO_GPU_NOTE = ("CUDA graphs need a GPU: {function} runs on {device} ({graphs}), so torch.compile compiled it as "
               "it does there, without CUDA graphs")


def asked(settings: Mapping[str, Any]) -> bool:
    """Whether a capture with Inductor ``settings`` compiles with ``triton.cudagraphs``."""
    return bool(settings.get(KEY, inductor_config.get(KEY)))


@dataclass
class Partition:
    """A scheduler partition with its nodes' origins named as the post-grad stage names them."""

    nodes: list[str]
    cudagraphable: bool
    function: str | None
    reasons: dict[str, str]
    origins: dict[str, str | None]


def named(records: list[PartitionRecord], name_of: Callable[[Any], str]) -> list[Partition]:
    return [Partition(r.nodes, r.cudagraphable, r.function, dict(r.reasons),
                      {n: (name_of(o) if o is not None else None) for n, o in r.origins.items()}) for r in records]


@dataclass
class RawCudaGraphs:
    """One inner compile's CUDA graph records, kept on its ``InnerRecord`` until its graph is assembled."""

    state: GraphCudaGraphs  # the tree's events and run-time skip land here while the capture's call runs
    partitions: list[Partition] | None = None  # the top-level graph's, when the scheduler partitioned it
    compiled: cudagraph_compile.CompiledState | None = None
    cause: str | None = None  # the post-grad node Inductor's reason points at


def after_compile(raw: RawCudaGraphs, compiled_fn: Any, post_grad_module: Any) -> None:
    """What Inductor decided for the graph it just compiled; a graph with no CUDA code runs where it does."""
    raw.compiled = cudagraph_compile.state_of(compiled_fn)
    if raw.compiled is None:
        return
    if raw.compiled.reason:
        raw.cause = cudagraph_compile.cause_node(post_grad_module, raw.compiled.reason)
    types = raw.compiled.device_types
    if types and "cuda" not in types:
        raw.state.device = types[0]


def build(graph: Any, raw: RawCudaGraphs, user_inputs: dict[str, int]) -> GraphCudaGraphs:
    """``graph.cudagraphs``: ``raw.state`` completed from the partitions and Inductor's decision (a served
    graph's from the store's copy, its events from this capture's run)."""
    state, stored = raw.state, graph.cudagraphs
    state.user_inputs = user_inputs
    if stored is not None:  # served warm: the compile's decisions as the store kept them
        state.partitions, state.notes = stored.partitions, stored.notes
        state.skip = state.skip or stored.skip
    else:
        wrapped = raw.compiled is not None and raw.compiled.wrapped
        state.partitions = _partitions(graph, raw.partitions, wrapped)
        compile_skip = _compile_skip(graph, raw, wrapped)
        state.skip = compile_skip or state.skip
        if raw.compiled is None and state.device.startswith("cuda"):
            state.notes.append("Inductor's compiled graph said nothing of CUDA graphs (an output this version "
                               "does not read): its partitions are shown as the scheduler made them")
    link_skip(state, graph)
    state.graph = graph
    return state


def _launches(graph: Any, kernels: list[str] | None, inside: tuple[int, int] | None,
              outside: list[tuple[int, int]]) -> list[str]:
    """Kernel launches in wrapper order: those of ``kernels`` (None: any kernel), at lines ``inside`` a span
    (a partition function's) or, without one, outside every span in ``outside``."""
    calls = []
    for kernel in graph.kernels:
        if kernels is not None and kernel.id not in kernels:
            continue
        for line in kernel.call_lines:
            within = inside[0] <= line <= inside[1] if inside else not any(a <= line <= b for a, b in outside)
            if within:
                calls.append((line, kernel.id))
    return [kernel for _, kernel in sorted(calls)]


def _partitions(graph: Any, partitions: list[Partition] | None, wrapped: bool) -> list[CudaGraphPartition]:
    groups = {g.name: g for g in graph.fused}
    nodes = {n.name: n for n in graph.post_grad.nodes}
    functions = partition_functions(graph.wrapper.source)
    if not partitions:
        launches = _launches(graph, None, None, [])
        return [CudaGraphPartition(index=0, captured=wrapped, function="call" if wrapped else None,
                                   nodes=[g.name for g in graph.fused],
                                   kernels=list(dict.fromkeys(launches + [k.id for k in graph.kernels])),
                                   launches=launches,
                                   post_grad_nodes=[n.name for n in graph.post_grad.nodes if n.op == "call_function"])]
    out = []
    for index, partition in enumerate(partitions):
        grouped = list(dict.fromkeys(k for n in partition.nodes if n in groups for k in groups[n].kernels))
        span = functions.get(partition.function or "")
        # a partition function launches what its body calls, whatever fusion named it; an inline partition
        # its own groups' kernels, at lines outside every partition function
        launches = _launches(graph, None, span, []) if span else _launches(graph, grouped, None,
                                                                              list(functions.values()))
        kernels = list(dict.fromkeys(launches + grouped))
        post_grad = list(dict.fromkeys(o for n in partition.nodes if n in groups for o in groups[n].origins))
        reasons = []
        for name, reason in partition.reasons.items():
            group = groups.get(name)
            origin = partition.origins.get(name) or (group.origins[0] if group is not None and group.origins else None)
            node = nodes.get(origin) if origin else None
            reasons.append(PartitionReason(node=name, reason=reason, op=node.target if node is not None else "",
                                           post_grad=origin or "",
                                           kernels=tuple(group.kernels) if group is not None else (),
                                           line=_line_of(node, nodes)))
        out.append(CudaGraphPartition(index=index, captured=partition.cudagraphable and wrapped,
                                      function=partition.function, nodes=list(partition.nodes), kernels=kernels,
                                      launches=launches, post_grad_nodes=post_grad, reasons=reasons))
    return out


def _line_of(node: Any, nodes: dict[str, Any]) -> tuple[str, int] | None:
    """The node's line; for a node a pass made (no stack: the CPU scalars Inductor gathers with ``cat`` and
    moves to the GPU), the line of the nearest node that reads its value, breadth first."""
    pending, seen = [node], set()
    while pending:
        current = pending.pop(0)
        if current is None or current.name in seen:
            continue
        if current.user_line is not None:
            return current.user_line
        seen.add(current.name)
        pending += [nodes.get(name) for name in current.users]
    return None


def _compile_skip(graph: Any, raw: RawCudaGraphs, wrapped: bool) -> CudaGraphSkip | None:
    """The skip Inductor decided while compiling; None when it wrapped the graph, or when the partitions
    already say why none is captured (with graph partitions Inductor skips no graph for a CPU op)."""
    if wrapped or raw.compiled is None or not raw.state.device.startswith("cuda"):
        return None
    reason = raw.compiled.reason
    if reason is None:
        recordable = raw.partitions is None or any(p.cudagraphable for p in raw.partitions)
        if graph.kind == "backward" and recordable:
            return CudaGraphSkip(kind=SkipKind.FORWARD_SKIPPED, message="its forward graph runs without CUDA graphs, "
                                 "and Inductor turns them off for both")
        return None
    return CudaGraphSkip(kind=skip_kind(reason), message=skip_message(reason), when="compile", node=raw.cause)


def partition_functions(wrapper: str) -> dict[str, tuple[int, int]]:
    """``partition_N`` -> the first and last line of its definition in the wrapper."""
    try:
        tree = ast.parse(wrapper)
    except SyntaxError:
        return {}
    return {stmt.name: (stmt.lineno, stmt.end_lineno or stmt.lineno) for stmt in tree.body
            if isinstance(stmt, ast.FunctionDef) and stmt.name.startswith("partition_")}


def user_inputs(placeholders: list[str], graph_inputs: list[Any], passed: list[Any]) -> dict[str, int]:
    """post-grad placeholder -> position among ``passed`` (the tensors the user passed, flattened) of the
    tensor it receives; ``graph_inputs``: what Dynamo handed the backend, in the placeholders' order."""
    if len(placeholders) != len(graph_inputs):
        return {}
    out = {}
    for name, value in zip(placeholders, graph_inputs):
        position = next((i for i, given in enumerate(passed) if given is value), None)
        if position is not None:
            out[name] = position
    return out


def no_gpu_note(graphs: list[Any], function: str) -> str | None:
    """The compilation's note when CUDA graphs were asked for and some graphs run on the CPU."""
    cpu = [g for g in graphs if g.cudagraphs is not None and not g.cudagraphs.device.startswith("cuda")]
    if not cpu:
        return None
    names = ", ".join(g.id for g in cpu)
    return NO_GPU_NOTE.format(graphs=f"graph{'s' if len(cpu) > 1 else ''} {names}", function=function,
                              device=cpu[0].cudagraphs.device)
