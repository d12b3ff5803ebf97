"""A CPU sweep's run_ms against the same points run as plain programs, with and without timing turns.

Two local workers share the machine's cores. A point's ``run_ms`` should be what the user's program would
see on this machine: plain ``torch.compile`` of the same function under the same config, alone, with the
caller's thread count. Side by side, alternating, for a 4-point sweep (2 configs x 2 input sizes of
``tests.workloads.rmsnorm_gate_cumsum`` in fp32):

- the sweep as it runs: CPU workers take turns to time (compiler/sweeps/timing_lock.py);
- the same sweep with turns off: each worker times while the other may be compiling or timing;
- plain: each point compiled by ``torch.compile`` in a fresh process of its own, run alone (the median of two),
  timed as ``call_ms`` times (median of loops of back-to-back calls of at least 50 ms). Timed in this process
  after a sweep, the same program ran 3 to 7 times slower than in the first round.

Printed: each point's run_ms / plain for both sweeps, and their medians, min and max over rounds.

    python benchmarks/cpu_sweep_time.py [--rounds 3] [--record]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import explorer  # noqa: E402
from benchmarks import recording  # noqa: E402
from compiler.sweeps import local, timing_lock  # noqa: E402
from tests.workloads import rmsnorm_gate_cumsum  # noqa: E402

CONFIGS = [{}, {"inplace_buffers": False, "allow_buffer_reuse": False}]
SIZES = [(1024, 2048), (4096, 2048)]


def _inputs(rows: int, cols: int) -> tuple[torch.Tensor, torch.Tensor]:
    torch.manual_seed(0)
    return torch.randn(rows, cols), torch.randn(cols)


def _sweep(turns: bool) -> list[float]:
    """run_ms of each point of the 4-point sweep, in point order."""
    slots = local.slots
    if not turns:
        local.slots = lambda gpu, workers: [local.Slot(s.name, {k: v for k, v in s.env.items() if k != timing_lock.ENV})
                                            for s in slots(gpu, workers)]
    try:
        sets = [_inputs(*size) for size in SIZES]
        with torch.no_grad():
            result = explorer.sweep(rmsnorm_gate_cumsum, input_sets=sets, configs=CONFIGS, runs=20, check=False,
                                    workers=2, keep_workers=0)
    finally:
        local.slots = slots
    failed = [r.error for r in result.rows if r.status != "ok"]
    if failed:
        raise SystemExit(f"a point failed: {failed}")
    return [r.run_ms for r in result.rows]


_PLAIN = """
import json, statistics, sys, time
import torch
from compiler._torch import inductor_config
from compiler.pipeline import toggles
from tests.workloads import rmsnorm_gate_cumsum
config, (rows, cols) = json.loads(sys.argv[1]), json.loads(sys.argv[2])
torch.manual_seed(0)
x, w = torch.randn(rows, cols), torch.randn(cols)
with inductor_config.patched(toggles.resolve(config)), torch.no_grad():
    compiled = torch.compile(rmsnorm_gate_cumsum)
    for _ in range(3):
        compiled(x, w)
    start = time.perf_counter()
    compiled(x, w)
    count = max(20, int(0.05 / max(time.perf_counter() - start, 1e-6)))
    times = []
    for _ in range(3):
        start = time.perf_counter()
        for _ in range(count):
            compiled(x, w)
        times.append((time.perf_counter() - start) * 1e3 / count)
print(statistics.median(times))
"""


def _plain_ms(config: dict, size: tuple[int, int], processes: int = 2) -> float:
    """A plain program's milliseconds per call: torch.compile under ``config``, back-to-back calls, in a fresh
    process run alone (the median of ``processes`` of them)."""
    root = Path(__file__).resolve().parents[1]
    found = [float(subprocess.run([sys.executable, "-c", _PLAIN, json.dumps(config), json.dumps(size)], check=True,
                                  capture_output=True, text=True, cwd=root, env={**os.environ, "PYTHONPATH": str(root)}
                                  ).stdout.split()[-1]) for _ in range(processes)]
    return statistics.median(found)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    recording.add_argument(parser)
    args = parser.parse_args()
    points = [(c, s) for c in CONFIGS for s in SIZES]  # the sweep's order: input sets inner
    ratios: dict[str, list[float]] = {"turns": [], "no turns": []}
    plain = [_plain_ms(c, s) for c, s in points]
    print(f"plain ms {[round(p, 3) for p in plain]}", flush=True)
    for round_ in range(args.rounds):
        order = ("turns", "no turns") if round_ % 2 == 0 else ("no turns", "turns")
        swept = {name: _sweep(name == "turns") for name in order}
        for name, run_ms in swept.items():
            ratios[name] += [r / p for r, p in zip(run_ms, plain)]
        print(f"round {round_}: "
              + "; ".join(f"{name} run_ms {[round(r, 3) for r in swept[name]]}" for name in order), flush=True)
    table = recording.Table(["sweep", "run_ms / plain (median)", "min", "max", "points x rounds"])
    for name, values in ratios.items():
        table.add(name, f"{statistics.median(values):.3f}", f"{min(values):.3f}", f"{max(values):.3f}", len(values))
    print(table.text())
    notes = [f"{torch.get_num_threads()} threads, 2 workers on {torch.get_num_threads()} cores; rmsnorm_gate_cumsum fp32 "
             f"at {SIZES}, configs {CONFIGS}; {args.rounds} rounds, the two sweeps alternating"]
    recording.record(args, [table], notes=notes)


if __name__ == "__main__":
    main()
