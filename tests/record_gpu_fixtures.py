"""Re-record the GPU traces kept under tests/fixtures/ (run on a CUDA machine).

    PYTHONPATH=. python -m tests.record_gpu_fixtures

Each trace is a real compilation; CPU tests load them to check the Triton views, provenance, autotune
tables, Triton IR stages (k.ir), the wrapper's FX graph and memory timeline (with the measured peak)
without a GPU. Paths of the user's source are kept as recorded.
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
    block = workloads.TransformerBlock(dim=256).cuda().eval().requires_grad_(False)  # inference
    return {
        "gpu_default": (workloads.matmul_epilogue, mm_args, {}, False),
        "gpu_native_matmul": (workloads.matmul_epilogue, mm_args, {"native_matmul": True}, False),
        "gpu_deterministic": (workloads.reduction_with_pointwise, (torch.randn(512, 1024, device="cuda"),),
                              {"deterministic": True}, False),
        "gpu_max_autotune": (workloads.matmul_epilogue, mm_args, {"max_autotune": True}, False),
        "gpu_training": (model, (torch.randn(64, 16, device="cuda"),), {}, True),
        "gpu_transformer": (block, (torch.randn(8, 128, 256, device="cuda"),), {}, False),
    }


def main() -> None:
    FIXTURES.mkdir(exist_ok=True)
    for name, (fn, args, config, backward) in recordings().items():
        c = explorer.compile(fn, *args, config=config, backward=backward)
        c.measure_memory()  # the measured peak of each graph, next to the plan
        path = c.save(FIXTURES / f"{name}.json")
        print(f"{path}: {c!r}")


if __name__ == "__main__":
    main()
