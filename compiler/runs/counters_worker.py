"""The process Nsight Compute profiles: each Triton kernel once, on inputs of its real shapes.

``ncu`` must launch the process it measures, so this is a fresh interpreter
(``python -m compiler.runs.counters_worker JOB RESULT``), started under ``ncu --profile-from-start off``.
Each kernel is loaded from its captured source (the benchmark harness Inductor writes into it makes
inputs of the real shapes and strides), launched once outside the profiled range (Triton compiles
and autotunes there), then launched once more between ``cudaProfilerStart`` and ``cudaProfilerStop``:
exactly one profiled launch per kernel, in job order. The source is loaded from a file whose text is
the kernel's source, so ncu's source page lines are the kernel's own line numbers.
"""

from __future__ import annotations

import json
import sys
import traceback
from pathlib import Path
from typing import Any

SEED = 1234


def profile_kernels(kernels: list[dict[str, Any]]) -> list[dict[str, Any]]:
    import torch

    from .._torch import runtime

    done: list[dict[str, Any]] = []
    for item in kernels:
        try:
            module = runtime.load_kernel_module(item["source"])
            runtime.rand_strided_seeded(SEED)
            args = module.get_args()
            module.call(args)  # compiles and autotunes: not profiled
            torch.cuda.synchronize()
            torch.cuda.profiler.start()
            try:
                module.call(args)
                torch.cuda.synchronize()
            finally:
                torch.cuda.profiler.stop()
            done.append({"id": item["id"], "ok": True, "file": getattr(module, "__file__", None)})
        except Exception as error:  # one kernel failing leaves the others measurable
            done.append({"id": item["id"], "ok": False, "error": f"{type(error).__name__}: {error}",
                         "traceback": traceback.format_exc(limit=3)})
        print(f"counters-worker: {item['id']} done", flush=True)
    return done


def main(job_path: str, result_path: str) -> None:
    job = json.loads(Path(job_path).read_text())
    try:
        result: dict[str, Any] = {"ok": True, "kernels": profile_kernels(job["kernels"])}
    except BaseException as error:  # report, never leave the parent without an answer
        result = {"ok": False, "error": f"{type(error).__name__}: {error}", "traceback": traceback.format_exc(limit=5)}
    Path(result_path).write_text(json.dumps(result))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
