"""Runs an AOTInductor package once, in its own process and working directory.

A package built to save every kernel's tensors (compiler/_torch/aot_saves.py) writes them under the
working directory and prints each save; running it here keeps the notebook's working directory as it
was, and a package that faults (an illegal memory access, a crash in a kernel) ends this process, not
the notebook. The job is a ``torch.save`` file of ``{"package", "args", "kwargs"}``; with ``args`` None
the package is only loaded (compiler/pipeline/package_check.py asks whether it can be).

    python -m compiler.runs.package_worker JOB.pt FOLDER
"""

from __future__ import annotations

import os
import sys


def main(job_path: str, folder: str) -> None:
    import torch

    from .._torch import aot_compile

    job = torch.load(job_path, weights_only=False)
    loaded = aot_compile.load_package(job["package"])
    if job["args"] is None:  # asked only whether the package loads
        return
    os.chdir(folder)
    with torch.no_grad():
        loaded(*job["args"], **job["kwargs"])
    if torch.cuda.is_available():
        torch.cuda.synchronize()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
