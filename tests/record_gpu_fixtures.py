"""Re-record the GPU traces kept under tests/fixtures/ (run on a CUDA machine).

    PYTHONPATH=. python -m tests.record_gpu_fixtures

Each trace is a real compilation; CPU tests load them to check the Triton views, provenance, autotune
tables, Triton IR stages (k.ir), the wrapper's FX graph and memory timeline (with the measured peak),
the GPU-only Inductor systems (block pointers, combo kernels, shape padding, split scans, device
asserts) and a profile, without a GPU. Paths of the recording machine are made neutral
(tests/record_paths.py: the user's source relative to the repository, ``<site-packages>/...``).

    PYTHONPATH=. python -m tests.record_gpu_fixtures gpu_pad_mm gpu_split_scan   # only these

Triton's IR files are found for the first compile of a process only (docs/guide.md): record
each trace in a process of its own,

    for n in $(PYTHONPATH=. python -m tests.record_gpu_fixtures --list); do
        PYTHONPATH=. python -m tests.record_gpu_fixtures $n; done
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import torch

import explorer
from tests import workloads
from tests.record_paths import neutralize_file

FIXTURES = Path(__file__).parent / "fixtures"


def recordings() -> dict[str, tuple]:
    torch.manual_seed(0)
    mm_args = (torch.randn(256, 128, device="cuda"), torch.randn(128, 192, device="cuda"),
               torch.randn(192, device="cuda"))
    model = workloads.TinyMLP().cuda()
    block = workloads.TransformerBlock(256, 8).cuda().eval().requires_grad_(False)  # inference
    return {
        "gpu_default": (workloads.matmul_epilogue, mm_args, {}, False),
        "gpu_native_matmul": (workloads.matmul_epilogue, mm_args, {"native_matmul": True}, False),
        "gpu_deterministic": (workloads.reduction_with_pointwise, (torch.randn(512, 1024, device="cuda"),),
                              {"deterministic": True}, False),
        "gpu_max_autotune": (workloads.matmul_epilogue, mm_args, {"max_autotune": True}, False),
        "gpu_training": (model, (torch.randn(64, 16, device="cuda"),), {}, True),
        "gpu_profile": (block, (torch.randn(4, 128, 256, device="cuda"),), {}, False),
        # one Inductor system each (tests/capture/test_features.py, examples/10_inductor_features.ipynb)
        "gpu_block_ptr": (workloads.reduction_with_pointwise, (torch.randn(512, 1024, device="cuda"),),
                          {"use_block_ptr": True}, False),
        "gpu_combo_kernels": (workloads.independent_pointwise, tuple(torch.randn(*shape, device="cuda") for shape in
                                                                    ((256, 256), (1024,), (64, 512))),
                              {"combo_kernels": True}, False),
        "gpu_pad_mm": (workloads.matmul, (torch.randn(2048, 2047, device="cuda", dtype=torch.float16),
                                          torch.randn(2047, 2048, device="cuda", dtype=torch.float16)),
                       {"autoheuristic_use": "pad_mm"}, False),
        "gpu_split_scan": (workloads.running_sum, (torch.randn(1 << 20, device="cuda"),), {}, False),
        "gpu_bound_check": (workloads.embedding_lookup, (torch.randint(0, 512, (256,), device="cuda"),
                                                         torch.randn(512, 64, device="cuda")), {}, False),
        "gpu_transformer": (block, (torch.randn(8, 128, 256, device="cuda"),), {}, False),
    }


def _runs(name: str, c) -> None:
    """What each recording runs after compiling, so CPU tests can check the reports too."""
    if name == "gpu_profile":
        c.profile(runs=10)


def main(only: list[str]) -> None:
    FIXTURES.mkdir(exist_ok=True)
    for name, (fn, args, config, backward) in recordings().items():
        if only and name not in only:
            continue
        with torch.set_grad_enabled(backward):
            c = explorer.compile(fn, *args, config=config, backward=backward)
        c.measure_memory()  # the measured peak of each graph, next to the plan
        _runs(name, c)
        path = c.save(FIXTURES / f"{name}.json")  # builds every kernel's IR (SASS, line maps)
        # kept unpacked and indented: the tests read the JSON itself, and a re-recording diffs by line
        path.write_text(json.dumps(explorer.load(path).to_json(), indent=1) + "\n")
        neutralize_file(path)
        print(f"{path}: {c!r}")


if __name__ == "__main__":
    if sys.argv[1:] == ["--list"]:
        print(" ".join(recordings()))
    else:
        main(sys.argv[1:])
