"""Re-record tests/fixtures/torch_trace_nccl/: examples/two_ranks.py with NCCL, one GPU per rank.

    PYTHONPATH=. python -m tests.record_trace_fixtures      # on a machine with 2 GPUs

The job runs under torchrun with TORCH_TRACE and Inductor's provenance on (``explorer.trace_env``)
and NVLink multicast off (NCCL_NVLS_ENABLE=0, TORCH_SYMM_MEM_DISABLE_MULTICAST=1,
NVSHMEM_DISABLE_NVLS=1: ``two_ranks.launch`` sets them). Each rank's log is copied as
``dedicated_log_torch_trace_rank_<N>.log`` (torch adds a random suffix, tests/record_paths.py makes
the machine's paths neutral), beside a README that records the command, torch version and GPUs. tests/unit/test_trace_fixtures.py reads them on CPU.
"""

from __future__ import annotations

import importlib.util
import shutil
import sys
import tempfile
from pathlib import Path

import torch

from tests.record_paths import neutralize_file

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = Path(__file__).parent / "fixtures" / "torch_trace_nccl"


def main() -> None:
    if torch.cuda.device_count() < 2:
        raise SystemExit(f"needs 2 GPUs, this machine has {torch.cuda.device_count()}")
    spec = importlib.util.spec_from_file_location("two_ranks", ROOT / "examples" / "two_ranks.py")
    job = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(job)
    with tempfile.TemporaryDirectory() as tmp:
        result = job.launch(tmp, backend="nccl")
        print(result.stdout[-2000:])
        if result.returncode != 0:
            print(result.stderr[-6000:], file=sys.stderr)
            raise SystemExit(f"the torchrun job failed (exit {result.returncode})")
        logs = sorted(Path(tmp).glob("*.log"))
        if len(logs) != 2:
            raise SystemExit(f"expected one log per rank, found {[p.name for p in logs]}")
        shutil.rmtree(FIXTURE, ignore_errors=True)
        FIXTURE.mkdir(parents=True)
        for log in logs:
            rank = log.name.split("rank_", 1)[1].split("_", 1)[0]
            neutralize_file(shutil.copy(log, FIXTURE / f"dedicated_log_torch_trace_rank_{rank}.log"))
    (FIXTURE / "README.md").write_text(
        "TORCH_TRACE logs of `examples/two_ranks.py --backend nccl` on 2 GPUs, recorded by\n"
        "`PYTHONPATH=. python -m tests.record_trace_fixtures` (torchrun, 2 ranks, TORCH_TRACE,\n"
        "INDUCTOR_PROVENANCE=1, NVLink multicast off).\n\n"
        f"- torch {torch.__version__}, CUDA {torch.version.cuda}\n"
        f"- GPUs: {', '.join(torch.cuda.get_device_name(i) for i in range(2))}\n")
    for path in sorted(FIXTURE.iterdir()):
        print(f"{path} ({path.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
