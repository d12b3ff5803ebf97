"""``c.counters()``: hardware counters of Triton kernels, taken by Nsight Compute in a worker process.

``ncu`` must launch the process it measures, so the kernels run in ``compiler/runs/counters_worker.py``
(a fresh interpreter) under ``ncu --set full --import-source yes``: each kernel once on inputs of its
real shapes, one profiled launch per kernel in job order. The report is then read back through ncu's
own CSV exports (``ncu_report.py``): the raw page for the kernel figures, and per launch the source
page for the figures of each line of the kernel's source. Lines roll up to post-grad nodes, FX nodes
and user lines through the trace's provenance (``model/counters.roll_up``).

Only the kernels' sources are needed, not the live compiled function: a compilation loaded from a
trace on a machine with a GPU and Nsight Compute can be measured too.
"""

from __future__ import annotations

import datetime
import glob
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from ..model import progress, slots
from ..model.counters import CountersReport, KernelCounters, roll_up
from ..model.errors import CountersUnavailable
from ..model.formatting import did_you_mean
from . import ncu_report

NCU_ENV = "INDUCTOR_EXPLORER_NCU"  # the ncu executable to use, when it is not on PATH
NCU_OPTIONS = ["--clock-control", "none", "--set", "full", "--import-source", "yes", "--profile-from-start", "off",
               "-k", "regex:triton"]
MEASURED_LANGUAGES = ("triton", "template")
_PERMISSION = "ERR_NVGPUCTRPERM"
_EXPORTS_AT_ONCE = 4


def find_ncu() -> str:
    """The ``ncu`` executable: $INDUCTOR_EXPLORER_NCU, PATH, the CUDA toolkit, or Nsight Compute's own
    install directory."""
    named = os.environ.get(NCU_ENV)
    if named:
        if not (os.path.isfile(named) and os.access(named, os.X_OK)):
            raise CountersUnavailable(f"{NCU_ENV}={named} is not an executable file; point it at Nsight Compute's ncu")
        return named
    cuda_home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH") or "/usr/local/cuda"
    candidates = [shutil.which("ncu"), os.path.join(cuda_home, "bin", "ncu"),
                  *sorted(glob.glob("/opt/nvidia/nsight-compute/*/ncu"), reverse=True)]
    for candidate in candidates:
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    raise CountersUnavailable(
        "Nsight Compute's `ncu` was not found (looked on PATH, in $CUDA_HOME/bin and /opt/nvidia/nsight-compute). "
        f"Install Nsight Compute, or set {NCU_ENV}=/path/to/ncu. Kernel times without counters: c.profile().")


def _triton_kernels(c: Any) -> list[Any]:
    return [k for g in c.graphs for k in g.kernels if k.language in MEASURED_LANGUAGES]


def _by_profile(c: Any, kernels: list[Any]) -> list[Any]:
    """Slowest first by the newest profile (kernels it did not see last); in graph order without one."""
    if not c.profiles:
        return kernels
    profile = c.profiles[-1]

    def ms(k: Any) -> float:
        try:
            return profile.ms(k)
        except KeyError:
            return -1.0

    return sorted(kernels, key=ms, reverse=True)


def select_kernels(c: Any, kernels: Any, top: int) -> list[Any]:
    """The Kernel objects to measure: those named (objects or ids), else the ``top`` slowest."""
    measurable = _triton_kernels(c)
    if kernels is None:
        if not measurable:
            raise CountersUnavailable(f"{c.function} has no Triton kernel to measure (its kernels are "
                                      f"{sorted({k.language for g in c.graphs for k in g.kernels}) or 'none'})")
        return _by_profile(c, measurable)[:max(1, top)]
    if isinstance(kernels, (str, bytes)) or not hasattr(kernels, "__iter__"):
        kernels = [kernels]
    chosen: list[Any] = []
    every = [k for g in c.graphs for k in g.kernels]
    for item in kernels:
        if hasattr(item, "source") and hasattr(item, "language"):
            kernel = item
        else:
            found = [k for k in every if k.id == item or k.name == item]
            if not found:
                raise KeyError(f"no kernel {item!r} in {c.function}{did_you_mean(str(item), [k.id for k in every])}")
            kernel = found[0]
        if kernel.language not in MEASURED_LANGUAGES:
            raise CountersUnavailable(f"kernel {kernel.id} is {kernel.language}: counters measure Triton kernels "
                                      "(the GPU's generated code); time extern calls with c.profile()")
        if kernel not in chosen:
            chosen.append(kernel)
    return chosen


def _job_id(kernel: Any) -> str:
    return f"{kernel.graph.id}/{kernel.id}" if kernel.graph is not None else kernel.id


def _worker_env() -> dict[str, str]:
    package_root = str(Path(__file__).resolve().parents[2])
    return dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")])))


def _unavailable_from(output: str, code: int) -> CountersUnavailable:
    if _PERMISSION in output:
        return CountersUnavailable(
            "the driver refused access to the GPU's performance counters (ERR_NVGPUCTRPERM): run as an "
            "administrator, or let every user read them (NVreg_RestrictProfilingToAdminUsers=0, see "
            "https://developer.nvidia.com/ERR_NVGPUCTRPERM); kernel times without counters: c.profile()")
    tail = " | ".join(line for line in output.strip().splitlines()[-6:] if line.strip())
    return CountersUnavailable(f"ncu exited with code {code} before measuring every kernel: {tail}")


