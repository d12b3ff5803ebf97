"""CUDA graphs over a live capture (``triton.cudagraphs``, ``mode="reduce-overhead"``): each inner compile's
records, kept on its ``InnerRecord`` (compiler/pipeline/cudagraph_capture.py reads them), and the CUDA graph
tree's events while the capture's call runs, which reach each graph's ``g.cudagraphs`` when it is assembled
(a recompile's later events too)."""

from __future__ import annotations

import contextlib
from typing import Any, ContextManager, Mapping

from ..._torch import cudagraph_tree
from ...model.cudagraph_events import EventRecorder
from ...model.cudagraphs import GraphCudaGraphs
from ...model.stages import GraphCapture
from .. import cudagraph_capture
from ..assemble import InnerRecord


class CudaGraphRecorder:
    """Does nothing unless the capture compiles with CUDA graphs (``asked``)."""

    def __init__(self, settings: Mapping[str, Any], device: str) -> None:
        self.asked = cudagraph_capture.asked(settings)
        self.device = device
        self.tree_events = EventRecorder("capture", cudagraph_tree.place)
        self.passed: list[Any] = []  # the tensors the call was given, flattened (g.cudagraphs.user_inputs)

    def observing(self) -> ContextManager[Any]:
        """The CUDA graph tree's events while the capture's hooks are on."""
        return cudagraph_tree.observed(self.tree_events) if self.asked else contextlib.nullcontext()

    def raw(self) -> cudagraph_capture.RawCudaGraphs | None:
        """A new inner compile's empty records."""
        return cudagraph_capture.RawCudaGraphs(GraphCudaGraphs(device=self.device)) if self.asked else None

    def compiled(self, record: InnerRecord, post_grad_module: Any) -> None:
        """What Inductor decided for the graph it just compiled; the tree's events of its runs kept for it."""
        if record.cudagraphs is not None:
            cudagraph_capture.after_compile(record.cudagraphs, record.compiled_fn, post_grad_module)
            self.follow_runs(record)

    def follow_runs(self, record: InnerRecord) -> None:
        """The tree's events of the graph's runs kept for it (a graph compiled, or served by the warm store)."""
        if record.cudagraphs is not None:
            self.tree_events.add(record.compiled_fn, record.cudagraphs.state)

    def build(self, graph: GraphCapture, record: InnerRecord, graph_inputs: list[Any]) -> None:
        """``graph.cudagraphs`` from what the hooks and the tree's events kept; ``graph_inputs``: what Dynamo
        handed the backend for it (none for a backward, whose inputs the forward made)."""
        placeholders = [n.name for n in graph.post_grad.nodes if n.op == "placeholder"]
        graph.cudagraphs = cudagraph_capture.build(graph, record.cudagraphs,
                                                   cudagraph_capture.user_inputs(placeholders, graph_inputs, self.passed))
        self.tree_events.attach(graph.cudagraphs, graph)
