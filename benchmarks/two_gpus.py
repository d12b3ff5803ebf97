"""Sweeps and a multi-rank job on two GPUs of one host, against one GPU, in one run.

1. An 8-point sweep of a GPT block (tests/workloads.TransformerBlock, inference; three toggles that
   change the wrapper and the schedule) on both GPUs (one worker each) and on one GPU, in workers
   started ahead (``explorer.start_sweep_workers``), alternating, ``--rounds`` times; each on its own
   sequence length so that no point reuses another's compile. Wall times and their ratio (target:
   two GPUs <= 0.6x one); the GPU each row ran on; per point, run_ms and device_ms of the two-GPU sweep
   over the one-GPU sweep's (target: within 10%).
2. A sweep with a point that runs out of GPU memory on purpose (its output needs ``--oom-gb`` GB): one
   failed row saying so, every other row ok, on both GPUs.
3. examples/two_ranks.py under torchrun with NCCL, one GPU per rank, TORCH_TRACE on; its logs loaded
   with ``explorer.load_trace``: rank 1's graph break and recompile reported as divergences.

Exits non-zero when a target is missed. Needs two GPUs.

    python benchmarks/two_gpus.py [--rounds 2] [--dim 768 --heads 12 --seq 512 --batch 8] [--record]
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import explorer  # noqa: E402
from benchmarks import recording  # noqa: E402
from benchmarks.sweep import GRID, add_workload_arguments  # noqa: E402
from tests import workloads  # noqa: E402


def _sweep(model: torch.nn.Module, x: torch.Tensor, workers: int, runs: int) -> tuple[float, explorer.Sweep]:
    started = time.perf_counter()
    result = explorer.sweep(model, x, grid=GRID, runs=runs, workers=workers, progress_display=False)
    return time.perf_counter() - started, result


def _point_ratios(two: explorer.Sweep, one: explorer.Sweep, measure: str) -> list[float]:
    return [getattr(a, measure) / getattr(b, measure) for a, b in zip(two.rows, one.rows)
            if getattr(a, measure) and getattr(b, measure)]


def sweeps(args: argparse.Namespace, failures: list[str], notes: list[str]) -> list[recording.Table]:
    torch.manual_seed(0)
    model = workloads.TransformerBlock(args.dim, args.heads).cuda().requires_grad_(False)
    explorer.start_sweep_workers(workers=2, wait=True)
    walls: dict[int, list[float]] = {1: [], 2: []}
    pairs = []
    with torch.no_grad():
        for round_ in range(args.rounds):
            x = torch.randn(args.batch, args.seq - 16 * round_, args.dim, device="cuda")
            order = (1, 2) if round_ % 2 == 0 else (2, 1)  # neither sweep always runs on the other's leftovers
            done = {workers: _sweep(model, x, workers, args.runs) for workers in order}
            for workers, (seconds, _) in done.items():
                walls[workers].append(seconds)
            pairs.append((done[2][1], done[1][1]))
            notes.append(f"round {round_ + 1} ({' then '.join(f'{w} GPU' for w in order)}): one GPU {walls[1][-1]:.2f} s, "
                         f"two GPUs {walls[2][-1]:.2f} s ({walls[2][-1] / walls[1][-1]:.3f}x)")
            print(notes[-1], flush=True)
    one_s, two_s = statistics.median(walls[1]), statistics.median(walls[2])
    table = recording.Table(["sweep (8 points)", "wall s", "/ one GPU", "target", "rows ok", "GPUs the rows ran on"])
    two, one = pairs[-1]
    table.add("one GPU, 1 worker", f"{one_s:.1f}", "1.00", "", f"{sum(r.status == 'ok' for r in one.rows)}/8",
              ", ".join(sorted({r.gpu for r in one.rows})))
    table.add("two GPUs, a worker each", f"{two_s:.1f}", f"{two_s / one_s:.2f}", "<= 0.6",
              f"{sum(r.status == 'ok' for r in two.rows)}/8", ", ".join(sorted({r.gpu for r in two.rows})))
    if two_s / one_s > 0.6:
        failures.append(f"two GPUs took {two_s / one_s:.2f}x one")
    if len({r.gpu for r in two.rows}) != 2:
        failures.append(f"the two-GPU sweep ran on {sorted({r.gpu for r in two.rows})}")
    agreement = recording.Table(["per point, two GPUs / one GPU", "median", "min", "max", "target"])
    for measure in ("run_ms", "device_ms"):
        ratios = [r for two, one in pairs for r in _point_ratios(two, one, measure)]
        agreement.add(measure, f"{statistics.median(ratios):.3f}", f"{min(ratios):.3f}", f"{max(ratios):.3f}",
                      "0.9 to 1.1")
        if not all(0.9 <= r <= 1.1 for r in ratios):
            failures.append(f"{measure} of a point differs by more than 10% between the sweeps: {ratios}")
    print(table.text())
    print(agreement.text())
    return [table, agreement, _where_time_goes(pairs[-1])]


def _where_time_goes(pair: tuple[explorer.Sweep, explorer.Sweep]) -> recording.Table:
    """Of each sweep's wall time: the busiest worker's points (everything a point does in its worker) and
    the rest, which does not divide over GPUs (shipping the model, starting the sweep, gathering rows)."""
    table = recording.Table(["last round", "wall s", "busiest worker's points s", "outside points s",
                             "first point s", "other points s (mean)", "compile s (mean)"])
    for label, result in (("two GPUs", pair[0]), ("one GPU", pair[1])):
        busy: dict[str, float] = {}
        firsts, others = [], []
        for row in result.rows:
            (others if row.worker in busy else firsts).append(row.wall_s or 0.0)
            busy[row.worker] = busy.get(row.worker, 0.0) + (row.wall_s or 0.0)
        compile_s = [row.stage_s.get("compile", 0.0) for row in result.rows]
        table.add(label, f"{result.wall_s:.2f}", f"{max(busy.values()):.2f}", f"{result.wall_s - max(busy.values()):.2f}",
                  f"{statistics.mean(firsts):.2f}", f"{statistics.mean(others):.2f}" if others else "",
                  f"{statistics.mean(compile_s):.2f}")
    print(table.text())
    return table


def grow(x: torch.Tensor) -> torch.Tensor:
    """An output of x.shape[0] GiB (fp32): a large enough first dim cannot fit any GPU."""
    return torch.ones(x.shape[0] * 2**28, device=x.device) * x.sum()


def oom_sweep(args: argparse.Namespace, failures: list[str]) -> recording.Table:
    sets = [(torch.ones(1, device="cuda"),), (torch.ones(int(args.oom_gb), device="cuda"),),
            (torch.ones(2, device="cuda"),), (torch.ones(1, 3, device="cuda"),)]
    with torch.no_grad():
        result = explorer.sweep(grow, input_sets=sets, configs=[{}], runs=2, workers=2, progress_display=False)
    table = recording.Table(["input", "status", "GPU", "error"])
    for row in result.rows:
        table.add(str(row.shapes), row.status, row.gpu, (row.error or "")[:70])
    statuses = [r.status for r in result.rows]
    if statuses != ["ok", "failed", "ok", "ok"] or "out of memory" not in (result.rows[1].error or ""):
        failures.append(f"the out-of-memory sweep's rows: {statuses}, {result.rows[1].error!r}")
    print(table.text())
    return table


def two_ranks(failures: list[str]) -> recording.Table:
    spec = importlib.util.spec_from_file_location("two_ranks", ROOT / "examples" / "two_ranks.py")
    job = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(job)
    table = recording.Table(["rank-to-rank divergence (torchrun, NCCL, 2 ranks)", "summary"])
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        result = job.launch(tmp, backend="nccl")
        job_s = time.perf_counter() - started
        if result.returncode != 0:
            failures.append(f"the torchrun job failed (exit {result.returncode}): {result.stderr[-800:]}")
            return table
        ts = explorer.load_trace(tmp)
        for d in ts.divergence:
            table.add(d.kind, d.summary[:100])
        kinds = {d.kind for d in ts.divergence}
        table.add(f"(the job: {job_s:.1f} s; ranks loaded: {', '.join(sorted(map(str, ts.ranks)))})", "")
    if not {"graph_break", "recompile"} <= kinds:
        failures.append(f"rank 1's graph break and recompile not both reported: {sorted(kinds)}")
    print(table.text())
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_workload_arguments(parser)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--oom-gb", type=float, default=1024)
    recording.add_argument(parser)
    args = parser.parse_args()
    if torch.cuda.device_count() < 2:
        raise SystemExit(f"needs 2 GPUs, this machine has {torch.cuda.device_count()}")
    explorer.progress.off()
    failures: list[str] = []
    rounds: list[str] = []
    tables = [*sweeps(args, failures, rounds), oom_sweep(args, failures), two_ranks(failures)]
    explorer.close_sweep_workers()
    names = ", ".join(sorted({torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())}))
    recording.record(args, tables, device="cuda", notes=[
        f"{torch.cuda.device_count()} x {names}; GPT block dim {args.dim}, x ({args.batch}, {args.seq}, {args.dim}), "
        f"inference; medians of {args.rounds} alternating rounds", *rounds, *(f"missed: {f}" for f in failures)])
    if failures:
        raise SystemExit("missed: " + "; ".join(failures))


if __name__ == "__main__":
    main()
