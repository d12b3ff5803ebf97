"""Dynamo's side of a live capture: each graph Dynamo hands the backend, Dynamo's own structured records
(frames, guards, graph breaks, bytecode, recompile reasons), and the code objects it converted.

The graphs are copied as Dynamo made them (Inductor's pre-grad passes rewrite them in place) with their
example inputs, for a warm capture's retrace and ``g.cudagraphs``' user inputs; the converted codes' cache
entries are held with the compilation, so its graphs stay compiled while it lives.
"""

from __future__ import annotations

import types
from pathlib import Path
from typing import Any

import torch

from ..._torch import backend as _backend
from ..._torch import compile_ids, dynamo_codes, structured_trace
from ...model.compilation import Compilation
from ...model.dynamo import DynamoStage
from ...model.stages import GraphCapture
from ..capture_store import graph_digest
from ..dynamo_records import DynamoRecords
from ..fx_stage import StageNames
from .state import CaptureState

# compiler/pipeline: a frame in it is the capture's own (its private entry), never the user's
_PIPELINE_DIR = str(Path(__file__).resolve().parents[1])


class DynamoRecorder:
    """What Dynamo gave one capture, by Dynamo graph: ``modules[i]`` is the i-th graph the backend received."""

    def __init__(self, state: CaptureState) -> None:
        self.state = state
        self.modules: list[torch.fx.GraphModule] = []
        self.inputs: list[list[Any]] = []  # each Dynamo graph's example inputs, for a warm capture's retrace
        self.digests: list[str] = []  # each Dynamo graph's capture_store.graph_digest (warm captures)
        self.graph_paths: list[dict[int, str]] = []  # each graph's fx.Graph ids -> subgraph path
        self.compile_ids: list[str | None] = []  # Dynamo's compile id of each Dynamo graph
        self.records = DynamoRecords(structured_trace.interned_filenames())
        self.codes: dict[types.CodeType, bool] = {}  # code Dynamo converted -> it had no cache entry before
        self.held: set[types.CodeType] = set()  # codes a Compilation holds (dynamo_codes.hold)
        self.entry_code: types.CodeType | None = None  # our private copy of the entry function's code

    def on_dynamo_graph(self, gm: torch.fx.GraphModule, example_inputs: list[Any]) -> int:
        """Keep the graph Dynamo hands the backend; its index, which its inner compiles carry (-1: not ours)."""
        if not self.state.active:
            return -1
        module_copy = _backend.copy_graph_module(gm)
        self.modules.append(module_copy)
        self.inputs.append(list(example_inputs))
        store = self.state.store
        if store is not None:
            self.digests.append(graph_digest(module_copy))
            store.graph = self.digests[-1]
        # from_node provenance names the graphs Inductor saw; the copy's own graph id is added for safety
        self.graph_paths.append({**StageNames(gm).graph_paths, id(module_copy.graph): ""})
        self.compile_ids.append(compile_ids.current())
        return len(self.modules) - 1

    def on_converted_code(self, code: types.CodeType, fresh: bool) -> None:
        """Every frame Dynamo converts runs in this compilation's runs: its cache is held with it."""
        self.codes.setdefault(code, fresh)

    def hold_codes(self, compilation: Compilation) -> None:
        """The compiled frames stay cached while ``compilation`` lives, through torch._dynamo.reset()."""
        new = {code: fresh for code, fresh in self.codes.items() if code not in self.held}
        dynamo_codes.hold(compilation, new, dynamo_codes.private_codes(self.entry_code))
        self.held.update(new)

    def stage(self, graphs: list[GraphCapture]) -> DynamoStage:
        """The Dynamo stage of ``graphs`` from the records kept, graph breaks quoting the user's frames only."""
        by_compile: dict[str, list[str]] = {}
        for graph in graphs:
            by_compile.setdefault(graph.compile_id or "", []).append(graph.id)
        files = {file for g in graphs for stage in (g.fx, g.post_grad) for n in stage.nodes for file, _, _ in n.stack}
        stage = self.records.stage(by_compile, known_files=files)
        for graph_break in stage.graph_breaks:
            graph_break.stack = _from_entry(graph_break.stack)
        return stage


def _from_entry(stack: list[tuple[str, int, str]]) -> list[tuple[str, int, str]]:
    """The user frames from the compiled function inward (the capture's own frames and its callers dropped)."""
    cut = max((i for i, (file, _, _) in enumerate(stack) if file.startswith(_PIPELINE_DIR)), default=-1)
    return stack[cut + 1:]
