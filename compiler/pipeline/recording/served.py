"""A warm capture's graphs (compiler/pipeline/capture_store.py): a graph Inductor's FX graph cache or
AOTAutograd's cache served instead of compiling has its stages from the store, and its post-grad GraphModule
from Inductor's passes run again when first read (a cache hit skipped them); a graph whose lookup missed is
compiled with every hook firing, assembled, and stored for the next capture."""

from __future__ import annotations

import functools
from typing import Any, Callable

import torch

from ..._torch import post_grad_replay
from ...model import phases
from ...model.stages import GraphCapture
from ..assemble import InnerRecord
from ..assemble_live import assemble
from ..capture_store import lookup_of, rebuilt_post_grad, served_graph
from .compile_time import CompileTimeRecorder
from .cudagraphs import CudaGraphRecorder
from .dynamo import DynamoRecorder
from .state import CaptureState


class ServedGraphs:
    """The store's side of each inner compile; a cold capture (no store) looks nothing up and serves nothing."""

    def __init__(self, state: CaptureState, dynamo: DynamoRecorder, times: CompileTimeRecorder,
                 cudagraphs: CudaGraphRecorder) -> None:
        self.state = state
        self.dynamo = dynamo
        self.times = times
        self.cudagraphs = cudagraphs

    def looking_up(self, dynamo_index: int) -> int:
        """Before an inner compile of Dynamo graph ``dynamo_index``: the store decides for that graph (a
        backward compiles after later graphs); the number of lookups made so far."""
        store = self.state.store
        if store is None:
            return 0
        store.graph = self.dynamo.digests[dynamo_index]
        return len(store.lookups)

    def lookup(self, looked_up: int) -> tuple[str, str] | None:
        """The inner compile's own lookup, (entry, "hit" | "miss"), the first after ``looking_up``."""
        return lookup_of(self.state.store, looked_up)

    def on_inductor_hit(self, record: InnerRecord, inputs: Any, kwargs: dict[str, Any]) -> None:
        """Inductor served this graph from its cache: its stages come from the store, and its post-grad
        GraphModule, when first read, from Inductor's post-grad passes run again (a hit skipped them)."""
        if record.cache_lookup is None or record.cache_lookup[1] != "hit":
            return
        with self.times.spent(phases.READING_STORE):
            record.served = self._stored(record.cache_lookup[0])
            is_inference = bool(kwargs.get("is_inference", record.kind == "inference"))
            record.post_grad_pending = self.times.retraced(functools.partial(
                rebuilt_post_grad, record.post_grad_module, list(inputs), is_inference, dict(self.state.settings)))
            record.post_grad_module = None

    def on_aot_hits(self, looked: int) -> None:
        """Records of the graphs AOTAutograd's cache served through the store's lookups since ``looked`` (an
        inference graph, or a training graph's forward and backward): their stages from the store, their
        post-grad GraphModules traced again, together, when one is first read."""
        store = self.state.store
        assert store is not None
        dynamo_index = len(self.dynamo.modules) - 1
        with self.times.spent(phases.READING_STORE):
            served = [(entry, compiled, self._stored(entry))
                      for entry, state, compiled in store.lookups[looked:] if state == "hit"]
            kinds = [str(stored.get("kind", "inference")) for _, _, stored in served]
            retrace = functools.cache(self.times.retraced(functools.partial(
                post_grad_replay.retraced, self.dynamo.modules[dynamo_index], self.dynamo.inputs[dynamo_index],
                dict(self.state.settings), inference="forward" not in kinds)))
            for position, ((entry, compiled, stored), kind) in enumerate(zip(served, kinds)):
                record = InnerRecord(dynamo_index=dynamo_index, kind=kind,
                                     dynamo_graph_paths=self.dynamo.graph_paths[dynamo_index], compiled_fn=compiled,
                                     cache_lookup=(entry, "hit"), served=stored, cudagraphs=self.cudagraphs.raw())
                record.post_grad_pending = functools.partial(_nth_retraced, retrace, position)
                self.cudagraphs.follow_runs(record)
                self.state.inner.append(record)

    def _stored(self, entry: str) -> dict[str, Any]:
        """A served graph's stored JSON; the notes its cold compile made join this capture's, as made then."""
        store = self.state.store
        assert store is not None
        served, notes = store.stored(entry)
        for note in notes:
            self.state.note(note)
        return served

    def graph(self, index: int, record: InnerRecord, forward: GraphCapture | None) -> GraphCapture:
        """The graph of one inner compile: served from the store on a hit; else assembled from what the
        hooks saw, and stored when a warm capture's lookup missed."""
        module = self.dynamo.modules[record.dynamo_index]
        if record.served is not None:
            with self.times.spent(phases.LOADING_SERVED):
                graph = served_graph(record.served, module, record.post_grad_pending, record.compiled_fn)
            graph.index, graph.kind, graph.dynamo_graph = index, record.kind, record.dynamo_index
            graph.timings = dict(record.timings)
            return graph
        graph = assemble(index, record, module, forward)
        store = self.state.store
        if store is not None and record.cache_lookup is not None:
            store.store(record.cache_lookup[0], graph, record.notes)
            graph.cache = "stored"
        return graph


def _nth_retraced(retrace: Callable[[], list[torch.fx.GraphModule] | None], position: int) -> Any:
    """The ``position``-th post-grad GraphModule of a retrace shared by a training graph's forward and backward."""
    modules = retrace()
    return modules[position] if modules is not None and position < len(modules) else None
