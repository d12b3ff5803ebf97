"""Capture cost of explorer.export over a plain AOTInductor compile of the same model.

Plain: ``torch.export.export`` then ``torch._inductor.aoti_compile_and_package`` (caches bypassed, as
the capture bypasses them). Explorer: ``explorer.export`` of the same model and inputs (export, AOT
compile, loading the package and running it once, every stage captured). Each round runs the pair back
to back, the order alternating between rounds; the figure is the median over rounds of each pair's
explorer/plain ratio. The first pairs (``--warmup``, of the first workload) are not counted: they
build AOTInductor's precompiled headers and pay the imports. With transformers installed, a Hugging
Face GPT-2 built from a small config (2 layers, 256 wide, as tests/gpu/test_gpu_export.py) is a third
workload. ``--cxx`` names the C++ compiler both sides build with (``cpp.cxx``): on a machine whose
default compiler makes packages torch's loader cannot load (tests/gpu/test_gpu_export.py), the
explorer, which loads its package, would refuse them.

    python benchmarks/export_cost.py [--rounds 5] [--warmup 1] [--device cuda] [--cxx /usr/bin/g++] [--record]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import explorer  # noqa: E402
from benchmarks import recording  # noqa: E402
from tests.workloads import TransformerBlock  # noqa: E402


class MLP(torch.nn.Module):
    def __init__(self, dim: int = 256) -> None:
        super().__init__()
        self.fc1, self.fc2 = torch.nn.Linear(dim, 4 * dim), torch.nn.Linear(4 * dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(torch.nn.functional.gelu(self.fc1(x))) + x


Workload = tuple[torch.nn.Module, tuple[torch.Tensor, ...], dict[str, Any]]


def workloads(device: str) -> dict[str, Workload]:
    torch.manual_seed(0)
    loads: dict[str, Workload] = {
        "MLP 256": (MLP().eval().to(device), (torch.randn(64, 256, device=device),), {}),
        "transformer block": (TransformerBlock().eval().to(device), (torch.randn(2, 16, 64, device=device),), {}),
    }
    try:
        import transformers
    except ImportError:
        return loads
    config = transformers.GPT2Config(n_layer=2, n_embd=256, n_head=4, vocab_size=2048, n_positions=128)
    loads["GPT-2 (2 layers)"] = (transformers.GPT2LMHeadModel(config).eval().to(device),
                                 (torch.randint(0, config.vocab_size, (4, 64), device=device),),
                                 {"use_cache": False, "return_dict": False})
    return loads


def plain(load: Workload, folder: str, settings: dict[str, Any]) -> None:
    model, inputs, kwargs = load
    program = torch.export.export(model, inputs, kwargs=kwargs)
    torch._inductor.aoti_compile_and_package(program, package_path=f"{folder}/plain.pt2",
                                             inductor_configs={"force_disable_caches": True, **settings})


def explore(load: Workload, folder: str, settings: dict[str, Any]) -> None:
    model, inputs, kwargs = load
    explorer.export(model, inputs, kwargs=kwargs, package_path=f"{folder}/explorer.pt2", config=settings,
                    progress_display=False)


MODES = {"plain": plain, "explorer": explore}


def timed(mode: str, load: Workload, settings: dict[str, Any]) -> float:
    with tempfile.TemporaryDirectory() as folder:
        start = time.perf_counter()
        MODES[mode](load, folder, settings)
        if load[1][0].is_cuda:
            torch.cuda.synchronize()
        return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=1, help="pairs run first and not counted")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--cxx", help="the C++ compiler both sides build with (Inductor's cpp.cxx)")
    recording.add_argument(parser)
    args = parser.parse_args()
    loads = workloads(args.device)
    settings: dict[str, Any] = {"cpp.cxx": (args.cxx,)} if args.cxx else {}
    for _ in range(args.warmup):
        for mode in MODES:
            timed(mode, next(iter(loads.values())), settings)
    times: dict[tuple[str, str], list[float]] = {(name, mode): [] for name in loads for mode in MODES}
    order = list(MODES)
    for r in range(args.rounds):
        for name, load in loads.items():
            for mode in (order if r % 2 == 0 else order[::-1]):
                times[(name, mode)].append(timed(mode, load, settings))
    table = recording.Table(["workload", "plain s", "explorer s", "explorer/plain (paired median)", "min ratio"],
                            title=f"explorer.export vs torch.export + aoti_compile_and_package, {args.device}, "
                                  f"torch {torch.__version__}, {args.rounds} rounds"
                                  + (f", built with {args.cxx}" if args.cxx else ""))
    ratios = []
    for name in loads:
        p, e = times[(name, "plain")], times[(name, "explorer")]
        paired = statistics.median(b / a for a, b in zip(p, e))
        ratios.append(paired)
        table.add(name, f"{statistics.median(p):.2f}", f"{statistics.median(e):.2f}", f"{paired:.3f}",
                  f"{min(e) / min(p):.3f}")
    table.add("median", "", "", f"{statistics.median(ratios):.3f}", "")
    print(table.text())
    recording.record(args, [table], device=args.device)


if __name__ == "__main__":
    main()
