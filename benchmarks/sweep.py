"""What a sweep costs: an 8-point sweep of a GPT block on every worker against the same sweep on one
worker, each with workers that start for it and with workers kept idle from an earlier sweep, and a
point of the sweep against a plain compile + profile of the same point in this process.

The block is tests/workloads.TransformerBlock (attention + MLP, inference), the grid three toggles that
change the wrapper and the schedule but compile in seconds (allow_buffer_reuse, inplace_buffers,
loop_ordering_after_fusion: 8 points). Every sweep point captures, profiles (10 runs), measures its
peak memory and checks numerics; the plain figure is ``explorer.compile`` + ``c.profile()`` of each of
the 8 configurations in one warm process (one unrelated compile first, so imports and CUDA
initialisation are not counted against it).

Four sweeps: one worker and every worker, each starting its workers (a fresh session); then every
worker and one worker again in the workers the last cold sweep left idle (``keep_workers``), each on an
input of another length (``--seq`` halved, then quartered) so that no kernel of theirs was compiled in
that worker before. ``--workers`` sets "every worker" (default: one per GPU; on a one-GPU machine
``--workers 2`` puts two workers on the one GPU, which shows how far compiles overlap, not what a
second GPU gives). On the CPU a worker's thread count depends on how many there are, so the last
one-worker sweep starts a worker of its own. Plain compiles are timed at the full and the quartered
length. Prints the sweep tables, wall times and ratios, and writes them as JSON with
``--out``.

    python benchmarks/sweep.py [--dim 768 --seq 512 --batch 8] [--workers N] [--out sweep.json]

On a machine without a GPU it runs on the CPU (2 workers), with ``--dim 64 --heads 4 --seq 16 --batch 2`` a
quick check that the script works.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402
from rich.console import Console  # noqa: E402

import explorer  # noqa: E402
from benchmarks import recording  # noqa: E402
from tests import workloads  # noqa: E402

GRID = {"allow_buffer_reuse": [True, False], "inplace_buffers": [True, False], "loop_ordering_after_fusion": [True, False]}


def add_workload_arguments(parser: argparse.ArgumentParser) -> None:
    """The swept block's sizes and the profiled runs per point, as this sweep and benchmarks/two_gpus.py take them."""
    parser.add_argument("--dim", type=int, default=768)
    parser.add_argument("--heads", type=int, default=12)
    parser.add_argument("--seq", type=int, default=512)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--runs", type=int, default=10)


def _configs() -> list[dict]:
    import itertools

    return [dict(zip(GRID, values)) for values in itertools.product(*GRID.values())]


def _plain(model: torch.nn.Module, x: torch.Tensor, runs: int) -> list[float]:
    """Seconds of explorer.compile + c.profile() for each configuration, in this process."""
    warm = explorer.compile(lambda t: torch.relu(t) + 1, x.new_ones(8))
    warm.profile(runs=2, warmup=1)
    seconds = []
    for config in _configs():
        torch._dynamo.reset()
        started = time.perf_counter()
        c = explorer.compile(model, x, config=config)
        c.profile(runs=runs, warmup=2)
        seconds.append(time.perf_counter() - started)
    return seconds


