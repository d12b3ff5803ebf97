"""The body every kernel reproducer shares: its inputs, its check, its timing, its command line.

compiler/runs/repro.py copies these functions as source into each script it writes (the script runs
without this package), after the constants they take as arguments; the writer calls ``make_args`` too,
so a script's random inputs are the very tensors the writer computed the saved outputs on. Each function
is self-contained: the script imports argparse and torch, nothing else at its top.
"""

from __future__ import annotations

import argparse
from typing import Any

import torch


def make_args(specs: list[Any], seed: int) -> list[Any]:
    """Seeded random tensors of each spec's shape, strides, dtype and device, scalars as they are.

    Floats are normal; integers and bools are zeros (they may index memory, or be a scan's workspace,
    which must start zeroed), as Inductor's own ``rand_strided``. Drawn on the CPU, then moved, so
    the same seed gives the same values on every device."""
    generator = torch.Generator().manual_seed(seed)
    args = []
    for spec in specs:
        if not isinstance(spec, dict):
            args.append(spec)
            continue
        dtype, shape, stride = getattr(torch, spec["dtype"]), spec["shape"], spec["stride"]
        extent = 1 + sum((n - 1) * s for n, s in zip(shape, stride)) if all(shape) else 0
        if dtype.is_floating_point or dtype.is_complex:
            base = torch.randn(extent, generator=generator).to(dtype)
        else:
            base = torch.zeros(extent, dtype=dtype)
        args.append(base.to(spec["device"]).as_strided(shape, stride))
    return args


def check(args: list[Any], expected: dict[int, Any] | None, names: dict[int, str],
          tolerances: dict[str, tuple[float, float]]) -> int:
    """Compare each written argument with its saved value, print a line each; 0 when all match, 1 printing
    the largest error. An output matches element by element (``|got - saved| <= atol + rtol * |saved|``,
    NaNs equal) or, failing that, at its own scale (largest error <= ``atol + rtol * max |saved|``): a
    scan or a split reduction adds in another order on each launch, and its error grows with the running
    sum, not with each element."""
    if expected is None:
        print("no saved outputs: ran only")
        return 0
    worst, failed = 0.0, []
    for position, saved in expected.items():
        name = names.get(position, f"argument {position}")
        rtol, atol = tolerances.get(str(saved.dtype).removeprefix("torch."), (0.0, 0.0))
        got, want = args[position].double(), saved.to(args[position].device).double()
        same = (got == want) | (got.isnan() & want.isnan())
        error = torch.where(same, 0.0, (got - want).abs()).nan_to_num(nan=float("inf"))
        largest = float(error.max()) if error.numel() else 0.0
        scale = float(want.abs().nan_to_num(nan=0.0, posinf=0.0, neginf=0.0).max()) if want.numel() else 0.0
        matches = bool((same | (error <= atol + rtol * want.abs())).all()) or largest <= atol + rtol * scale
        worst = max(worst, largest)
        print(f"{name}: max abs error {largest:.6g} (rtol {rtol:g}, atol {atol:g}): {'ok' if matches else 'MISMATCH'}")
        if not matches:
            failed.append(name)
    if failed:
        print(f"MISMATCH: max error {worst:.6g} ({', '.join(failed)} differ from the saved outputs)")
        return 1
    print("outputs match the saved ones")
    return 0


def bench(run: Any, device: str) -> float:
    """Milliseconds per call: Triton's ``do_bench`` on a GPU (L2 flushed between calls), torch's
    benchmark ``Timer`` (median of blocked runs) on the CPU."""
    if device.startswith("cuda"):
        from triton.testing import do_bench

        return float(do_bench(run))
    from torch.utils.benchmark import Timer

    return Timer("run()", globals={"run": run}).blocked_autorange(min_run_time=0.5).median * 1e3


def main(load: Any, launch: Any, specs: list[Any], names: dict[int, str], inputs: str, seed: int,
         tensors: Any, tolerances: dict[str, tuple[float, float]]) -> int:
    parser = argparse.ArgumentParser(description="Launch the kernel once and compare what it wrote with the "
                                     "saved outputs: exit 0 when they match, 1 when they do not.")
    parser.add_argument("--bench", action="store_true", help="also time the kernel")
    options = parser.parse_args()
    saved = torch.load(tensors, weights_only=True) if tensors is not None else {}
    args = saved["inputs"] if inputs == "captured" else make_args(specs, seed)
    print(f"inputs: {'captured' if inputs == 'captured' else f'random (seed {seed})'}")
    kernel = load()
    launch(kernel, args)
    status = check(args, saved.get("outputs"), names, tolerances)
    if options.bench:
        device = str(next(a.device for a in args if isinstance(a, torch.Tensor)))
        print(f"time: {bench(lambda: launch(kernel, args), device):.4f} ms per launch")
    return status
