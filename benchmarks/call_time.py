"""run_ms against plain torch.compile, timed the same way (CUDA events around back-to-back calls).

Sweeps used to report a profiled run's wall time as run_ms: 4.4 to 9.4x a call of plain torch.compile
for a sub-millisecond GPU program. This prints, for an RMSNorm + SiLU-gate + cumsum function in fp16 at
two sizes, a call of plain torch.compile, of ``explorer.compile``'s program in the same process
(``compiler.runs.call_time.call_ms``) and ``row.run_ms`` of a one-point sweep in a worker, with
ratios; then plain and explorer again once ``c.profile()`` has run in the process.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import explorer  # noqa: E402
from benchmarks import recording  # noqa: E402
from compiler.runs.call_time import call_ms  # noqa: E402
from tests.plain_timing import plain_cuda_ms  # noqa: E402
from tests.workloads import rmsnorm_gate_cumsum  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20, help="the sweep's runs (call_ms's least calls a loop)")
    parser.add_argument("--rounds", type=int, default=3)
    recording.add_argument(parser)
    args = parser.parse_args()
    table = recording.Table(["input", "plain ms", "explorer in process ms", "sweep run_ms", "in process / plain",
                             "sweep / plain", "device_ms", "after c.profile(): plain ms", "explorer ms"])
    sizes = ((4096, 2048), (8192, 4096))
    inputs = [(torch.randn(r, c, device="cuda", dtype=torch.float16), torch.randn(c, device="cuda", dtype=torch.float16))
              for r, c in sizes]
    with torch.no_grad():
        sweep = explorer.sweep(rmsnorm_gate_cumsum, input_sets=inputs, configs=[{}], runs=args.calls, workers=1,
                               check=False, progress_display=False)
        captured = [explorer.compile(rmsnorm_gate_cumsum, *xs, progress_display=False) for xs in inputs]
        before = []
        for xs, c in zip(inputs, captured):
            plain, inside = [], []
            for _ in range(args.rounds):  # alternating, medians
                plain.append(plain_cuda_ms(rmsnorm_gate_cumsum, *xs))
                inside.append(call_ms(c, calls=args.calls))
            before.append((statistics.median(plain), statistics.median(inside)))
        captured[0].profile(runs=args.calls)  # torch.profiler has now run in this process
        for (rows, cols), xs, c, row, (p, i) in zip(sizes, inputs, captured, sweep.rows, before):
            table.add(f"{rows}x{cols} fp16", f"{p:.4f}", f"{i:.4f}", f"{row.run_ms:.4f}", f"{i / p:.3f}",
                      f"{row.run_ms / p:.3f}", f"{row.device_ms:.4f}", f"{plain_cuda_ms(rmsnorm_gate_cumsum, *xs):.4f}",
                      f"{call_ms(c, calls=args.calls):.4f}")
    print(table.text())
    recording.record(args, [table], device="cuda", notes=[
        "plain: 3 loops of 500 back-to-back calls; explorer and sweep: call_ms (loops of at least "
        f"{args.calls} calls and 50 ms); median of {args.rounds} alternating rounds (plain, explorer) per size"])


if __name__ == "__main__":
    main()
