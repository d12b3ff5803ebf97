"""sweep(): every point compiled, profiled, measured and checked in its own worker, gathered into a Sweep.

The points are made and checked here (a typo in a toggle name fails at once), the function and input
sets are packed once (compiler/sweeps/payload.py), and an engine runs the points: local worker
processes by default, Ray tasks with ``engine="ray"`` (or ``address=``). Progress says how many points
are done, which point each worker is running and in which stage, and an estimate of the time left.
An interrupt (Ctrl-C, the notebook's stop button) stops the workers and returns the rows finished so
far, the others marked cancelled.
"""

from __future__ import annotations

import time
import warnings
from typing import Any, Mapping, Sequence

import torch

from ..model import progress
from ..runs.replay import flat_tensors
from . import payload
from .local import KEEP_WORKERS_S
from .points import Point, SweepError, configs_of, input_sets_of, points_of
from .result import Sweep, SweepRow

ENGINES = ("local", "ray")


def _name(target: Any) -> str:
    if isinstance(target, torch.nn.Module):
        return type(target).__name__
    return getattr(target, "__qualname__", None) or getattr(target, "__name__", None) or repr(target)


def _on_gpu(target: Any, input_sets: list[tuple[Any, ...]]) -> bool:
    tensors = [t for s in input_sets for t in flat_tensors(s)]
    if isinstance(target, torch.nn.Module):
        tensors += list(target.parameters())
    return any(t.is_cuda for t in tensors)


def _engine(engine: str, gpu: bool, workers: int | None, address: str | None, keep_workers: float) -> Any:
    if address is not None and engine == "local":
        engine = "ray"
    if engine not in ENGINES:
        raise SweepError(f"unknown engine {engine!r}: use 'local' (worker processes on this machine) or 'ray'")
    if workers is not None and (not isinstance(workers, int) or workers < 1):
        raise SweepError(f"workers must be a positive int (or None for one per GPU / 2 on CPU), got {workers!r}")
    if isinstance(keep_workers, bool) or not isinstance(keep_workers, (int, float)) or not keep_workers >= 0:
        raise SweepError(f"keep_workers is how many seconds local workers wait idle for the next sweep "
                         f"(0: they exit with this one), got {keep_workers!r}")
    if engine == "ray":
        from .ray_engine import RayEngine

        return RayEngine(gpu, workers, address)
    from .local import LocalEngine, slots

    return LocalEngine(slots(gpu, workers), keep_workers=float(keep_workers))


class _Progress:
    """Done/total, what each worker runs now, and the time left from the mean point time so far."""

    def __init__(self, points: list[Point]) -> None:
        self.points = {p.index: p for p in points}
        self.total = len(points)
        self.done = 0
        self.running: dict[str, tuple[int, str]] = {}
        self.started = time.perf_counter()

    def detail(self) -> str:
        now = ", ".join(f"{w}: {self.points[i].label}" + (f" ({stage})" if stage else "")
                        for w, (i, stage) in sorted(self.running.items()))
        left = self.total - self.done
        eta = ""
        if self.done and left:  # elapsed / done is the time per point with the workers running side by side
            eta = f" · about {(time.perf_counter() - self.started) / self.done * left:.0f} s left"
        return now + eta

    def step(self) -> None:
        progress.step("points", self.done, self.total, self.detail())


def sweep(target: Any, *inputs: Any, grid: Mapping[str, Sequence[Any]] | None = None,
          configs: Sequence[Mapping[str, Any]] | None = None, shapes: Sequence[Any] | None = None,
          input_sets: Sequence[Sequence[Any]] | None = None, backward: bool = False, runs: int = 10, warmup: int = 2,
          check: bool = True, engine: str = "local", workers: int | None = None, address: str | None = None,
          threads: int | None = None,
          keep_workers: float = KEEP_WORKERS_S, progress_display: progress.Display | bool | None = None) -> Sweep:
    """Compile ``target(*inputs)`` at every point of a sweep, each in a worker process, and table the results.

    Points are the configurations of ``grid`` (a dict of toggle -> values, crossed) or ``configs`` (a
    list of dicts), on each input set of ``shapes`` (new random tensors like the example inputs) or
    ``input_sets`` (argument tuples). Each point is captured with its toggles, profiled (``runs`` runs
    after ``warmup``), timed as a program calls it (``row.run_ms``: ``runs`` back-to-back calls; CUDA
    events on the GPU; on the CPU with ``threads`` threads, by default as many as this process uses),
    its peak memory measured (GPU) and, with ``check``, its numerics checked against eager. ``engine="local"`` runs one worker per GPU (``workers`` of them when given; 2 on CPU);
    ``engine="ray"`` or ``address=`` runs the points as Ray tasks. Local workers wait ``keep_workers``
    seconds idle for the next sweep, which then starts without importing torch again (0: they exit with
    this sweep; ``explorer.close_sweep_workers()`` stops them). A point that fails (compile error,
    crash, out of memory) is a failed row with its stage and error; the others go on. Points compile in
    the grad mode of the call (``with torch.no_grad(): explorer.sweep(...)`` sweeps inference graphs).
    """
    found = configs_of(grid, configs)
    sets = input_sets_of(inputs, shapes, input_sets)
    points = points_of(found, sets)
    if not isinstance(runs, int) or runs < 1 or not isinstance(warmup, int) or warmup < 0:
        raise SweepError(f"runs must be an int >= 1 and warmup an int >= 0, got runs={runs!r}, warmup={warmup!r}")
    if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int) or threads < 1):
        raise SweepError(f"threads must be an int >= 1 (CPU threads per point), got {threads!r}")
    gpu = _on_gpu(target, sets)
    data = payload.pack(target, sets)
    runner = _engine(engine, gpu, workers, address, keep_workers)
    options = {"backward": backward, "runs": runs, "warmup": warmup, "check": check, "grad_enabled": torch.is_grad_enabled(),
               "threads": threads or torch.get_num_threads()}
    rows = [SweepRow(p.index, dict(p.config), p.input_set, p.shapes) for p in points]
    traces: list[str | None] = [None] * len(points)
    result = Sweep(function=_name(target), device="cuda" if gpu else "cpu", engine=runner.name, rows=rows,
                   traces=traces, options=options, workers=runner.worker_names,
                   created=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
    started = time.perf_counter()
    shown = _Progress(points)
    with progress.task(f"sweep {result.function} ({len(points)} points)", display=progress_display):
        shown.step()
        try:
            for event in runner.run(data, points, options):
                _apply(event, result, shown)
        except KeyboardInterrupt:
            runner.cancel()
            result.cancelled = True
            for row in result.rows:
                if row.status == "pending":
                    row.status, row.stage = "cancelled", "cancelled"
            warnings.warn(f"sweep cancelled: {shown.done} of {len(points)} points finished and are kept", stacklevel=2)
    result.wall_s = round(time.perf_counter() - started, 3)
    return result


def _apply(event: tuple[Any, ...], result: Sweep, shown: _Progress) -> None:
    kind = event[0]
    if kind == "start":
        shown.running[event[1]] = (event[2], "")
    elif kind == "stage":
        shown.running[event[1]] = (event[2], event[3])
    elif kind == "done":
        found = event[2]
        index = found["row"]["index"]
        row = result.rows[index]
        for key, value in found["row"].items():
            if hasattr(row, key) and key not in ("index", "config", "input_set", "shapes"):
                setattr(row, key, value)
        result.traces[index] = found["trace"]
        shown.done += 1
        for worker, (running, _) in list(shown.running.items()):
            if running == index:
                del shown.running[worker]
    shown.step()
