"""Autotuning in a live capture: every choice (a template's config, an extern kernel) or Triton config timed,
kept on the graph it was timed for, counted as progress, and, for ``c.compile_time``, which nodes each
autotuning was for, so its time is charged to them."""

from __future__ import annotations

from ..._torch import compile_events
from ...model import progress
from ...model.stages import AutotuneRecord
from ..assemble import InnerRecord
from ..fx_stage import StageNames
from .compile_time import CompileTimeRecorder
from .state import CaptureState


class AutotuneRecorder:
    """Hears ``on_autotune``; a choice timed outside an inner compile (Triton's heuristics at the first run)
    belongs to the graph compiled last."""

    def __init__(self, state: CaptureState, times: CompileTimeRecorder) -> None:
        self.state = state
        self.times = times
        self.timed = 0  # choices and configs timed so far, shown as progress

    def on_autotune(self, kernel: str, choice: str, time_ms: float, chosen: bool, source: str) -> None:
        state = self.state
        target = state.current or (state.inner[-1] if state.inner else None)
        if target is not None and state.active:
            target.autotune.append(AutotuneRecord(kernel, choice, time_ms, chosen, source))
            if source == "select_algorithm" and self.times.record:
                self._charge(target)
            self.timed += 1
            progress.step("autotuning", done=self.timed, detail=f"{self.timed} choices timed, last for {kernel}")

    def _charge(self, target: InnerRecord) -> None:
        """Which nodes the autotuning reporting now was for, told to the compile's time."""
        graph = next((i for i, record in enumerate(self.state.inner) if record is target), None)
        if graph is None:  # not a graph of this capture's calls: nothing to charge the autotuning to
            return
        names = target.names or (StageNames(target.post_grad_module) if target.post_grad_module is not None else None)
        nodes = tuple(sorted(names.name_of(n) for n in compile_events.autotuned_nodes())) if names else ()
        self.times.charge_autotuning(graph, nodes)
