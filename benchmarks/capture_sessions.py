"""Capture cost as a notebook session meets it: each mode alone in its own fresh process.

``capture_overhead.py`` alternates plain and explorer compiles in one process, so whatever one mode
warms up (imports, Inductor's Triton compile workers and what they have imported) the other one
inherits. A notebook runs one of them. Here every process runs a single mode: ``--compiles`` compiles
back to back (a transformer block and an MLP in turn, Dynamo reset and Inductor's caches bypassed
before each), then ``--after-idle`` more with a pause before each, long enough that Inductor's compile
workers have quiesced (they do after ``quiesce_async_compile_time``: 60 s by default, 2 s here, so the
pause is 4 s rather than a minute). Processes run alternately, ``--processes`` per mode.

Per mode it prints the median compile + first run time and the median of Inductor's wait for its
Triton compile workers (``async_compile.wait``), over the compiles after the first two of each process
(they pay the imports and compile kernels in the main process while the worker pool starts), and the
ratio to plain.

``--layers N`` times a training step (forward + backward) of N transformer blocks instead (d=256,
8x256 tokens), the model of the cost table in docs/figures.md; at 24 blocks a compile takes 30 to 45 s, so
``--compiles 3 --after-idle 0 --skip 1`` keeps a run within minutes. Each mode's first compile in its
fresh processes (imports, CUDA's context, the compile-worker pool's start) is printed against plain's too.

``--eager-import`` adds a third mode: the capture with the kernel harness's Dynamo import back at the top
of each kernel module (as Inductor writes it), which every compile worker then runs.

    python benchmarks/capture_sessions.py [--device cuda] [--processes 2] [--compiles 8] [--after-idle 4]
                                          [--layers N] [--skip 2] [--eager-import]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks import recording  # noqa: E402

QUIESCE_S = 2.0


def session(mode: str, device: str, compiles: int, after_idle: int, layers: int) -> list[dict]:
    """Run in a fresh process: one mode's compiles, as JSON lines (seconds, wait, idle or not)."""
    import contextlib

    sys.path.insert(0, str(ROOT / "benchmarks"))
    import capture_overhead as co

    import explorer
    from compiler._torch import benchmark_harness, inductor_config, timing

    explorer.progress.off()
    if mode == "eager-import":
        benchmark_harness.lazy_harness_import = contextlib.nullcontext
    run = "plain" if mode == "plain" else "explorer"
    loads = list(co.workloads(device, layers).items())
    if layers:
        loads = loads[-1:]  # the N-block training step only
    rows = []
    with inductor_config.patched({"quiesce_async_compile_time": QUIESCE_S}):  # read when the pool starts
        for number in range(compiles + after_idle):
            idle = number >= compiles
            co.IDLE["seconds"] = 2 * QUIESCE_S if idle else 0.0
            name, (fn, args, backward) = loads[number % len(loads)]
            seconds = co.timed(run, fn, args, backward)
            wait = timing.since({}).get("async_compile.wait", 0.0)  # Dynamo's timers restart at each reset
            rows.append({"mode": mode, "workload": name, "number": number, "idle": idle, "s": seconds, "wait": wait})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--processes", type=int, default=2, help="fresh processes per mode")
    parser.add_argument("--compiles", type=int, default=8, help="compiles back to back in each process")
    parser.add_argument("--after-idle", type=int, default=4, help="compiles after a pause, in each process")
    parser.add_argument("--layers", type=int, default=0, help="time N transformer blocks, forward + backward")
    parser.add_argument("--skip", type=int, default=2, help="compiles per process left out of the medians")
    parser.add_argument("--eager-import", action="store_true", help="also the capture with the harness import eager")
    parser.add_argument("--session", help=argparse.SUPPRESS)  # internal: run one mode here
    recording.add_argument(parser)
    args = parser.parse_args()
    modes = ("plain", "explorer", "eager-import") if args.eager_import else ("plain", "explorer")
    if args.session:
        for row in session(args.session, args.device, args.compiles, args.after_idle, args.layers):
            print("ROW " + json.dumps(row), flush=True)
        return
    rows: list[dict] = []
    for _ in range(args.processes):
        for mode in modes:
            out = subprocess.run([sys.executable, __file__, "--session", mode, "--device", args.device,
                                  "--compiles", str(args.compiles), "--after-idle", str(args.after_idle),
                                  "--layers", str(args.layers)],
                                 cwd=ROOT, capture_output=True, text=True, check=True).stdout
            rows += [json.loads(line[4:]) for line in out.splitlines() if line.startswith("ROW ")]
    setup = (f"device {args.device}, {args.processes} fresh processes per mode, {args.compiles} compiles back to back "
             f"+ {args.after_idle} after idling (first {args.skip} per process not counted)")
    print(setup)
    eager = ["as before (eager import) / plain"] if args.eager_import else []
    table = recording.Table(["workload", "when", "plain s", "explorer s", "explorer / plain", *eager,
                             *(f"{mode} wait s" for mode in modes)])
    ratios: dict[str, list[float]] = {mode: [] for mode in modes}
    for workload in dict.fromkeys(r["workload"] for r in rows):
        for idle in (False, True):
            picked = {mode: [r for r in rows if r["mode"] == mode and r["workload"] == workload and r["idle"] == idle
                             and r["number"] >= args.skip] for mode in modes}
            if not all(picked.values()):
                continue
            seconds = {mode: statistics.median(r["s"] for r in chosen) for mode, chosen in picked.items()}
            for mode in modes:
                ratios[mode].append(seconds[mode] / seconds["plain"])
            table.add(workload, "after idling" if idle else "back to back", f"{seconds['plain']:.2f}",
                      f"{seconds['explorer']:.2f}", *(f"{ratios[mode][-1]:.3f}" for mode in modes[1:]),
                      *(f"{statistics.median(r['wait'] for r in chosen):.2f}" for chosen in picked.values()))
    table.add("median", "", "", "", f"**{statistics.median(ratios['explorer']):.3f}**",
              *(f"{statistics.median(ratios[mode]):.3f}" for mode in modes[2:]), *("" for _ in modes))
    print(table.text())
    first = {mode: statistics.median(r["s"] for r in rows if r["mode"] == mode and r["number"] == 0) for mode in modes}
    first_line = "first compile of a fresh process (median s): " + ", ".join(
        f"{mode} {seconds:.2f} ({seconds / first['plain']:.3f})" for mode, seconds in first.items())
    print(first_line)
    recording.record(args, [table], device=args.device, notes=[setup, first_line])


if __name__ == "__main__":
    main()
