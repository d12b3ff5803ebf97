"""What c.check_numerics() costs: its wall time against one run of the compiled function.

    PYTHONPATH=. python benchmarks/numerics_cost.py [--rounds 3]

On a transformer block (CPU, and the GPU when there is one). The check runs the compiled function
once while copying every buffer a kernel writes, then runs the post-grad graph eagerly twice (same
dtypes, and float64) and compares.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import explorer  # noqa: E402
from benchmarks import recording  # noqa: E402
from compiler.runs import replay  # noqa: E402
from tests.workloads import TransformerBlock  # noqa: E402


def measure(device: str, rounds: int) -> tuple[float, float, tuple[int, ...]]:
    torch.manual_seed(0)
    dim, batch, seq = (1024, 8, 512) if device == "cuda" else (256, 4, 128)
    model = TransformerBlock(dim, 8).eval().to(device)
    x = torch.randn(batch, seq, dim, device=device)
    with torch.no_grad():
        c = explorer.compile(model, x)
    run = replay.runner(c)
    runs, checks = [], []
    for _ in range(rounds):
        run()
        replay.synchronize(device)
        started = time.perf_counter()
        run()
        replay.synchronize(device)
        runs.append(time.perf_counter() - started)
        started = time.perf_counter()
        report = c.check_numerics()
        checks.append(time.perf_counter() - started)
    assert report.ok, report
    return statistics.median(checks), statistics.median(runs), tuple(x.shape)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    recording.add_argument(parser)
    args = parser.parse_args()
    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    table = recording.Table(["device", "check s", "one run s", "ratio"])
    notes = []
    for device in devices:
        check, run, shape = measure(device, args.rounds)
        table.add(device, f"{check:.3f}", f"{run:.5f}", f"{check / run:.0f}x")
        notes.append(f"{device}: transformer block, input {shape}")
    print(table.text())
    recording.record(args, [table], device=devices[-1], notes=notes)


if __name__ == "__main__":
    main()
