"""One point of a sweep, run inside a worker: capture, time a call, profile, peak memory, numerics, trace.

``run_ms`` is a call as the user's program sees it (back-to-back calls, compiler/runs/call_time.py), on
the CPU with the calling process's thread count unless the sweep sets one, and while no other worker of the
sweep runs (compiler/sweeps/timing_lock.py); ``device_ms`` is the time
in the compiled graphs' kernels per run, from the profile.

The trace leaves each kernel's Triton IR as the capture copied it (SCHEMA.md, "Raw kernel IR"): its
SASS and line maps are built where the point is opened, when a kernel's IR is first read, or when the
sweep is saved. Built here, they cost more than the profile and the numerics together (nvdisasm,
about 0.5 s a kernel) for points most of which nobody opens.

Both engines (local worker processes and Ray tasks) call ``run_point``; it never raises for what the
point did: a failed point is a row with its stage and error (and the partial trace when the compile got
far enough to have one), so the sweep goes on. The worker process is the isolation: a crash or a CUDA
error that poisons the process is seen by the engine, which reports the point and starts a new worker.
"""

from __future__ import annotations

import gc
import json
import os
import time
import traceback
from typing import Any, Callable

import torch

from ..model import progress
from ..pipeline.capture import capture
from ..model.errors import CompileError
from ..runs import replay
from ..runs.call_time import call_ms
from ..io.trace import to_json
from ..pipeline.toggles import ToggleError
from . import payload, timing_lock

_LOADED: dict[int, tuple[Any, list[tuple[Any, ...]]]] = {}  # id(payload bytes) -> unpacked, per worker


def release() -> None:
    """Let go of the last sweep's function, inputs and compiled graphs, and give its GPU memory back, so
    a worker kept idle for a later sweep holds only its CUDA context."""
    _LOADED.clear()
    torch._dynamo.reset()
    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def warm_up() -> None:
    """Initialise the worker's device and Inductor with one tiny compile, before its first point: what
    a process pays once (CUDA context, Triton and the compile workers, Inductor's imports) is then not
    counted in the first point's compile_s, and a worker started ahead of a sweep is ready to compile."""
    device = worker_device()
    if device == "cpu":
        torch.compile(lambda t: torch.relu(t) + 1)(torch.ones(8))
    else:
        # On a GPU also a matmul and a reduction: cuBLAS's handle and workspace, and Triton's first
        # reduction kernel, are set up once per process, so the first point no longer pays for them.
        torch.cuda.init()
        x = torch.ones(64, 64, device=device)
        torch.compile(lambda t: torch.softmax(torch.relu(t) @ t + 1, dim=-1))(x)
        torch.cuda.synchronize()
    torch._dynamo.reset()


_warmed_up = False


def warm_up_once() -> None:
    """``warm_up`` in a process that runs points without having started as a sweep worker (a Ray worker
    runs each point as a task): on its first point only."""
    global _warmed_up
    if not _warmed_up:
        warm_up()
        _warmed_up = True


def worker_device() -> str:
    """The device this worker runs on: its (only visible) GPU, else the CPU."""
    return "cuda:0" if torch.cuda.is_available() else "cpu"


def gpu_label() -> str:
    """Which GPU of the machine this worker is pinned to, as the table shows it ("" on CPU)."""
    if not torch.cuda.is_available():
        return ""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES", "")
    index = visible.split(",")[0] if visible else "0"
    return f"cuda:{index} {torch.cuda.get_device_name(0)}"


def peak_bytes(c: Any) -> int | None:
    """Peak GPU memory of one run (forward, and backward when captured) above what was held before it;
    None on CPU, where the table shows the planned peak instead."""
    if not c.device.startswith("cuda"):
        return None
    run = replay.runner(c)
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    baseline = torch.cuda.memory_allocated()
    outputs = run()
    torch.cuda.synchronize()
    peak = torch.cuda.max_memory_allocated() - baseline
    del outputs
    return int(peak)


def planned_peak(c: Any) -> int | None:
    """The largest planned peak of any graph (g.memory), the same on every device."""
    peaks = [g.memory.peak_bytes for g in c.graphs if g.memory is not None]
    return max(peaks) if peaks else None


def measures(c: Any) -> dict[str, Any]:
    """The row's numbers that come from the compilation itself."""
    prof = c.profiles[-1] if c.profiles else None
    report = c.numerics[-1] if c.numerics else None
    errors = [k.max_rel for k in report.kernels.values() if k.max_rel is not None] if report else []
    compared = report is not None and any(k.ok is not None for k in report.kernels.values())
    return {
        "compile_s": c.timings.get("total"),
        "compile_phases": c.compile_time.categories() if c.compile_calls or c.compile_time_report else {},
        "device_ms": prof.total_ms if prof else None,
        "planned_peak_bytes": planned_peak(c),
        "max_error": max(errors) if errors else None,
        "ok": report.ok if compared else None,  # None: not checked, or no kernel output could be compared
        "kernels": len(c.kernels),
        "graphs": len(c.graphs),
        "graph_breaks": len(c.graph_breaks),
        "recompiles": len(c.recompiles),
    }


