"""Capture overhead: plain torch.compile vs explorer.compile vs Inductor's debug trace dump.

Each round compiles every workload three ways in one process, in rotating order, with Inductor's caches
bypassed for all three (``force_disable_caches``) and Dynamo reset before each compile, and times
compile + first run. Prints the median ratios explorer/plain and debug/plain per workload and overall.

    python benchmarks/capture_overhead.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time

import torch

import explorer
from compiler._torch import inductor_config
from tests.workloads import TransformerBlock


def mlp(x: torch.Tensor, w1: torch.Tensor, w2: torch.Tensor) -> torch.Tensor:
    h = torch.nn.functional.layer_norm(x, x.shape[-1:])
    return torch.relu(h @ w1) @ w2 + x


def workloads() -> dict[str, tuple]:
    torch.manual_seed(0)
    return {
        "transformer_block": (TransformerBlock().eval(), (torch.randn(2, 16, 64),)),
        "mlp": (mlp, (torch.randn(32, 64), torch.randn(64, 256), torch.randn(256, 64))),
    }


NO_CACHES = {"force_disable_caches": True}


def plain(fn, args) -> None:
    with inductor_config.patched(NO_CACHES):
        torch.compile(fn)(*args)


def debug_dump(fn, args) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        debug = {**NO_CACHES, "trace.enabled": True, "trace.debug_dir": tmp, "trace.provenance_tracking_level": 1}
        with inductor_config.patched(debug):
            torch.compile(fn)(*args)


def explore(fn, args) -> None:
    explorer.compile(fn, *args, dynamic=None)


MODES = {"plain": plain, "explorer": explore, "debug": debug_dump}


def timed(mode, fn, args) -> float:
    torch._dynamo.reset()
    start = time.perf_counter()
    with torch.no_grad():
        MODES[mode](fn, args)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    loads = workloads()
    for name, (fn, inputs) in loads.items():  # warm-up: first compile in a process pays imports
        for mode in MODES:
            timed(mode, fn, inputs)
    times = {(w, m): [] for w in loads for m in MODES}
    order = list(MODES)
    for r in range(args.rounds):
        for name, (fn, inputs) in loads.items():
            for mode in order[r % 3:] + order[: r % 3]:
                times[(name, mode)].append(timed(mode, fn, inputs))
    print(f"{'workload':<20}{'plain s':>10}{'explorer/plain':>16}{'debug/plain':>14}")
    ratios_e, ratios_d = [], []
    for name in loads:
        p = statistics.median(times[(name, "plain")])
        e = statistics.median(times[(name, "explorer")]) / p
        d = statistics.median(times[(name, "debug")]) / p
        ratios_e.append(e)
        ratios_d.append(d)
        print(f"{name:<20}{p:>10.2f}{e:>16.3f}{d:>14.3f}")
    print(f"{'median':<20}{'':>10}{statistics.median(ratios_e):>16.3f}{statistics.median(ratios_d):>14.3f}")


if __name__ == "__main__":
    main()
