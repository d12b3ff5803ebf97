"""The Ray engine: the same point function (compiler/sweeps/point.py) as Ray tasks, one GPU each on a GPU
sweep, on whatever cluster ``ray.init`` reaches; each point's row and trace come back as the task's result.

Ray is optional (``pip install "inductor-explorer[ray]"``). With no Ray running, ``ray.init`` starts a
local one (or joins ``address``). The cluster's workers need inductor-explorer importable (installed on
the cluster, or on a shared path): the task adds this process's import path for a local cluster. A task
whose worker dies is one failed row; cancelling cancels the tasks still running or waiting.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Iterator

from .points import Point, SweepError
from .worker_process import import_paths



def _ray() -> Any:
    try:
        import ray
    except ImportError as exc:
        raise SweepError('engine="ray" needs Ray: pip install "inductor-explorer[ray]" (or pip install ray), '
                         'or leave engine="local"') from exc
    return ray


def _task(paths: list[str]) -> Any:
    """The task body, made here so Ray ships it by value: it puts the driver's import path behind the
    worker's own before importing the compiler (so a local cluster needs no install)."""

    def sweep_point(data: bytes, point: dict[str, Any], options: dict[str, Any]) -> dict[str, Any]:
        import socket

        sys.path.extend(p for p in paths if p not in sys.path and os.path.isdir(p))
        from .point import run_point, warm_up_once

        warm_up_once()  # as a local worker does when it starts: the first point's compile_s is its own
        return run_point(data, point, {**options, "worker": f"ray {socket.gethostname()} pid {os.getpid()}"})

    return sweep_point


class RayEngine:
    name = "ray"

    def __init__(self, gpu: bool, workers: int | None, address: str | None) -> None:
        ray = _ray()
        if not ray.is_initialized():
            ray.init(address=address, include_dashboard=False, log_to_driver=False)
        self.ray = ray
        self.gpu = gpu
        resources = ray.cluster_resources()
        capacity = int(resources.get("GPU" if gpu else "CPU", 0))
        if capacity < 1:
            raise SweepError(f"the Ray cluster has no {'GPU' if gpu else 'CPU'} to run a point on ({resources})")
        self.window = workers or capacity
        self.pending: dict[Any, Point] = {}
        self.worker_names = [f"ray ({capacity} {'GPUs' if gpu else 'CPUs'})"]

    def run(self, data: bytes, points: list[Point], options: dict[str, Any]) -> Iterator[tuple[Any, ...]]:
        ray = self.ray
        paths = import_paths()
        task = ray.remote(num_gpus=1 if self.gpu else 0, num_cpus=1, max_retries=0)(_task(paths))
        data_ref = ray.put(data)
        waiting = list(points)
        slots: dict[int, str] = {}  # point index -> the progress line's name for its task ("r0", "r1"...)
        while waiting or self.pending:
            while waiting and len(self.pending) < self.window:
                point = waiting.pop(0)
                ref = task.remote(data_ref, {"index": point.index, "config": point.config,
                                             "input_set": point.input_set}, options)
                self.pending[ref] = point
                slots[point.index] = next(f"r{n}" for n in range(self.window) if f"r{n}" not in slots.values())
                yield ("start", slots[point.index], point.index)
            done, _ = ray.wait(list(self.pending), num_returns=1, timeout=0.2)
            if not done:
                yield ("tick",)
                continue
            point = self.pending.pop(done[0])
            try:
                result = ray.get(done[0])
            except Exception as exc:  # the task's worker died, or Ray could not run it
                result = {"row": {"index": point.index, "status": "failed", "stage": "worker",
                                  "error": f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}",
                                  "worker": "ray"}, "trace": None}
            yield ("done", slots.pop(point.index), result)

    def cancel(self) -> None:
        for ref in list(self.pending):
            self.ray.cancel(ref, force=True)
        self.pending.clear()
