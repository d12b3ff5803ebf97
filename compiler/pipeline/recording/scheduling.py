"""Lowering and scheduling in a live capture: which FX node's lowering made each Inductor operation, the
scheduler's nodes before fusion (the loop IR) and after (the fused groups), the fusions it refused and the
CUDA graph partitions it made, each kept on the inner compile running now."""

from __future__ import annotations

from typing import Any

from ..._torch import scheduler_ir
from ..._torch.cudagraph_partitions import PartitionRecord
from .. import cudagraph_capture
from ..fx_stage import StageNames
from .state import CaptureState


class SchedulingRecorder:
    """Hears the lowering and scheduler hooks; what lowers or schedules something other than the graph being
    compiled (an autotuning benchmark) is not kept."""

    def __init__(self, state: CaptureState) -> None:
        self.state = state

    def on_operation_lowered(self, module: Any, operation: str, node: Any) -> None:
        """Which FX node's lowering created ``operation`` (of this graph or one of its subgraphs)."""
        names, _ = self._lowering()
        if names is not None and names.path_of(module) is not None:
            self.state.current.lowered_by[operation] = names.name_of(node)

    def on_pre_fusion(self, nodes: list[Any]) -> None:
        names, path = self._lowering()
        if names is None or path is None:
            return
        if not path:
            self.state.enter("scheduling")
        records = scheduler_ir.loop_ir_records(nodes, names.name_of)
        eliminated = scheduler_ir.eliminated_records({r["name"] for r in records}, names.name_of)
        for record in records + eliminated:
            record["subgraph"] = path or None
        self.state.current.loop_ir += records
        self.state.current.eliminated += eliminated

    def on_post_fusion(self, nodes: list[Any]) -> None:
        names, path = self._lowering()
        if names is None or path is None:
            return
        if not path:
            self.state.enter("codegen")
        self.state.current.fused += [scheduler_ir.fused_record(n, names.name_of) for n in nodes]

    def on_fusion_refused(self, name1: str, name2: str, reason: str) -> None:
        if self.state.current is not None:
            self.state.current.refused.append((name1, name2, reason))

    def on_cudagraph_partitions(self, partitions: list[PartitionRecord]) -> None:
        """The scheduler's partitions of the graph itself (a subgraph's stay inside its partition)."""
        names, path = self._lowering()
        current = self.state.current
        if names is not None and path == "" and current is not None and current.cudagraphs is not None:
            current.cudagraphs.partitions = cudagraph_capture.named(partitions, names.name_of)

    def _lowering(self) -> tuple[StageNames | None, str | None]:
        """Names of the graph being compiled, and the path of the subgraph Inductor is scheduling now
        ("" for the graph itself); None for lowerings of something else (autotuning benchmarks)."""
        current = self.state.current
        if current is None or current.post_grad_module is None:
            return None, None
        if current.names is None:
            current.names = StageNames(current.post_grad_module)
        return current.names, current.names.path_of(scheduler_ir.lowered_graph_module())
