"""A stand-in for Nsight Compute's ``ncu`` that replays the recorded fixture (tests/fixtures/counters),
so the counters pipeline (launch, progress, exports, parsing, roll-up) runs on a machine without a GPU.

Profiling (``-o REPORT ... python -m compiler.runs.counters_worker JOB RESULT``) does not run the
worker: it answers for it (every kernel of the job done, as the worker would print and write) and
writes the kernels' names as the report. Exports (``-i REPORT --page raw|source``) print the recorded
CSV of those kernels, by name, in job order. ``FAKE_NCU_MODE=denied`` answers like a driver that
refuses the performance counters; ``FAKE_NCU_MODE=slow`` writes its pid to ``FAKE_NCU_PID`` and hangs
after the first kernel, like a long replay, for a cancel to stop it.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import os
import sys
import time
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures" / "counters"


def _text(name: str) -> str:
    return gzip.decompress((FIXTURES / name).read_bytes()).decode()


def _recorded_names() -> list[str]:
    rows = list(csv.reader(io.StringIO(_text("raw.csv.gz"))))
    return [row[rows[0].index("Kernel Name")] for row in rows[2:] if row]


def profile(args: list[str]) -> int:
    if os.environ.get("FAKE_NCU_MODE") == "denied":
        print("==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance "
              "Counters on the target device 0.")
        return 1
    report = args[args.index("-o") + 1]
    at = args.index("compiler.runs.counters_worker")
    job, result = json.loads(Path(args[at + 1]).read_text())["kernels"], Path(args[at + 2])
    Path(f"{report}.ncu-rep").write_text(json.dumps([item["name"] for item in job]))
    outcomes = []
    slow = os.environ.get("FAKE_NCU_MODE") == "slow"
    if slow:
        Path(os.environ["FAKE_NCU_PID"]).write_text(str(os.getpid()))
    for item in job:
        print(f"counters-worker: {item['id']} done", flush=True)
        outcomes.append({"id": item["id"], "ok": True, "file": None})
        if slow:
            time.sleep(120)
    result.write_text(json.dumps({"ok": True, "kernels": outcomes}))
    return 0


def export(args: list[str]) -> int:
    names = json.loads(Path(args[args.index("-i") + 1]).read_text())
    recorded = _recorded_names()
    if args[args.index("--page") + 1] == "raw":
        rows = list(csv.reader(io.StringIO(_text("raw.csv.gz"))))
        out = io.StringIO()
        writer = csv.writer(out, quoting=csv.QUOTE_ALL)
        writer.writerows(rows[:2] + [rows[2 + recorded.index(name)] for name in names])
        sys.stdout.write(out.getvalue())
        return 0
    launch = int(args[args.index("--launch-skip") + 1])
    sys.stdout.write(_text(f"src_cuda_sass.{recorded.index(names[launch])}.csv.gz"))
    return 0


def main(args: list[str]) -> int:
    if "--version" in args:
        print("NVIDIA (R) Nsight Compute Command Line Profiler\nVersion 2025.3.1.0 (build 36398880) (public-release)")
        return 0
    return export(args) if "-i" in args else profile(args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
