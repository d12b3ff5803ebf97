"""c.check_determinism(runs): run the compiled function N times and compare outputs bit for bit."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch

from ..model import slots
from . import replay
from .replay import flat_tensors


@dataclass
class DeterminismReport:
    runs: int
    bitwise_equal: bool
    max_abs_diff: float
    deterministic_mode: bool
    autotuned_kernels: list[str] = field(default_factory=list)  # kernels that benchmarked several configs

    def __repr__(self) -> str:
        verdict = "bitwise equal" if self.bitwise_equal else f"NOT equal (max abs diff {self.max_abs_diff:.3g})"
        mode = "on" if self.deterministic_mode else "off"
        return (f"DeterminismReport({self.runs} runs: {verdict}; deterministic mode {mode}; "
                f"{len(self.autotuned_kernels)} kernels autotuned)")


def _tensors(value: Any) -> list[torch.Tensor]:
    return [t.detach().clone() for t in flat_tensors(value)]


@slots.check_determinism.fill
def check(c: Any, runs: int = 5) -> DeterminismReport:
    if runs < 2:
        raise ValueError("check_determinism needs runs >= 2")
    replay.check_runnable(c, "check_determinism()")
    run = replay.runner(c)  # as captured: the capture's grad mode, its backward too
    reference = _tensors(run())
    equal, worst = True, 0.0
    for _ in range(runs - 1):
        for a, b in zip(reference, _tensors(run())):
            if not torch.equal(a, b):
                equal = False
                if a.is_floating_point():
                    worst = max(worst, float((a.double() - b.double()).abs().max()))
    autotuned = [k.id for g in c.graphs for k in g.kernels if (k.meta.get("configs_tried") or 0) > 1]
    deterministic = bool(c.toggles.get("deterministic") or c.inductor_overrides.get("deterministic"))
    return DeterminismReport(runs, equal, worst, deterministic, autotuned)
