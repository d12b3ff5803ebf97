"""One trial of a fusion report, inside a sweep worker: the program captured as the parent captured it, then one
fused group prevented (``c.fusion_report(workers=N)``, compiler/sweeps/fusion_report.py).

The worker captures the program once per report (its first trial) and measures it once, when the report
measures: each later trial is one compile, as in the parent. The group is found again by its name, which is the
same in every compile of one program. The trial never raises: a refused edit is a row with its reason (as in
the parent), anything else a failed row with the error, and the engine starts a new worker for the next one.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any, Callable

import torch

from ..pipeline.capture import capture
from ..pipeline.what_if import fusion_worth
from . import payload
from .point import worker_device

_ORIGINAL: dict[int, list[Any]] = {}  # hash of the payload -> [the captured program, its measured side or None]


def _original(data: bytes, options: dict[str, Any]) -> list[Any]:
    key = hash(data)
    if key not in _ORIGINAL:
        _ORIGINAL.clear()
        target, ((inputs, kwargs),) = payload.unpack(data, worker_device())
        torch._dynamo.reset()
        with torch.set_grad_enabled(options["grad_enabled"]):
            c = capture(target, *inputs, config=options["config"] or None, backward=options["backward"],
                        dynamic=options["dynamic"], kwargs=kwargs)
        _ORIGINAL[key] = [c, None]
    return _ORIGINAL[key]


def run_trial(data: bytes, point: dict[str, Any], options: dict[str, Any],
              on_stage: Callable[[str], None] | None = None) -> dict[str, Any]:
    """``{"row": {"index", "status", "stage", "error", "worker", "worth": FusionWorth as a dict}, "trace": None}``;
    ``point["config"]["group"]`` names the fused group to prevent."""
    row: dict[str, Any] = {"index": point["index"], "status": "failed", "stage": "compile", "error": None,
                           "worker": options.get("worker", f"pid {os.getpid()}")}
    name = point["config"]["group"]
    try:
        if on_stage is not None:
            on_stage("compile")
        original = _original(data, options)
        c = original[0]
        group = next((f for f in c.graph(options["graph"]).fused if f.name == name), None)
        if group is None:
            raise RuntimeError(f"the worker's compile of the program has no fused group {name}")
        if on_stage is not None:
            on_stage("what_if")
        with torch.set_grad_enabled(options["grad_enabled"]):
            worth, original[1] = fusion_worth(c, group, options["measure"], options["runs"], original[1])
        row.update(status="ok", stage="done", worth=dataclasses.asdict(worth))
    except Exception as exc:  # the trial failed, the report goes on: the row says why
        row["error"] = f"{type(exc).__name__}: {exc}"
    return {"row": row, "trace": None}
