"""How long the command line takes to start, against ``import torch``: ``--help`` should import no torch,
and ``show`` of a saved trace (JSON, read by the model and printed by rich) no torch either.

Each command runs in a fresh interpreter, ``--runs`` times (after one untimed run that warms the disk
cache); printed: the median wall seconds and the ratio to the median of ``python -c "import torch"``.

    .venv/bin/python benchmarks/cli_start.py [--runs 5] [--trace tests/fixtures/gpu_training.json]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def seconds(argv: list[str], runs: int) -> float:
    """Median wall seconds of ``python argv`` run from the repository root, output discarded."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "120"}
    times = []
    for run in range(runs + 1):
        started = time.perf_counter()
        subprocess.run([sys.executable, *argv], cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        if run:  # the first run only warms the disk cache
            times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--trace", default=str(ROOT / "tests" / "fixtures" / "gpu_training.json"))
    args = parser.parse_args()
    commands = {
        'python -c "import torch"': ["-c", "import torch"],
        "python -m explorer --help": ["-m", "explorer", "--help"],
        f"python -m explorer show {Path(args.trace).name}": ["-m", "explorer", "show", args.trace, "--no-pager"],
    }
    measured = {label: seconds(argv, args.runs) for label, argv in commands.items()}
    baseline = measured['python -c "import torch"']
    print(f"median of {args.runs} runs, {sys.executable}")
    print(f"{'command':48} {'s':>7} {'x import torch':>15}")
    for label, value in measured.items():
        print(f"{label:48} {value:7.3f} {value / baseline:15.2f}")


if __name__ == "__main__":
    main()