def run_point(data: bytes, point: dict[str, Any], options: dict[str, Any],
              on_stage: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Run one point; returns ``{"row": {...}, "trace": JSON text or None}``. ``point`` holds index, config
    and input_set; ``options`` backward, runs, warmup and check."""
    started = time.perf_counter()
    row: dict[str, Any] = {"index": point["index"], "status": "failed", "stage": "load", "error": None,
                           "worker": options.get("worker", f"pid {os.getpid()}"), "gpu": gpu_label()}
    trace = None
    compilation = None
    marks: list[tuple[str, float]] = [("load", started)]

    def enter(stage: str) -> None:
        row["stage"] = stage
        if ":" not in stage:  # "compile: lowering" is inside compile
            marks.append((stage, time.perf_counter()))
        if on_stage is not None:
            on_stage(stage)

    try:
        target, inputs, device = _point_inputs(data, point, options, row)
        torch._dynamo.reset()  # a worker runs many points: none may reuse another's graphs
        # CPU workers time alone: other work waits while one times, and timing waits for work in progress
        # (compiler/sweeps/timing_lock.py)
        with timing_lock.working():
            enter("compile")
            with torch.set_grad_enabled(options.get("grad_enabled", True)):  # the caller's grad mode: Dynamo guards on it
                # cold: a row's compile seconds and stages are the point's own compile, whatever ran before
                compilation = capture(target, *inputs, config=point["config"], backward=options.get("backward", False),
                                      progress_display=_stage_display(enter), cache=False)
        trace = _measured(compilation, options, row, enter, device)
        row.update(measures(compilation), status="ok", stage="done")
    except ToggleError as exc:
        row.update(stage="toggles", error=f"ToggleError: {exc}")
    except CompileError as exc:
        row.update(stage=exc.stage, error=str(exc))
        compilation = exc.partial
    except torch.cuda.OutOfMemoryError as exc:
        row["error"] = f"out of memory: {str(exc).splitlines()[0]}"
    except Exception as exc:  # the point failed, the sweep goes on: the row says where and why
        row["error"] = f"{type(exc).__name__}: {exc}"
        row["traceback"] = traceback.format_exc(limit=-8)
    if row["status"] == "failed" and compilation is not None and trace is None:
        trace = _partial_trace(compilation, row)
    ended = time.perf_counter()
    row["wall_s"] = round(ended - started, 4)
    row["stage_s"] = {stage: round(end - begin, 4) for (stage, begin), (_, end) in zip(marks, marks[1:] + [("", ended)])}
    return {"row": row, "trace": trace}


def _point_inputs(data: bytes, point: dict[str, Any], options: dict[str, Any],
                  row: dict[str, Any]) -> tuple[Any, tuple[Any, ...], str]:
    """The point's function, its input set and this worker's device; the payload is unpacked once per sweep
    (a worker runs many points of one), the CPU threads set as the sweep asked."""
    device = worker_device()
    if device == "cpu" and options.get("threads"):
        torch.set_num_threads(options["threads"])
    row["threads"] = torch.get_num_threads() if device == "cpu" else None
    key = hash(data)
    if key not in _LOADED:
        _LOADED.clear()
        _LOADED[key] = payload.unpack(data, device)
    target, input_sets = _LOADED[key]
    return target, input_sets[point["input_set"]], device


def _measured(compilation: Any, options: dict[str, Any], row: dict[str, Any], enter: Callable[[str], None],
              device: str) -> str:
    """Time, profile, plan and check the compiled point into ``row``, each step entered as its stage; the
    compilation's trace JSON. The timing runs in the worker's timing turn (compiler/sweeps/timing_lock.py)."""
    if timing_lock.shared():
        enter("wait")  # for the timing turn
    with timing_lock.turn() as alone:
        timed_from = time.time()
        enter("time")  # before the profile: once torch.profiler has run in a process, launches cost more
        row["run_ms"] = call_ms(compilation, calls=options.get("runs", 10), warmup=options.get("warmup", 2))
        enter("profile")
        compilation.profile(runs=options.get("runs", 10), warmup=options.get("warmup", 2))
        row["timed"], row["timed_alone"] = [timed_from, time.time()], alone if device == "cpu" else None
    with timing_lock.working():
        enter("memory")
        row["peak_bytes"] = peak_bytes(compilation)
        if options.get("check", True):
            enter("numerics")
            compilation.check_numerics()
        enter("trace")
        return json.dumps(to_json(compilation, packed_parts=True, raw_irs=True))


def _partial_trace(compilation: Any, row: dict[str, Any]) -> str | None:
    """What a failed point compiled before it failed (its graphs are worth opening), when it serializes."""
    try:
        row.update({k: v for k, v in measures(compilation).items() if v is not None and k != "ok"})
        return json.dumps(to_json(compilation, packed_parts=True, raw_irs=True))
    except Exception:
        return None


def _stage_display(enter: Callable[[str], None]) -> Callable[[str], Any]:
    """Compile stages reported as the point's stage ("compile: lowering"), once per change."""
    last = [""]

    def display(step: progress.Step) -> None:
        if step.stage != last[0] and not step.finished:
            last[0] = step.stage
            enter(f"compile: {step.stage}")

    return display
