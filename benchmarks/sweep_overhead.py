"""What running points in a sweep's worker costs over running the same points in this process.

The function is an RMSNorm + SiLU-gate + cumsum (tests/workloads.rmsnorm_gate_cumsum), fp16 on the GPU
at 4096x2048 and 8192x4096 (fp32, smaller, on the CPU). Points are toggle configurations x those two
input sets: 4 points (2 configurations) and 20 points (10). For each size, side by side, alternating:

- the in-process loop: every point run by ``compiler.sweeps.point.run_point`` here, one after another
  (the same capture, timing, profile, memory and numerics a worker does, without a worker);
- the sweep: ``explorer.sweep`` of the same points in workers started ahead of it by
  ``explorer.start_sweep_workers()`` and kept between sweeps (one per GPU; on the CPU, one).

Ratios are sweep wall time over the in-process loop's; the first sweep of the session, workers
started cold for it, is shown too. On the CPU use small sizes (``--rows 256 --cols 128``) as a check
that the script works.

    python benchmarks/sweep_overhead.py [--rounds 2] [--rows 4096 --cols 2048] [--record]
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import explorer  # noqa: E402
from benchmarks import recording  # noqa: E402
from compiler.sweeps import payload, point  # noqa: E402
from tests.workloads import rmsnorm_gate_cumsum  # noqa: E402

_TOGGLES = ("allow_buffer_reuse", "inplace_buffers", "loop_ordering_after_fusion")
CONFIGS = [dict(zip(_TOGGLES, values)) for values in itertools.product([True, False], repeat=3)]
CONFIGS += [{"use_block_ptr": True}, {"combo_kernels": True}]  # ten configurations that compile differently


def _inputs(device: str, rows: int, cols: int) -> list[tuple[torch.Tensor, torch.Tensor]]:
    dtype = torch.float16 if device == "cuda" else torch.float32
    return [(torch.randn(r, c, device=device, dtype=dtype), torch.randn(c, device=device, dtype=dtype))
            for r, c in ((rows, cols), (2 * rows, 2 * cols))]


def in_process(configs: list[dict], input_sets: list[tuple], runs: int) -> tuple[float, list[dict]]:
    """Seconds to run every point here, as a worker runs it; and the rows."""
    data = payload.pack(rmsnorm_gate_cumsum, input_sets)
    options = {"backward": False, "runs": runs, "warmup": 2, "check": True, "grad_enabled": False,
               "threads": torch.get_num_threads()}
    start = time.perf_counter()
    rows = [point.run_point(data, {"index": i, "config": config, "input_set": s}, options)["row"]
            for i, (config, s) in enumerate(itertools.product(configs, range(len(input_sets))))]
    point.release()
    return time.perf_counter() - start, rows


def in_sweep(configs: list[dict], input_sets: list[tuple], runs: int) -> tuple[float, list[Any]]:
    start = time.perf_counter()
    result = explorer.sweep(rmsnorm_gate_cumsum, configs=configs, input_sets=input_sets, runs=runs, workers=1,
                            progress_display=False)
    return time.perf_counter() - start, result.rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=4096)
    parser.add_argument("--cols", type=int, default=2048)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=2, help="alternating rounds per size (medians)")
    recording.add_argument(parser)
    args = parser.parse_args()
    device = "cuda" if torch.cuda.is_available() else "cpu"
    input_sets = _inputs(device, args.rows, args.cols)
    table = recording.Table(["points", "in-process loop s", "sweep s", "sweep / loop", "target", "rows ok"])
    with torch.no_grad():
        in_process(CONFIGS[:1], input_sets[:1], args.runs)  # this process's first compile, not counted
        explorer.close_sweep_workers()
        cold_s, cold_rows = in_sweep(CONFIGS[:2], input_sets, args.runs)  # workers started for it
        loop_cold, _ = in_process(CONFIGS[:2], input_sets, args.runs)
        table.add("4, workers started for the sweep", f"{loop_cold:.2f}", f"{cold_s:.2f}", f"{cold_s / loop_cold:.3f}",
                  "", f"{sum(r.status == 'ok' for r in cold_rows)}/4")
        explorer.start_sweep_workers(gpu=device == "cuda", workers=1, wait=True)
        for count, target in ((2, 1.3), (10, 1.15)):
            loops, sweeps, ok = [], [], []
            for _ in range(args.rounds):
                loop_s, _ = in_process(CONFIGS[:count], input_sets, args.runs)
                sweep_s, rows = in_sweep(CONFIGS[:count], input_sets, args.runs)
                loops.append(loop_s)
                sweeps.append(sweep_s)
                ok.append(sum(r.status == "ok" for r in rows))
            loop_s, sweep_s = statistics.median(loops), statistics.median(sweeps)
            table.add(f"{2 * count}, warm workers", f"{loop_s:.2f}", f"{sweep_s:.2f}", f"{sweep_s / loop_s:.3f}",
                      f"<= {target}", f"{min(ok)}/{2 * count}")
    explorer.close_sweep_workers()
    print(table.text())
    size = f"{args.rows}x{args.cols} and {2 * args.rows}x{2 * args.cols}"
    recording.record(args, [table], device=device, notes=[
        f"rmsnorm_gate_cumsum at {size} ({'fp16' if device == 'cuda' else 'fp32'}), {args.runs} runs a point, numerics "
        f"checked; one worker; medians of {args.rounds} alternating rounds (loop, sweep) for the warm rows"])


if __name__ == "__main__":
    main()
