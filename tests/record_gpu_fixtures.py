"""Re-record the GPU traces kept under tests/fixtures/ (run on a CUDA machine).

    PYTHONPATH=. python -m tests.record_gpu_fixtures

Each trace is a real compilation; CPU tests load them to check the Triton views, provenance and
autotune tables without a GPU. Paths of the user's source are kept as recorded.
"""

from __future__ import annotations

from pathlib import Path

import torch

import explorer
from tests import workloads

FIXTURES = Path(__file__).parent / "fixtures"


def recordings() -> dict[str, tuple]:
    torch.manual_seed(0)
    mm_args = (torch.randn(256, 128, device="cuda"), torch.randn(128, 192, device="cuda"),
               torch.randn(192, device="cuda"))
    model = workloads.TinyMLP().cuda()
    block = workloads.TransformerBlock(256, 8).eval().cuda()
    return {
        "gpu_default": (workloads.matmul_epilogue, mm_args, {}, False),
        "gpu_native_matmul": (workloads.matmul_epilogue, mm_args, {"native_matmul": True}, False),
        "gpu_deterministic": (workloads.reduction_with_pointwise, (torch.randn(512, 1024, device="cuda"),),
                              {"deterministic": True}, False),
        "gpu_max_autotune": (workloads.matmul_epilogue, mm_args, {"max_autotune": True}, False),
        "gpu_training": (model, (torch.randn(64, 16, device="cuda"),), {}, True),
        "gpu_profile": (block, (torch.randn(4, 128, 256, device="cuda"),), {}, False),
    }


def _runs(name: str, c) -> None:
    """What each recording runs after compiling, so CPU tests can check the reports too."""
    if name == "gpu_profile":
        c.profile(runs=10)


def main() -> None:
    FIXTURES.mkdir(exist_ok=True)
    for name, (fn, args, config, backward) in recordings().items():
        with torch.set_grad_enabled(backward):
            c = explorer.compile(fn, *args, config=config, backward=backward)
        _runs(name, c)
        path = c.save(FIXTURES / f"{name}.json")
        print(f"{path}: {c!r}")


if __name__ == "__main__":
    main()
