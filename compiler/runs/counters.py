"""``c.counters()``: hardware counters of GPU kernels, Triton and extern alike, taken by Nsight Compute
in a worker process.

``ncu`` must launch the process it measures, so the kernels run in ``compiler/runs/counters_worker.py``
(a fresh interpreter) under ``ncu --set full --import-source yes``: each job item once on inputs of its
real shapes. A Triton kernel is one launch. An extern kernel is its wrapper call re-run (a cuBLAS
matmul, a cuDNN convolution, an attention), which may launch several device kernels: all of them are
measured and combined (``model/counters.combine``), their names listed.

Which launches are profiled, and whose each one is, is told by NVTX. The worker wraps each item's
profiled call in an NVTX push/pop range ``inductor_explorer_item_<i>`` (default domain, plain word
characters: ``/``, ``@``, ``[`` and ``]`` are the filter syntax's own). ``--nvtx --nvtx-include
regex:inductor_explorer_item_.*/`` (``regex:`` matches range names by regular expression, the trailing
``/`` selects push/pop ranges; ``]`` would ask for the range on top of the stack and drop a launch made
inside a range a library pushed within ours) profiles every kernel launched inside one of them and
nothing else, whatever the kernel's name: a kernel-name filter (``-k regex:triton``) would miss
cuBLAS's ``nvjet``/``sm90_xmma`` kernels. Reading the raw page again with ``--print-nvtx-rename
kernel`` names each launch by its innermost push/pop range, so the parent knows which item launched it
even when one extern call launched three kernels and the next none (a launch renamed after a library's
own range is placed by its neighbours: ``ncu_report.launches_by_item``). ``--profile-from-start off``
with ``cudaProfilerStart/Stop`` around the same calls keeps ncu idle while the worker imports torch,
compiles and warms up. (Range replay, ``--replay-mode range``, would measure a call as one workload,
but it names none of the device kernels in it and limits which CUDA API calls a range may make.)

The report is then read back through ncu's own CSV exports (``ncu_report.py``): the raw page for the
kernel figures, and per Triton launch the source page for the figures of each line of the kernel's
source. Lines roll up to post-grad nodes, FX nodes and user lines through the trace's provenance; an
extern kernel's samples go whole to its nodes (``model/counters.roll_up``).

Only the kernels' sources and the wrapper are needed, not the live compiled function: a compilation
loaded from a trace on a machine with a GPU and Nsight Compute can be measured too.
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
from ..model.counters import CountersReport, KernelCounters, combine, roll_up
from ..model.errors import CountersUnavailable
from . import ncu_report
from ..model.child_env import worker_env
from .counters_job import RANGE_PREFIX, plan

NCU_ENV = "INDUCTOR_EXPLORER_NCU"  # the ncu executable to use, when it is not on PATH
NCU_OPTIONS = ["--clock-control", "none", "--set", "full", "--import-source", "yes", "--profile-from-start", "off",
               "--nvtx", "--nvtx-include", f"regex:{RANGE_PREFIX}.*/"]
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


def _unavailable_from(output: str, code: int) -> CountersUnavailable:
    if _PERMISSION in output:
        return CountersUnavailable(
            "the driver refused access to the GPU's performance counters (ERR_NVGPUCTRPERM): run as an "
            "administrator, or let every user read them (NVreg_RestrictProfilingToAdminUsers=0, see "
            "https://developer.nvidia.com/ERR_NVGPUCTRPERM); kernel times without counters: c.profile()")
    tail = " | ".join(line for line in output.strip().splitlines()[-6:] if line.strip())
    return CountersUnavailable(f"ncu exited with code {code} before measuring every kernel: {tail}")


def _profile(ncu: str, job: list[dict[str, Any]], tmp: Path, task: Any,
             timeout_s: float) -> tuple[Path | None, list[dict]]:
    """Run the worker under ncu; returns the report path (None: ncu profiled no launch, so wrote no
    report) and the worker's per-kernel outcome."""
    (tmp / "job.json").write_text(json.dumps({"kernels": job}))
    result_path = tmp / "result.json"
    command = [ncu, *NCU_OPTIONS, "-f", "-o", str(tmp / "counters"), sys.executable, "-m",
               "compiler.runs.counters_worker", str(tmp / "job.json"), str(result_path)]
    process = subprocess.Popen(command, env=worker_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
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
    if not result_path.exists() or _PERMISSION in text or (code and not report.exists()):
        raise _unavailable_from(text, code)
    result = json.loads(result_path.read_text())
    if not result.get("ok"):
        raise CountersUnavailable(f"the counters worker failed: {result.get('error')}")
    return (report if report.exists() else None), result["kernels"]


def _export(ncu: str, report: Path, *args: str) -> str:
    done = subprocess.run([ncu, "-i", str(report), *args], capture_output=True, text=True)
    if done.returncode:
        raise CountersUnavailable(f"ncu could not read its report ({' '.join(args)}): {done.stderr.strip()[-500:]}")
    return done.stdout


def _tool(ncu: str) -> str:
    done = subprocess.run([ncu, "--version"], capture_output=True, text=True)
    return ncu_report.tool_version(done.stdout)


def _launches_by_item(ncu: str, report: Path | None, job: list[dict[str, Any]]) -> tuple[list[dict], list[list[int]]]:
    """The raw page's launches, and for each job item the positions of the launches made inside its range."""
    if report is None:
        return [], [[] for _ in job]
    rows = ncu_report.raw_rows(_export(ncu, report, "--page", "raw", "--csv", "--print-units", "base"))
    renamed = ncu_report.raw_rows(_export(ncu, report, "--page", "raw", "--csv", "--print-units", "base",
                                          "--print-nvtx-rename", "kernel"))
    if len(renamed) != len(rows):
        raise CountersUnavailable(f"ncu's raw page has {len(rows)} launches, renamed by NVTX range {len(renamed)}")
    named = [i if i is not None and 0 <= i < len(job) else None for i in ncu_report.range_items(renamed, RANGE_PREFIX)]
    if rows and not any(i is not None for i in named):
        raise CountersUnavailable(
            f"no launch ncu profiled is named by the worker's NVTX ranges ({RANGE_PREFIX}<i>) in its raw page read "
            "with `--print-nvtx-rename kernel`: this ncu did not filter or name launches by NVTX range as documented")
    try:
        return rows, ncu_report.launches_by_item(named, len(job), {i for i, item in enumerate(job)
                                                                   if item["kind"] == "extern"})
    except ValueError as error:
        raise CountersUnavailable(f"ncu's launches cannot be told apart by NVTX range: {error}; measure these "
                                  "kernels one at a time (c.counters(kernels=[...]))") from None


def _read(ncu: str, report_path: Path | None, chosen: list[Any], job: list[dict[str, Any]],
          outcomes: list[dict[str, Any]]) -> tuple[list[KernelCounters], dict[str, str]]:
    """Each measured kernel's counters, in job order, and why the others have none."""
    rows, by_item = _launches_by_item(ncu, report_path, job)
    failed: dict[int, str] = {}  # item -> why it has no counters
    triton: dict[int, int] = {}  # item -> its launch's position in the report
    for index, (kernel, item, outcome) in enumerate(zip(chosen, job, outcomes)):
        launches = by_item[index]
        if not outcome.get("ok"):
            failed[index] = outcome.get("error", "failed")
        elif not launches:
            failed[index] = (f"{item['call']['function']} launched no GPU kernel here, so Nsight Compute had "
                             "nothing to measure" if item["kind"] == "extern" else "ncu profiled no launch of it")
        elif item["kind"] == "triton":  # its own launch: the only one in its range, else the one of its name
            own = launches if len(launches) == 1 else [
                p for p in launches if rows[p].get("Kernel Name", ("", ""))[0] == kernel.name]
            if len(own) != 1:
                failed[index] = f"ncu profiled {len(own)} launches named {kernel.name} in its range, not one"
            else:
                triton[index] = own[0]

    def source_page(position: int) -> str:
        assert report_path is not None  # a launch was profiled, so ncu wrote a report
        return _export(ncu, report_path, "--page", "source", "--csv", "--print-source", "cuda,sass",
                       "--launch-skip", str(position), "--launch-count", "1")

    with ThreadPoolExecutor(_EXPORTS_AT_ONCE) as pool:
        pages = dict(zip(triton, pool.map(source_page, triton.values())))
    counters: list[KernelCounters] = []
    for index, (kernel, outcome) in enumerate(zip(chosen, outcomes)):
        if index in failed:
            continue
        graph = kernel.graph.id if kernel.graph else None
        if index in triton:
            lines_above = outcome.get("lines_above")  # None: the source was not found in the file (matched by text)
            counters.append(ncu_report.kernel_counters(rows[triton[index]], pages[index], kernel.id, graph,
                                                       outcome.get("file") if lines_above is not None else None,
                                                       kernel.source, kernel.language, lines_above or 0))
        else:
            launches = [ncu_report.kernel_counters(rows[p], None, kernel.id, graph, language="extern")
                        for p in by_item[index]]
            counters.append(combine(launches, kernel.id, graph))
    return counters, {chosen[index].id: why for index, why in failed.items()}


@slots.counters.fill
def measure_counters(c: Any, kernels: Any = None, top: int = 10, timeout_s: float = 900.0) -> CountersReport:
    if c.device != "cuda":
        raise CountersUnavailable(f"hardware counters measure GPU kernels; {c.function} was compiled for {c.device}. "
                                  "Compile on a CUDA device (inputs on 'cuda'), or time CPU kernels with c.profile()")
    ncu = find_ncu()
    selected = plan(c, kernels, top)
    started = time.perf_counter()
    with progress.task(f"counters {c.function}") as task, tempfile.TemporaryDirectory(prefix="ncu-") as name:
        counters: list[KernelCounters] = []
        failed: dict[str, str] = {}
        if selected.job:
            task.step("profiling", 0, len(selected.job))
            report_path, outcomes = _profile(ncu, selected.job, Path(name), task, timeout_s)
            task.step("reading the report")
            by_id = {o["id"]: o for o in outcomes}
            counters, failed = _read(ncu, report_path, selected.kernels, selected.job,
                                     [by_id.get(item["id"], {"ok": False, "error": "the worker did not reach it"})
                                      for item in selected.job])
        report = CountersReport(
            kernels=counters, failed={**selected.skipped, **failed}, device=counters[0].device if counters else "",
            tool=_tool(ncu), command="ncu " + " ".join(NCU_OPTIONS),
            created=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            wall_s=time.perf_counter() - started)
        return roll_up(report, c.graphs)