def _summary(result: explorer.Sweep) -> dict:
    return {"wall_s": result.wall_s, "workers": result.workers, "best": result.best,
            "rows": [{"settings": r.settings, "status": r.status, "error": r.error, "compile_s": r.compile_s,
                      "run_ms": r.run_ms, "peak_bytes": r.peak_bytes, "ok": r.ok, "kernels": r.kernels, "gpu": r.gpu,
                      "worker": r.worker, "wall_s": r.wall_s, "stage_s": r.stage_s} for r in result.rows]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_workload_arguments(parser)
    parser.add_argument("--workers", type=int, help="workers of the 'every worker' sweeps (default: one per GPU)")
    parser.add_argument("--out", type=Path)
    recording.add_argument(parser)
    args = parser.parse_args()
    explorer.progress.off()
    device = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(0)
    model = workloads.TransformerBlock(args.dim, args.heads).to(device).requires_grad_(False)
    x = torch.randn(args.batch, args.seq, args.dim, device=device)
    console = Console(width=230)
    name = torch.cuda.get_device_name() if device == "cuda" else "CPU"
    gpus = torch.cuda.device_count() if device == "cuda" else 0
    setup = f"{name}, {gpus} GPUs, torch {torch.__version__}; block dim {args.dim}, x {list(x.shape)}"
    console.print(setup)

    def run(inputs: torch.Tensor, workers: int | None, keep_s: float) -> explorer.Sweep:
        result = explorer.sweep(model, inputs, grid=GRID, runs=args.runs, workers=workers, keep_workers=keep_s)
        console.print(result)
        return result

    shorter = x[:, : args.seq // 2].contiguous()
    shortest = x[:, : args.seq // 4].contiguous()
    with torch.no_grad():
        one = run(x, 1, 0)
        every = run(x, args.workers, 600)
        warm_every = run(shorter, args.workers, 600)
        warm_one = run(shortest, 1, 0)
        explorer.close_sweep_workers()
        plain = _plain(model, x, args.runs)
        plain_shortest = _plain(model, shortest, args.runs)

    points = len(one.rows)
    sweeps = {"one_worker": one, "every_worker": every, "warm_every_worker": warm_every, "warm_one_worker": warm_one}
    figures = {
        "device": name, "gpus": gpus, "torch": torch.__version__, "shape": list(x.shape), "dim": args.dim,
        **{key: _summary(value) for key, value in sweeps.items()},
        "wall_ratio": every.wall_s / one.wall_s, "warm_wall_ratio": warm_every.wall_s / warm_one.wall_s,
        "point_wall_s_median": statistics.median(r.wall_s for r in one.rows if r.wall_s is not None),
        "plain_per_point_s": statistics.mean(plain), "plain_s": plain,
        "plain_shortest_per_point_s": statistics.mean(plain_shortest), "plain_shortest_s": plain_shortest,
    }
    for key, plain_key in (("one_worker", "plain_per_point_s"), ("warm_one_worker", "plain_shortest_per_point_s")):
        figures[f"{key}_per_point_s"] = sweeps[key].wall_s / points
        figures[f"{key}_per_point_ratio"] = figures[f"{key}_per_point_s"] / figures[plain_key]
    stages = sorted({stage for r in one.rows for stage in r.stage_s})
    figures["point_stage_s_median"] = {stage: statistics.median(r.stage_s.get(stage, 0.0) for r in one.rows)
                                       for stage in stages}
    notes = [setup, "inside a point (median s): "
             + ", ".join(f"{k} {v:.2f}" for k, v in figures["point_stage_s_median"].items())]
    for label, many, single, ratio in (("starting their workers", every, one, "wall_ratio"),
                                       ("in workers kept idle", warm_every, warm_one, "warm_wall_ratio")):
        notes.append(f"{label}: {len(many.workers)} workers {many.wall_s:.1f} s, 1 worker {single.wall_s:.1f} s, "
                     f"ratio {figures[ratio]:.2f}")
    for note in notes[1:]:
        console.print(note)

    def workers(result: explorer.Sweep, kind: str = "") -> str:
        """'1 worker', '2 kept workers on the one GPU'."""
        n = len(result.workers)
        return f"{n} {kind}worker" + ("s" if n > 1 else "") + (" on the one GPU" if n > 1 and gpus == 1 else "")

    table = recording.Table(["", "wall s", "per point s", "/ plain"])
    table.add(f"plain `explorer.compile` + `c.profile()` in a warm process (mean of {len(plain)})", "",
              f"{figures['plain_per_point_s']:.2f}", "1.00")
    table.add(f"a point inside its worker (median of `row.wall_s`, {workers(one)})", "",
              f"{figures['point_wall_s_median']:.2f}",
              f"{figures['point_wall_s_median'] / figures['plain_per_point_s']:.2f}")
    table.add(f"sweep, {workers(one)}, started for it", f"{one.wall_s:.1f}", f"{figures['one_worker_per_point_s']:.2f}",
              f"{figures['one_worker_per_point_ratio']:.2f}")
    table.add(f"sweep, {workers(every)}, started for it", f"{every.wall_s:.1f}", f"{every.wall_s / points:.2f}", "")
    table.add(f"at a quarter of the length: plain (mean of {len(plain_shortest)})", "",
              f"{figures['plain_shortest_per_point_s']:.2f}", "1.00")
    table.add(f"at a quarter of the length: sweep, {workers(warm_one, 'kept ')}", f"{warm_one.wall_s:.1f}",
              f"{figures['warm_one_worker_per_point_s']:.2f}", f"{figures['warm_one_worker_per_point_ratio']:.2f}")
    table.add(f"at half the length: sweep, {workers(warm_every, 'kept ')}", f"{warm_every.wall_s:.1f}",
              f"{warm_every.wall_s / points:.2f}", "")
    print(table.text())
    if args.out:
        args.out.write_text(json.dumps(figures, indent=1))
    recording.record(args, [table], device=device, notes=notes)


if __name__ == "__main__":
    main()
