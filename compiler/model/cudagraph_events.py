"""The CUDA graph tree's events, told to the graph whose function each one is (``g.cudagraphs.events``).

The tree names a function by what it records (a compiled graph's ``call`` or one of its ``partition_N``
functions); ``EventRecorder`` finds which graph of a compilation that is, once per function, through a
``place(compiled_fn, model)`` given by the caller (compiler/_torch/cudagraph_tree.py: the model imports
nothing of torch), merges consecutive replays into one event with a count, and turns the tree's skip into
``g.cudagraphs.skip`` with the node and line that caused it (``link_skip``).
"""

from __future__ import annotations

from typing import Any, Callable

from .cudagraphs import CudaGraphEvent, CudaGraphSkip, EventKind, GraphCudaGraphs, SkipKind, skip_kind, skip_message

Place = Callable[[Any, Any], "int | None"]  # (compiled_fn, recorded callable) -> partition N, -1 whole, None: not it

_MERGED = (EventKind.REPLAY, EventKind.EAGER)


def add_event(state: GraphCudaGraphs, event: Any, partition: int | None, run: str) -> None:
    """One event of the tree (``compiler._torch.cudagraph_tree.TreeEvent``) into ``state``."""
    kind = EventKind(event.kind)
    last = state.events[-1] if state.events else None
    if (kind in _MERGED and last is not None and last.kind == kind and last.partition == partition
            and last.cuda_graph == event.cuda_graph and last.run == run):
        last.count += 1
        return
    state.events.append(CudaGraphEvent(kind=kind, partition=partition, cuda_graph=event.cuda_graph,
                                       reason=skip_message(event.reason) if kind == EventKind.SKIP else event.reason,
                                       pool_bytes=event.pool_bytes, run=run))
    if kind == EventKind.SKIP and state.skip is None:
        state.skip = CudaGraphSkip(kind=skip_kind(event.reason), message=skip_message(event.reason), when="run",
                                   inputs=list(event.mutated), partition=partition)


def link_skip(state: GraphCudaGraphs, graph: Any) -> None:
    """Give the skip its node, kernels and line from ``graph``'s post-grad stage, where it names none yet: the
    node that writes into the mutated input (the ``copy_`` back into it), else the node Inductor named."""
    skip = state.skip
    if skip is None or skip.line is not None:
        return
    nodes = {n.name: n for n in graph.post_grad.nodes}
    if skip.node is None and skip.kind == SkipKind.MUTATED_INPUT:
        skip.node = next((found for name in skip.inputs if (found := mutating_node(graph.post_grad.nodes, name))),
                         None)
    node = nodes.get(skip.node) if skip.node else None
    if node is None:
        return
    skip.kernels = list(node.kernels) or [k for n in node.inputs if n in nodes for k in nodes[n].kernels]
    skip.line = node.user_line or next((nodes[n].user_line for n in node.inputs if n in nodes and nodes[n].user_line),
                                       None)


def mutating_node(nodes: list[Any], placeholder: str) -> str | None:
    """The post-grad node that writes into input ``placeholder``: the ``copy_`` into it (how a functional
    graph writes an input back), else its only user (torch's own rule, ``get_mutating_use_stack_trace``)."""
    writers = [n for n in nodes if n.op == "call_function" and n.inputs[:1] == [placeholder]]
    copy = next((n for n in writers if "copy_" in n.target), None)
    if copy is not None:
        return copy.name
    users = [n for n in nodes if placeholder in n.inputs]
    return users[0].name if len(users) == 1 else None


class EventRecorder:
    """A callback for ``cudagraph_tree.observed``: each event goes to the graph whose function it is."""

    def __init__(self, run: str, place: Place) -> None:
        self.run = run  # what the explorer is running: "capture", "run", "profile", "measure"
        self.place = place
        self.targets: list[tuple[Any, GraphCudaGraphs, Any]] = []  # (compiled_fn, its state, its graph or None)
        self.found: dict[tuple[Any, Any], tuple[int, int | None] | None] = {}  # (device, function) -> target

    def add(self, compiled_fn: Any, state: GraphCudaGraphs, graph: Any = None) -> None:
        """Follow ``compiled_fn``'s functions into ``state``; ``graph``: its GraphCapture, once assembled."""
        self.targets.append((compiled_fn, state, graph))

    def attach(self, state: GraphCudaGraphs, graph: Any) -> None:
        """``state``'s graph is assembled: skips the tree decides from now on get their node and line at once."""
        self.targets = [(fn, own, graph if own is state else owner) for fn, own, owner in self.targets]

    def __call__(self, event: Any) -> None:
        if event.function is None or event.model is None:
            return  # logged while Inductor compiled: the compiled graph's own state says it
        key = (event.device, event.function)
        if key not in self.found:
            self.found[key] = self._find(event.model)
        found = self.found[key]
        if found is None:
            return
        index, place = found
        _, state, graph = self.targets[index]
        add_event(state, event, None if place == -1 else place, self.run)
        if graph is not None:
            link_skip(state, graph)

    def _find(self, model: Any) -> tuple[int, int | None] | None:
        for index, (compiled_fn, _, _) in enumerate(self.targets):
            place = self.place(compiled_fn, model)
            if place is not None:
                return index, place
        return None
