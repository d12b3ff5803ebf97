"""Record the Nsight Compute fixture the counters tests read (run on a CUDA machine with ``ncu``).

    PYTHONPATH=. python -m tests.record_counters_fixture OUT_DIR

Compiles a memory-bound softmax and a compute-bound matmul with a fused bias + GELU epilogue (native
Triton matmul), saves both traces, profiles every Triton kernel of both in one ``ncu --set full
--import-source yes`` run (compiler/runs/counters_worker.py launches each once) and writes ncu's own
CSV exports next to the report: the details page and the source page (``cuda,sass``) per kernel. Then
measures both again through ``c.counters()`` and saves each trace with its counters
(``<name>.counters.json.gz``): what examples/12_counters.ipynb shows on a machine without a GPU.
Every text file written is then passed through tests/record_paths.py (the machine's paths made neutral).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import torch

import explorer
from tests import workloads
from tests.record_paths import neutralize_file

_TEXT_SUFFIXES = (".json", ".py", ".csv", ".txt", ".gz")  # not the .ncu-rep report, a binary


def softmax_gelu(x: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """A row softmax after a bias + GELU: one fused reduction kernel, memory-bound."""
    return torch.softmax(torch.nn.functional.gelu(x + b), dim=-1)


def compilations() -> dict[str, object]:
    torch.manual_seed(0)
    softmax = explorer.compile(softmax_gelu, torch.randn(4096, 1024, device="cuda"), torch.randn(1024, device="cuda"))
    matmul = explorer.compile(workloads.matmul_epilogue, torch.randn(1024, 1024, device="cuda"),
                              torch.randn(1024, 1024, device="cuda"), torch.randn(1024, device="cuda"),
                              config={"native_matmul": True})
    return {"counters_softmax": softmax, "counters_matmul": matmul}


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    jobs = []
    measured = compilations()
    for name, c in measured.items():
        c.save(out / f"{name}.json")
        for k in c.kernels:
            if k.language in ("triton", "template"):
                jobs.append({"id": f"{name}:{k.id}", "name": k.name, "source": k.source})
                (out / f"{name}.{k.id}.py").write_text(k.source)
    (out / "job.json").write_text(json.dumps({"kernels": jobs}))
    ncu = shutil.which("ncu") or "ncu"
    report = out / "counters"
    command = [ncu, "--clock-control", "none", "--set", "full", "--import-source", "yes", "--profile-from-start",
               "off", "-k", "regex:triton", "-f", "-o", str(report), sys.executable, "-m",
               "compiler.runs.counters_worker", str(out / "job.json"), str(out / "worker_result.json")]
    print(" ".join(command), flush=True)
    done = subprocess.run(command, capture_output=True, text=True)
    (out / "ncu_stdout.txt").write_text(done.stdout)
    (out / "ncu_stderr.txt").write_text(done.stderr)
    print(done.returncode, done.stdout[-3000:], done.stderr[-3000:], flush=True)
    rep = f"{report}.ncu-rep"
    exports = {"details.csv": ["--page", "details", "--csv"],
               "details_base.csv": ["--page", "details", "--csv", "--print-units", "base"],
               "raw.csv": ["--page", "raw", "--csv", "--print-units", "base"],
               "source_cuda_sass.csv": ["--page", "source", "--csv", "--print-source", "cuda,sass"],
               "source_sass.csv": ["--page", "source", "--csv", "--print-source", "sass"],
               "source_cuda.csv": ["--page", "source", "--csv", "--print-source", "cuda"]}
    for i in range(len(jobs)):
        exports[f"source_cuda_sass.{i}.csv"] = ["--page", "source", "--csv", "--print-source", "cuda,sass",
                                                "--launch-skip", str(i), "--launch-count", "1"]
        exports[f"details_base.{i}.csv"] = ["--page", "details", "--csv", "--print-units", "base",
                                            "--launch-skip", str(i), "--launch-count", "1"]
    for file, args in exports.items():
        done = subprocess.run([ncu, "-i", rep, *args], capture_output=True, text=True)
        (out / file).write_text(done.stdout + (f"\n#STDERR rc={done.returncode}\n{done.stderr}" if done.returncode or done.stderr else ""))
        print(file, done.returncode, len(done.stdout), done.stderr[:300], flush=True)
    for name, c in measured.items():
        c.counters()
        c.save(out / f"{name}.counters.json.gz")
    for path in sorted(out.iterdir()):
        if path.is_file() and path.suffix in _TEXT_SUFFIXES:
            neutralize_file(path)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
