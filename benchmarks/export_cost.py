"""Capture cost of explorer.export over a plain AOTInductor compile of the same model.

Plain: ``torch.export.export`` then ``torch._inductor.aoti_compile_and_package`` (caches bypassed, as
the capture bypasses them). Explorer: ``explorer.export`` of the same model and inputs (export, AOT
compile, loading the package and running it once, every stage captured). Each round runs the pair back
to back, the order alternating between rounds; the figure is the median over rounds of each pair's
explorer/plain ratio. The first pair (``--warmup``) is not counted: it builds AOTInductor's
precompiled headers and pays the imports.

    python benchmarks/export_cost.py [--rounds 5] [--warmup 1] [--device cuda] [--record]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

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


def workloads(device: str) -> dict[str, tuple[torch.nn.Module, tuple[torch.Tensor, ...]]]:
    torch.manual_seed(0)
    return {
        "MLP 256": (MLP().eval().to(device), (torch.randn(64, 256, device=device),)),
        "transformer block": (TransformerBlock().eval().to(device), (torch.randn(2, 16, 64, device=device),)),
    }


def plain(model: torch.nn.Module, inputs: tuple[torch.Tensor, ...], folder: str) -> None:
    program = torch.export.export(model, inputs)
    torch._inductor.aoti_compile_and_package(program, package_path=f"{folder}/plain.pt2",
                                             inductor_configs={"force_disable_caches": True})


def explore(model: torch.nn.Module, inputs: tuple[torch.Tensor, ...], folder: str) -> None:
    explorer.export(model, inputs, package_path=f"{folder}/explorer.pt2", progress_display=False)


MODES = {"plain": plain, "explorer": explore}


def timed(mode: str, model: torch.nn.Module, inputs: tuple[torch.Tensor, ...]) -> float:
    with tempfile.TemporaryDirectory() as folder:
        start = time.perf_counter()
        MODES[mode](model, inputs, folder)
        if inputs[0].is_cuda:
            torch.cuda.synchronize()
        return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=1, help="pairs run first and not counted")
    parser.add_argument("--device", default="cpu")
    recording.add_argument(parser)
    args = parser.parse_args()
    loads = workloads(args.device)
    for _ in range(args.warmup):
        for model, inputs in loads.values():
            for mode in MODES:
                timed(mode, model, inputs)
    times: dict[tuple[str, str], list[float]] = {(name, mode): [] for name in loads for mode in MODES}
    order = list(MODES)
    for r in range(args.rounds):
        for name, (model, inputs) in loads.items():
            for mode in (order if r % 2 == 0 else order[::-1]):
                times[(name, mode)].append(timed(mode, model, inputs))
    table = recording.Table(["workload", "plain s", "explorer s", "explorer/plain (paired median)", "min ratio"],
                            title=f"explorer.export vs torch.export + aoti_compile_and_package, {args.device}, "
                                  f"torch {torch.__version__}, {args.rounds} rounds")
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
