"""``c.fusion_report()``: every fusion of a graph prevented in a compile of its own, in this process or in sweep
workers side by side.

By default the trials run in this process, one after another (compiler/pipeline/what_if.py). With ``workers=N``
they run in N local sweep workers (compiler/sweeps/local.py: one per GPU, or N sharing the CPU's cores), each
trial in compiler/sweeps/fusion_trial.py: the program travels once per worker (compiler/sweeps/payload.py),
a worker captures it once and then compiles one trial after another. Progress says how many trials are done
and what each worker runs. A trial that fails, or a worker that dies, is a row with its reason; the others go
on. Workers exit with the report. Times measured side by side share the machine: on a CPU they compete for
its cores, so compare rows of one report, not reports run with different worker counts.
"""

from __future__ import annotations

from typing import Any

from ..model import progress, slots
from ..model.what_if import FusionReport, FusionWorth, WhatIfError, sort_worth
from ..pipeline.what_if import fusion_report_here, fusions
from . import payload
from .local import LocalEngine
from .local import slots as worker_slots
from .points import Point


def _settings(c: Any, graph: int, measure: bool, runs: int) -> dict[str, Any]:
    """What every trial needs beside the program: the capture's settings and the report's."""
    live = c.live
    return {"task": "fusion_trial", "config": {**c.inductor_overrides, **c.toggles}, "backward": c.backward,
            "dynamic": True if c.symbols else False,
            "grad_enabled": live.grad_enabled if live.grad_enabled is not None else True,
            "graph": graph, "measure": measure, "runs": runs}


def worth_of(found: dict[str, Any], group: Any) -> FusionWorth:
    """A trial's row as its worker sent it; a failed trial (or a worker that died) as a row with the reason."""
    if found.get("status") == "ok":
        worth = dict(found["worth"])
        worth["kernels"] = tuple(worth["kernels"])
        return FusionWorth(**worth)
    return FusionWorth(group.name, list(group.origins), (1, 0), None, None, "",
                       f"the trial failed in its worker: {found.get('error') or 'no reason given'}")


def in_workers(c: Any, graph: int | str, measure: bool, runs: int, workers: int) -> FusionReport:
    if c.live is None or c.live.example_inputs is None:
        raise WhatIfError(f"{c.function} was loaded from a file: a fusion report compiles the program again, which "
                          "needs the live function and inputs; compile it with explorer.compile(...)")
    g = c.graph(graph)
    groups = fusions(c, graph)
    data = payload.pack(c.live.target, [(tuple(c.live.example_inputs), dict(c.live.call_kwargs or {}))])
    points = [Point(i, {"group": f.name}, 0) for i, f in enumerate(groups)]
    engine = LocalEngine(worker_slots(c.device.startswith("cuda"), workers), keep_workers=0)
    rows: dict[int, FusionWorth] = {}
    running: dict[str, str] = {}
    try:
        for event in engine.run(data, points, _settings(c, g.index, measure, runs)):
            if event[0] == "start":
                running[event[1]] = groups[event[2]].name
            elif event[0] == "done":
                index = event[2]["row"]["index"]
                rows[index] = worth_of(event[2]["row"], groups[index])
                running.pop(event[1], None)
            progress.step("fusions", len(rows), len(groups), ", ".join(f"{w}: {n}" for w, n in sorted(running.items())))
    except KeyboardInterrupt:
        engine.cancel()
        raise
    return FusionReport(c.function, g.id, sort_worth(list(rows.values())), measure,
                        f"one compile per fusion, in {min(workers, len(groups))} worker processes side by side")


@slots.fusion_report.fill
def fusion_report(c: Any, graph: int | str = 0, measure: bool = True, runs: int = 10,
                  workers: int | None = None) -> FusionReport:
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise WhatIfError(f"workers is how many worker processes run the trials side by side (an int >= 1; None: "
                          f"in this process), got {workers!r}")
    with progress.task(f"fusion report of {c.function}"):
        if workers is None or not fusions(c, graph):  # nothing to compile: no worker to start
            return fusion_report_here(c, graph, measure, runs)
        return in_workers(c, graph, measure, runs, workers)
