"""The program ``explorer.bisect`` runs: eagerly, or compiled as one trial asks (Inductor settings, fused groups
kept apart, timed for ``check="slower"``). The same code runs a trial in the bisecting process and in a sweep
worker (compiler/sweeps/bisect_worker.py), so a trial means the same thing wherever it runs.

Every run is on clones of the inputs under ``torch.manual_seed(seed)``. A compiled run compiles a private copy
of the entry function (its own code object): Dynamo's cache entries of the trial are its own and are dropped
after it, so the process's other compiled functions are never reset.
"""

from __future__ import annotations

import contextlib
import math
import statistics
import time
import types
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import torch

from .._torch import dynamo_codes, fusion_edits, fx_graph_cache, hooks, inductor_config
from ..model.what_if import FusionEdit
from ..pipeline.private_entry import private_entry
from ..runs import replay


@dataclass(frozen=True)
class Timing:
    """How a trial's run time is measured: after ``warmup`` calls, ``loops`` loops of at least ``calls``
    back-to-back calls, each loop lasting at least ``min_loop_ms`` (more calls for a short program: a loop of
    a few milliseconds is moved by one scheduling slice of a busy machine); the run time is the median loop's
    time per call (a stall moves one loop, not the median)."""

    calls: int = 5
    loops: int = 5
    warmup: int = 2
    min_loop_ms: float = 50.0


@dataclass(frozen=True)
class TrialSpec:
    """One trial as plain data, so it can travel to a worker: Inductor settings on top of the current config,
    the fused groups to keep apart, whether torch's bisector state applies, and the timing to take."""

    settings: Mapping[str, Any] = field(default_factory=dict)
    edits: tuple[FusionEdit, ...] = ()
    bisector: bool = False  # run under torch's bisector as it stands (its state travels to a worker)
    timing: Timing | None = None


@dataclass
class TrialOutput:
    """What a trial gave back: the compiled program's outputs and run time, or why it has none (``crash``:
    a compile or run error, a worker that died or ran past the timeout)."""

    outputs: Any = None
    ms: float | None = None
    crash: str = ""


def crash_text(error: BaseException) -> str:
    """An error as one line: its type and the first line of its message."""
    text = str(error).strip()
    return f"{type(error).__name__}: {text.splitlines()[0] if text else ''}"


def combined(edits: Sequence[FusionEdit]) -> Any:
    """One scheduler edit keeping every group of ``edits`` apart."""

    def decide(graph_nodes: frozenset[str], members1: Any, members2: Any) -> str | None:
        answers = [e.decide(graph_nodes, members1, members2) for e in edits]
        return "refuse" if "refuse" in answers else None

    def ends_kernel(graph_nodes: frozenset[str], members: Any) -> bool:
        return any(e.ends_kernel(graph_nodes, members) for e in edits)

    return fusion_edits.fusion_decided(decide, ends_kernel=ends_kernel)


def _timed(call: Callable[[], Any], device: str, timing: Timing) -> float:
    """Milliseconds per call: the median of ``timing.loops`` loops of back-to-back calls."""
    def sync() -> None:
        if device.startswith("cuda"):
            torch.cuda.synchronize()

    def loop(calls: int) -> float:
        began = time.perf_counter()
        for _ in range(calls):
            call()
        sync()
        return (time.perf_counter() - began) * 1e3 / calls

    for _ in range(timing.warmup):
        call()
    sync()
    first = loop(timing.calls)
    calls = max(timing.calls, math.ceil(timing.min_loop_ms / max(first, 1e-6)))
    loops = [first] if calls == timing.calls else []  # the first loop counts when it lasted long enough
    while len(loops) < timing.loops:
        loops.append(loop(calls))
    return statistics.median(loops)


class Program:
    """The user's program, run eagerly or compiled, always on clones of the inputs under one seed."""

    def __init__(self, target: Any, inputs: tuple[Any, ...], kwargs: dict[str, Any], seed: int,
                 config: Mapping[str, Any] | None = None) -> None:
        self.target, self.inputs, self.kwargs, self.seed = target, inputs, kwargs, seed
        self.config = dict(config or {})  # in a worker: the bisecting process's Inductor settings

    @property
    def device(self) -> str:
        tensors = replay.flat_tensors(self.inputs)
        return str(tensors[0].device) if tensors else "cpu"

    def _clones(self) -> list[Any]:
        return [replay.clone_input(x) for x in self.inputs]

    def eager(self) -> Any:
        torch.manual_seed(self.seed)
        return self.target(*self._clones(), **self.kwargs)

    def compiled(self, spec: TrialSpec) -> tuple[Any, float | None]:
        """The compiled program's outputs (first call), and with ``spec.timing`` its milliseconds per call."""
        codes: dict[types.CodeType, bool] = {}
        entry, _ = private_entry(self.target)
        with contextlib.ExitStack() as stack:
            stack.enter_context(dynamo_codes.converted_frames(lambda code, fresh: codes.setdefault(code, fresh)))
            stack.enter_context(dynamo_codes.forgotten_unless_held(codes, set()))
            # a trial's edits are not in the caches' keys: every graph compiled anew (its kernels' builds kept)
            stack.enter_context(inductor_config.patched({**self.config, **fx_graph_cache.graphs_anew(),
                                                         **dict(spec.settings)}))
            stack.enter_context(fx_graph_cache.other_caches_off())
            stack.enter_context(hooks.own_warnings_silenced())
            if spec.edits:
                stack.enter_context(combined(spec.edits))
            torch.manual_seed(self.seed)
            run = torch.compile(entry)
            out = run(*self._clones(), **self.kwargs)
            if spec.timing is None:
                return out, None
            inputs = self._clones()
            return out, _timed(lambda: run(*inputs, **self.kwargs), self.device, spec.timing)