def _profile(ncu: str, job: list[dict[str, Any]], tmp: Path, task: Any, timeout_s: float) -> tuple[Path, list[dict]]:
    """Run the worker under ncu; returns the report path and the worker's per-kernel outcome."""
    (tmp / "job.json").write_text(json.dumps({"kernels": job}))
    result_path = tmp / "result.json"
    command = [ncu, *NCU_OPTIONS, "-f", "-o", str(tmp / "counters"), sys.executable, "-m",
               "compiler.runs.counters_worker", str(tmp / "job.json"), str(result_path)]
    process = subprocess.Popen(command, env=_worker_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               start_new_session=True)
    output: list[str] = []
    timed_out = threading.Event()

    def stop() -> None:
        timed_out.set()
        os.killpg(process.pid, signal.SIGKILL)

    timer = threading.Timer(timeout_s, stop)
    timer.start()
    done = 0
    try:
        assert process.stdout is not None
        for line in process.stdout:
            output.append(line)
            if line.startswith("counters-worker: ") and line.rstrip().endswith(" done"):
                done += 1
                task.step("profiling", done, len(job), line.split(": ", 1)[1].rsplit(" ", 1)[0])
        code = process.wait()
    finally:
        timer.cancel()
        if process.poll() is None:  # cancelled: nothing of ncu or its worker outlives us
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    if timed_out.is_set():
        raise CountersUnavailable(f"ncu did not finish within {timeout_s:.0f} s ({done} of {len(job)} kernels "
                                  "measured); ask for fewer kernels or pass a larger timeout_s")
    text = "".join(output)
    report = tmp / "counters.ncu-rep"
    if not result_path.exists() or not report.exists():
        raise _unavailable_from(text, code)
    result = json.loads(result_path.read_text())
    if not result.get("ok"):
        raise CountersUnavailable(f"the counters worker failed: {result.get('error')}")
    if _PERMISSION in text:
        raise _unavailable_from(text, code)
    return report, result["kernels"]


def _export(ncu: str, report: Path, *args: str) -> str:
    done = subprocess.run([ncu, "-i", str(report), *args], capture_output=True, text=True)
    if done.returncode:
        raise CountersUnavailable(f"ncu could not read its report ({' '.join(args)}): {done.stderr.strip()[-500:]}")
    return done.stdout


def _tool(ncu: str) -> str:
    done = subprocess.run([ncu, "--version"], capture_output=True, text=True)
    return ncu_report.tool_version(done.stdout)


@slots.counters.fill
def measure_counters(c: Any, kernels: Any = None, top: int = 10, timeout_s: float = 900.0) -> CountersReport:
    if c.device != "cuda":
        raise CountersUnavailable(f"hardware counters measure GPU kernels; {c.function} was compiled for {c.device}. "
                                  "Compile on a CUDA device (inputs on 'cuda'), or time CPU kernels with c.profile()")
    ncu = find_ncu()
    chosen = select_kernels(c, kernels, top)
    started = time.perf_counter()
    job = [{"id": _job_id(k), "name": k.name, "source": k.source} for k in chosen]
    by_job = dict(zip((item["id"] for item in job), chosen))
    with progress.task(f"counters {c.function}") as task, tempfile.TemporaryDirectory(prefix="ncu-") as name:
        task.step("profiling", 0, len(job))
        report_path, outcomes = _profile(ncu, job, Path(name), task, timeout_s)
        task.step("reading the report")
        measured = [o for o in outcomes if o.get("ok")]
        rows = ncu_report.raw_rows(_export(ncu, report_path, "--page", "raw", "--csv", "--print-units", "base"))
        if len(rows) != len(measured):
            raise CountersUnavailable(f"ncu profiled {len(rows)} launches for {len(measured)} kernels; a kernel "
                                      "launched more or fewer times than once under the profiler")
        with ThreadPoolExecutor(_EXPORTS_AT_ONCE) as pool:
            pages = list(pool.map(lambda i: _export(ncu, report_path, "--page", "source", "--csv", "--print-source",
                                                    "cuda,sass", "--launch-skip", str(i), "--launch-count", "1"),
                                  range(len(measured))))
        counters: list[KernelCounters] = []
        for outcome, row, page in zip(measured, rows, pages):
            kernel = by_job[outcome["id"]]
            counters.append(ncu_report.kernel_counters(row, page, kernel.id, kernel.graph.id if kernel.graph else None,
                                                       outcome.get("file"), kernel.source))
        failed = {by_job[o["id"]].id: o.get("error", "failed") for o in outcomes if not o.get("ok")}
        report = CountersReport(
            kernels=counters, failed=failed, device=counters[0].device if counters else "", tool=_tool(ncu),
            command="ncu " + " ".join(NCU_OPTIONS),
            created=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            wall_s=time.perf_counter() - started)
        return roll_up(report, c.graphs)
