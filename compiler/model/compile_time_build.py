"""CompileCall events -> a CompileTimeReport (compiler/model/compile_time.py): one builder for a live capture
and for a TORCH_TRACE log, which hold the same chromium events.

The steps, one module each: torch's events nested into spans (``compile_time_events``), spans into the
phase tree (``compile_time_tree``), seconds charged to kernels (``compile_time_kernels``) and to FX nodes,
lines and modules (``compile_time_charges``), recompile costs and suggestions (``compile_time_advice``).
"""

from __future__ import annotations

from typing import Any

from .compile_time import CompileCall, CompileTimeReport
from .compile_time_advice import compile_seconds, recompiles, suggestions
from .compile_time_charges import attribute
from .compile_time_events import KERNEL_BUILDS, kernel_builds_event
from .compile_time_kernels import charge_kernel_builds, charge_kernels
from .compile_time_tree import PhaseBuilder, call_phase

__all__ = ["KERNEL_BUILDS", "build", "kernel_builds_event"]  # the capture and the log import read these two here

_CPP_NOTE = ("C++ kernels of a graph are built together as one module (compile_file): torch times the build "
             "per graph, so it is charged to the graph, not split over its kernels")
_SPREAD_NOTE = ("per-line, per-module and per-node rows: kernel_s is what torch timed for the kernels computing "
                "them; spread_s is their share (by FX node count) of phases torch times per graph or frame")


def build(calls: list[CompileCall], graphs: list[Any], dynamo: Any = None, rank: str | None = None) -> CompileTimeReport:
    """The report of ``calls`` (in order), charging to ``graphs`` (GraphCapture objects, ids g0...)."""
    if not calls:
        raise ValueError("no compile calls recorded: a CompileTimeReport needs the events of at least one call")
    source = "log" if all(c.kind == "log" for c in calls) else "capture"
    origin = min(c.start_ns for c in calls)
    builder = PhaseBuilder(graphs, origin)
    root = builder.phase("compile", 0.0, origin)
    instants: list[dict[str, Any]] = []
    for call in calls:
        node, found = call_phase(builder, call)
        root.children.append(node)
        instants += found
    root.seconds = round(sum(c.seconds for c in root.children), 6)
    by_id = {g.id: g for g in graphs}
    kernel_times = charge_kernels(by_id, root, calls, origin)
    built = charge_kernel_builds(by_id, root, instants, kernel_times, origin)
    frames = {f.compile_id: f for f in getattr(dynamo, "frames", [])}
    lines, modules, nodes = attribute(root, graphs, kernel_times, frames, built)
    notes = [_SPREAD_NOTE]
    if any(k.language == "cpp" for g in graphs for k in g.kernels):
        notes.append(_CPP_NOTE)
    report = CompileTimeReport(source, root, sorted(kernel_times.values(), key=lambda k: -k.seconds), lines, modules,
                               nodes, recompiles(dynamo, compile_seconds(root)), notes=notes, rank=rank)
    report.suggestions = suggestions(report, dynamo, instants)
    return report
