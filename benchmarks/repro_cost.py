"""What reproducers cost on a real model: k.repro of every generated kernel and g.repro of every graph.

A training step (forward + backward) of N transformer blocks is captured once; then every generated
kernel's reproducer is written with its captured inputs (each runs the compiled program once to take
the kernel's arguments at launch) and with random ones, and every Dynamo graph's reproducer; the table
gives seconds to write all of them, per kernel, and the total size of the scripts and tensor files.
``--check N`` also runs the first N kernel scripts in fresh interpreters and counts those that exit 0.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import explorer  # noqa: E402
from benchmarks import recording  # noqa: E402
from tests.workloads import TransformerBlock  # noqa: E402


def _size_mb(folder: Path) -> float:
    return sum(p.stat().st_size for p in folder.iterdir()) / 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=24)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--dim", type=int, default=256)
    parser.add_argument("--tokens", type=int, default=256)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--check", type=int, default=20, help="run this many kernel scripts and count exits 0")
    recording.add_argument(parser)
    args = parser.parse_args()
    torch.manual_seed(0)
    model = torch.nn.Sequential(*[TransformerBlock(dim=args.dim, heads=4) for _ in range(args.layers)]).to(args.device)
    x = torch.randn(args.batch, args.tokens, args.dim, device=args.device, requires_grad=True)
    started = time.perf_counter()
    c = explorer.compile(model, x, backward=True, progress_display=False)
    compile_s = time.perf_counter() - started
    kernels = [k for k in c.kernels if k.language != "extern"]
    table = recording.Table(["what", "count", "write s", "per item s", "MB"])
    with tempfile.TemporaryDirectory() as tmp:
        for inputs in ("captured", "random"):
            folder = Path(tmp) / inputs
            began = time.perf_counter()
            for k in kernels:
                k.repro(folder / f"{k.graph.id}_{k.id}.py", inputs=inputs)
            seconds = time.perf_counter() - began
            table.add(f"k.repro, {inputs} inputs", len(kernels), f"{seconds:.2f}", f"{seconds / len(kernels):.3f}",
                      f"{_size_mb(folder):.1f}")
        folder = Path(tmp) / "graphs"
        began = time.perf_counter()
        scripts = c.repro(folder)
        seconds = time.perf_counter() - began
        table.add("c.repro (Dynamo graphs)", len(scripts), f"{seconds:.2f}", f"{seconds / max(len(scripts), 1):.3f}",
                  f"{_size_mb(folder):.1f}")
        ran = sorted((Path(tmp) / "captured").glob("*.py"))[:args.check]
        passed = sum(subprocess.run([sys.executable, str(p)], capture_output=True).returncode == 0 for p in ran)
    print(table.text())
    notes = [f"training step of {args.layers} blocks (d={args.dim}, {args.batch}x{args.tokens} tokens) on "
             f"{args.device}: {len(c.kernels)} kernels ({len(kernels)} generated), captured in {compile_s:.1f} s",
             f"{passed} of {len(ran)} captured-input kernel scripts exit 0 in a fresh interpreter"]
    print("\n".join(notes))
    recording.record(args, [table], device=args.device, notes=notes)


if __name__ == "__main__":
    main()
