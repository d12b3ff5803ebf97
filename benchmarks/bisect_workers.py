"""explorer.bisect in this process against its trials in worker processes, side by side in one run.

Two programs on the CPU: ``x + torch.rand(x.shape)`` (the culprit is the config change ``fallback_random``)
and a post-grad custom pass broken on purpose (tests/capture/test_bisect.py: torch's bisector counts the pass's
applications in the worker and bisects them across trials, so its state travels both ways, and the pass itself
travels in the config). Each way bisects the same program in a fresh interpreter, so both pay the first compile
of a process; printed: the wall time of the bisect, its trials, and the culprit each way found (they must
agree). The ``rand`` figures are behind the default (``workers=None``: in this process) in docs/bisect.md.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ONE = """
import json, sys, time
import torch, explorer
from torch._inductor import config
from tests.capture.test_bisect import break_muls, noisy, scaled_relu

workers, case = json.loads(sys.argv[1]), sys.argv[2]
started = time.perf_counter()
if case == "rand":
    r = explorer.bisect(noisy, torch.ones(4, 4), workers=workers, fusion=False)
else:
    with config.patch(post_grad_custom_post_pass=break_muls):
        r = explorer.bisect(scaled_relu, torch.ones(4, 4), torch.full((4, 4), 2.0), workers=workers, fusion=False)
print(json.dumps({"s": time.perf_counter() - started, "trials": len(r.trials), "engine": r.engine,
                  "culprit": [r.backend, r.subsystem, r.application, r.applied, r.avoided_by],
                  "first_trial_s": r.trials[0].seconds}))
"""


def run(workers: int | None, case: str) -> dict:
    began = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", ONE, json.dumps(workers), case], cwd=ROOT, capture_output=True,
                          text=True, check=True)
    found = json.loads(done.stdout.strip().splitlines()[-1])
    found["process_s"] = time.perf_counter() - began
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=1, help="worker processes of the second bisect")
    parser.add_argument("--case", choices=("rand", "pass", "both"), default="both", help="which program")
    args = parser.parse_args()
    for case in ("rand", "pass") if args.case == "both" else (args.case,):
        rows = [("in this process", run(None, case)), (f"workers={args.workers}", run(args.workers, case))]
        print(f"{case:6} {'trials run':18} {'bisect s':>9} {'first trial s':>14} {'process s':>10} {'trials':>7}  culprit")
        for label, found in rows:
            print(f"{'':6} {label:18} {found['s']:9.1f} {found['first_trial_s']:14.1f} {found['process_s']:10.1f} "
                  f"{found['trials']:7d}  {found['culprit']}")
        print(f"{'':6} workers / in-process: {rows[1][1]['s'] / rows[0][1]['s']:.2f}x; same culprit: "
              f"{rows[0][1]['culprit'] == rows[1][1]['culprit']}")


if __name__ == "__main__":
    main()
