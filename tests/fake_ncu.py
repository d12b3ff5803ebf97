"""A stand-in for Nsight Compute's ``ncu`` that replays the recorded fixture (tests/fixtures/counters),
so the counters pipeline (launch, NVTX filtering, progress, exports, parsing, combining, roll-up) runs
on a machine without a GPU.

Profiling (``-o REPORT ... python -m compiler.runs.counters_worker JOB RESULT``) does not run the
worker: it answers for it (every item of the job done, as the worker would print and write) and writes
the launches ncu would have profiled as the report. It models what the real run does:

- each item is launched twice, once to warm up outside any NVTX range and once inside the push/pop
  range the item names; only launches inside a push/pop range matching ``--nvtx-include`` are
  profiled (``regex:EXPR/``: the trailing ``/`` selects push/pop ranges, as in ncu's filter syntax;
  without ``--nvtx`` no NVTX filter applies and warm-up launches are profiled too);
- a Triton item launches its kernel once; an extern item launches the device kernels its callee
  launches on a GPU (``EXTERN_LAUNCHES``: a cuBLAS gemm and its split-K reduction for ``mm``...), each
  profiled launch's figures those of a recorded launch (``template``).

Exports (``-i REPORT --page raw|source``) print the recorded CSV rows of the report's launches, named
by their device kernel, or by their NVTX range under ``--print-nvtx-rename kernel``. A source page is
given only for a Triton launch (a library kernel has no source the explorer reads; asking is an
error). ``FAKE_NCU_MODE=denied`` answers like a driver that refuses the performance counters;
``slow`` writes its pid to ``FAKE_NCU_PID`` and hangs after the first item, like a long replay, for a
cancel to stop it; ``no_extern_launch`` makes extern calls launch nothing (a fallback op with no
device kernel).
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import os
import re
import sys
import time
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures" / "counters"
GEMM, REDUCE = 1, 0  # recorded launches standing in for library kernels: the matmul, the softmax reduction
# The device kernels each extern callee launches here: (name, recorded launch whose figures it gets).
EXTERN_LAUNCHES = {
    "extern_kernels.mm": [("nvjet_tst_128x64_64x8_1x2_h_bz_coopA_NNT", GEMM),
                          ("void cublasLt::splitKreduce_kernel<32, 16, int, float, float, float>", REDUCE)],
    "extern_kernels.addmm": [("sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x32_cublas", GEMM)],
    "torch.ops.aten._scaled_dot_product_efficient_attention.default": [
        ("fmha_cutlassF_f32_aligned_64x64_rf_sm80", GEMM)],
}


def _text(name: str) -> str:
    return gzip.decompress((FIXTURES / name).read_bytes()).decode()


def _recorded() -> list[list[str]]:
    return list(csv.reader(io.StringIO(_text("raw.csv.gz"))))


def _recorded_names() -> list[str]:
    rows = _recorded()
    return [row[rows[0].index("Kernel Name")] for row in rows[2:] if row]


def _nvtx_filter(args: list[str]) -> re.Pattern[str] | None:
    """The push/pop range names ``--nvtx-include`` profiles (None: no NVTX filter)."""
    if "--nvtx" not in args or "--nvtx-include" not in args:
        return None
    value = args[args.index("--nvtx-include") + 1]
    if not value.endswith("/"):
        return re.compile(r"(?!)")  # a start/end range filter: the worker opens push/pop ranges only
    value = value[:-1]
    return re.compile(value.removeprefix("regex:") if value.startswith("regex:") else re.escape(value) + "$")


def _launches(item: dict) -> list[dict]:
    """The launches one call of ``item`` makes: device kernel name and the recorded launch it replays."""
    if item.get("kind", "triton") != "extern":
        recorded = _recorded_names()
        return [{"name": item["name"], "template": recorded.index(item["name"]) if item["name"] in recorded else 0,
                 "source": True}]
    if os.environ.get("FAKE_NCU_MODE") == "no_extern_launch":
        return []
    return [{"name": name, "template": template, "source": False}
            for name, template in EXTERN_LAUNCHES.get(item["call"]["function"], [])]


def profile(args: list[str]) -> int:
    if os.environ.get("FAKE_NCU_MODE") == "denied":
        print("==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance "
              "Counters on the target device 0.")
        return 1
    report = args[args.index("-o") + 1]
    at = args.index("compiler.runs.counters_worker")
    job, result = json.loads(Path(args[at + 1]).read_text())["kernels"], Path(args[at + 2])
    wanted = _nvtx_filter(args)
    profiled, outcomes = [], []
    slow = os.environ.get("FAKE_NCU_MODE") == "slow"
    if slow:
        Path(os.environ["FAKE_NCU_PID"]).write_text(str(os.getpid()))
    for item in job:
        for in_range in (None, item.get("range")):  # the warm-up call, then the profiled one
            if wanted is None or (in_range is not None and wanted.search(in_range)):
                profiled += [{**launch, "range": in_range} for launch in _launches(item)]
        print(f"counters-worker: {item['id']} done", flush=True)
        outcomes.append({"id": item["id"], "ok": True, "file": None})
        if slow:
            time.sleep(120)
    if profiled:  # like ncu, no report when nothing was profiled
        Path(f"{report}.ncu-rep").write_text(json.dumps(profiled))
    else:
        print("==WARNING== No kernels were profiled.")
    result.write_text(json.dumps({"ok": True, "kernels": outcomes}))
    return 0


def export(args: list[str]) -> int:
    launches = json.loads(Path(args[args.index("-i") + 1]).read_text())
    if args[args.index("--page") + 1] == "raw":
        rows = _recorded()
        renamed = "--print-nvtx-rename" in args and args[args.index("--print-nvtx-rename") + 1] == "kernel"
        column = rows[0].index("Kernel Name")
        out = io.StringIO()
        writer = csv.writer(out, quoting=csv.QUOTE_ALL)
        writer.writerows(rows[:2])
        for i, launch in enumerate(launches):
            row = list(rows[2 + launch["template"]])
            row[0] = str(i)
            row[column] = launch["range"] if renamed and launch["range"] else launch["name"]
            writer.writerow(row)
        sys.stdout.write(out.getvalue())
        return 0
    launch = launches[int(args[args.index("--launch-skip") + 1])]
    if not launch["source"]:
        sys.stderr.write(f"==ERROR== {launch['name']} is a library kernel: this stand-in has no source page for it\n")
        return 1
    sys.stdout.write(_text(f"src_cuda_sass.{launch['template']}.csv.gz"))
    return 0


def main(args: list[str]) -> int:
    if "--version" in args:
        print("NVIDIA (R) Nsight Compute Command Line Profiler\nVersion 2025.3.1.0 (build 36398880) (public-release)")
        return 0
    return export(args) if "-i" in args else profile(args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
