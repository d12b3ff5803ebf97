"""Dynamo's backend in a live capture: each Dynamo graph through AOTAutograd into Inductor's inner compiles,
one ``InnerRecord`` per inner compile (inference, forward or backward), which the later stages' hooks fill
while it runs; and what the joint-graph passes decided before any inner compile (shape padding, pattern
rewrites), kept per Dynamo graph and handed to each of its graphs when they are assembled."""

from __future__ import annotations

import contextlib
from typing import Any, Callable

import torch

from ..._torch import backend as _backend
from ..._torch import fx_graph_cache, inductor_config, timing
from ..._torch.output_code import fresh_provenance_tables
from ..._torch.pattern_rewrites import Source
from ...model import progress
from ..assemble import InnerRecord
from .compile_time import CompileTimeRecorder
from .cudagraphs import CudaGraphRecorder
from .dynamo import DynamoRecorder
from .served import ServedGraphs
from .state import CaptureState


class AotRecorder:
    """From the graph Dynamo hands the backend to the inner compiles Inductor runs for it."""

    def __init__(self, state: CaptureState, dynamo: DynamoRecorder, served: ServedGraphs,
                 cudagraphs: CudaGraphRecorder, times: CompileTimeRecorder) -> None:
        self.state = state
        self.dynamo = dynamo
        self.served = served
        self.cudagraphs = cudagraphs
        self.times = times
        self.pad_decisions: dict[int, list[dict[str, Any]]] = {}  # Dynamo graph -> shape-padding decisions
        self.rewrites: dict[Source, list[Source]] = {}  # node a pattern rewrite made -> the erased nodes' ancestry

    def backend(self, gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Any:
        """Inductor's ``compile_fx`` on a Dynamo graph, under the capture's settings (also for recompiles after
        the capture); a warm capture keeps AOTAutograd's cache on, whose hits compile nothing."""
        state = self.state
        state.enter("aot")
        inner, looked = len(state.inner), len(state.store.lookups) if state.store is not None else 0
        aot_cache = state.store is not None and state.active
        with inductor_config.patched(state.settings), (
                fx_graph_cache.aot_cache_on() if aot_cache else contextlib.nullcontext()):
            compiled = _backend.make_backend(self.times.timed(self.dynamo.on_dynamo_graph),
                                             self.around_inner)(gm, example_inputs)
        if aot_cache and len(state.inner) == inner:  # AOTAutograd's cache served the graph: no inner compile ran
            self.served.on_aot_hits(looked)
        state.stage = "tracing"
        progress.step("run", detail=f"graph {len(state.inner)} compiled; running it (or tracing on after a break)")
        return compiled

    def around_inner(self, dynamo_index: int, compile_inner: Callable[..., Any], gm: Any, inputs: Any,
                     **kwargs: Any) -> Any:
        """One inner compile, recorded: its record is ``state.current`` while Inductor runs it."""
        state = self.state
        if not state.active or dynamo_index < 0:
            return compile_inner(gm, inputs, **kwargs)
        record = InnerRecord(dynamo_index=dynamo_index, kind=_backend.graph_kind(kwargs), post_grad_module=gm,
                             dynamo_graph_paths=self.dynamo.graph_paths[dynamo_index], cudagraphs=self.cudagraphs.raw())
        state.inner.append(record)
        outer, state.current = state.current, record
        previous_stage = state.stage
        state.enter("lowering")
        mark = timing.mark()
        fresh = fresh_provenance_tables() if record.kind == "backward" else contextlib.nullcontext()
        looked_up = self.served.looking_up(dynamo_index)
        notes = len(state.notes)
        try:
            with fresh:
                record.compiled_fn = compile_inner(gm, inputs, **kwargs)
            self.cudagraphs.compiled(record, gm)
            record.cache_lookup = self.served.lookup(looked_up)
            record.notes = state.notes[notes:]
            self.served.on_inductor_hit(record, inputs, kwargs)
        finally:
            state.current = outer
            record.timings = timing.stages(timing.since(mark))
        state.stage = previous_stage
        return record.compiled_fn

    def on_pad_mm(self, decision: dict[str, Any]) -> None:
        """Shape-padding decisions come from the joint-graph passes, before the inner compiles."""
        if self.state.active and self.dynamo.modules:
            self.pad_decisions.setdefault(len(self.dynamo.modules) - 1, []).append(decision)

    def on_rewrite(self, made: list[Source], erased: list[Source]) -> None:
        """Joint-graph rewrites come before the inner compiles: kept for the whole capture."""
        if self.state.active:
            for node in made:
                self.rewrites.setdefault(node, []).extend(erased)
