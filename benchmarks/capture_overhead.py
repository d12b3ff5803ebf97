"""Capture overhead: plain torch.compile vs explorer.compile vs Inductor's debug trace dump.

Each round compiles every workload three ways in one process, in rotating order, with Inductor's caches
bypassed for all three (``force_disable_caches``) and Dynamo reset before each compile, and times
compile + first run. Prints the median ratios explorer/plain and debug/plain per workload and overall,
and the median of each round's own explorer/plain ratio (the two compiles of a round ran side by side).

The first rounds (``--warmup``, not counted) pay what a process pays once: imports, Inductor's compile
workers starting, lazily built tables. On a GPU the first three compiles of each mode still ran up to
2x slower than later ones, so two warm-up rounds are the default.

``--idle S`` pauses S seconds before every compile and makes Inductor's Triton compile workers quiesce
after S/2 idle seconds (instead of 60), so every compile meets sleeping workers, as a notebook's compile
does after a minute's pause between cells.

    python benchmarks/capture_overhead.py [--rounds 5] [--warmup 2] [--device cuda] [--layers 24] [--no-debug]
                                          [--idle 4]

``--layers N`` adds a training step (forward + backward) of N transformer blocks (d=256, 8x256 tokens).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import explorer  # noqa: E402
from benchmarks import recording  # noqa: E402
from compiler._torch import inductor_config  # noqa: E402
from tests.workloads import TransformerBlock  # noqa: E402


def mlp(x: torch.Tensor, w1: torch.Tensor, w2: torch.Tensor) -> torch.Tensor:
    h = torch.nn.functional.layer_norm(x, x.shape[-1:])
    return torch.relu(h @ w1) @ w2 + x


def workloads(device: str, layers: int) -> dict[str, tuple]:
    """name -> (fn, inputs, backward)."""
    torch.manual_seed(0)
    loads = {
        "transformer block": (TransformerBlock().eval().to(device), (torch.randn(2, 16, 64, device=device),), False),
        "MLP": (mlp, tuple(torch.randn(*s, device=device) for s in ((32, 64), (64, 256), (256, 64))), False),
    }
    if layers:
        stack = torch.nn.Sequential(*[TransformerBlock(dim=256, heads=4) for _ in range(layers)]).to(device)
        loads[f"{layers} blocks, train"] = (stack, (torch.randn(8, 256, 256, device=device, requires_grad=True),), True)
    return loads


NO_CACHES = {"force_disable_caches": True}


def _run(compiled, args, backward: bool) -> None:
    out = compiled(*args)
    if backward:
        out.sum().backward()


def plain(fn, args, backward: bool) -> None:
    with inductor_config.patched(NO_CACHES):
        _run(torch.compile(fn), args, backward)


def debug_dump(fn, args, backward: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        debug = {**NO_CACHES, "trace.enabled": True, "trace.debug_dir": tmp, "trace.provenance_tracking_level": 1}
        with inductor_config.patched(debug):
            _run(torch.compile(fn), args, backward)


def explore(fn, args, backward: bool) -> None:
    explorer.compile(fn, *args, dynamic=None, backward=backward, cache=False)  # caches bypassed, as plain's


MODES = {"plain": plain, "explorer": explore, "debug": debug_dump}


IDLE = {"seconds": 0.0}


def timed(mode, fn, args, backward: bool) -> float:
    torch._dynamo.reset()
    time.sleep(IDLE["seconds"])
    start = time.perf_counter()
    with torch.set_grad_enabled(backward):
        MODES[mode](fn, args, backward)
    if args[0].is_cuda:
        torch.cuda.synchronize()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--warmup", type=int, default=2, help="rounds run first and not counted")
    parser.add_argument("--layers", type=int, default=0, help="also a training step of this many blocks")
    parser.add_argument("--no-debug", action="store_true", help="skip the debug-dump mode")
    parser.add_argument("--idle", type=float, default=0.0, help="seconds of pause before each compile")
    recording.add_argument(parser)
    args = parser.parse_args()
    if args.no_debug:
        del MODES["debug"]
    if args.idle:
        IDLE["seconds"] = args.idle
        with inductor_config.patched({"quiesce_async_compile_time": args.idle / 2}):  # read when the pool starts
            measure(args)
    else:
        measure(args)


def measure(args: argparse.Namespace) -> None:
    loads = workloads(args.device, args.layers)
    first = {}
    for name, (fn, inputs, backward) in loads.items():  # warm-up: the first compile in a process pays imports
        for mode in MODES:
            first[(name, mode)] = timed(mode, fn, inputs, backward)
    for _ in range(args.warmup - 1):
        for name, (fn, inputs, backward) in loads.items():
            for mode in MODES:
                timed(mode, fn, inputs, backward)
    times = {(w, m): [] for w in loads for m in MODES}
    order = list(MODES)
    for r in range(args.rounds):
        for name, (fn, inputs, backward) in loads.items():
            for mode in order[r % len(order):] + order[: r % len(order)]:
                times[(name, mode)].append(timed(mode, fn, inputs, backward))
    first_line = (f"device {args.device}, torch {torch.__version__}, {args.rounds} rounds (medians); "
                  f"first compile in the process: " + ", ".join(f"{n} {m} {t:.2f}s" for (n, m), t in first.items()))
    print(first_line)
    debug = "debug" in MODES
    table = recording.Table(["workload", "plain s", "explorer/plain", "paired rounds", "min ratio", "debug dump/plain"])
    ratios_e, ratios_d = [], []
    for name in loads:
        p = statistics.median(times[(name, "plain")])
        e = statistics.median(times[(name, "explorer")]) / p
        low = min(times[(name, "explorer")]) / min(times[(name, "plain")])
        paired = statistics.median(e_t / p_t for e_t, p_t in zip(times[(name, "explorer")], times[(name, "plain")]))
        ratios_e.append(e)
        if debug:
            ratios_d.append(statistics.median(times[(name, "debug")]) / p)
        table.add(name, f"{p:.2f}", f"{e:.3f}", f"{paired:.3f}", f"{low:.3f}", f"{ratios_d[-1]:.3f}" if debug else "")
    table.add("median", "", f"{statistics.median(ratios_e):.3f}", "", "",
              f"{statistics.median(ratios_d):.3f}" if debug else "")
    print(table.text())
    recording.record(args, [table], device=args.device, notes=[first_line])


if __name__ == "__main__":
    main()
