"""What hardware counters cost: ``c.counters()`` over the slowest kernels of a GPT block, and
``k.counters()`` of one kernel, on the GPU with Nsight Compute.

The block is tests/workloads.TransformerBlock (pre-norm attention + MLP, inference) at GPT-2 size by
default. It is compiled, profiled (so "slowest" means something), then measured: every figure is the
wall time a notebook user waits, from the call to the report (worker start, Triton compiles in the
worker, every ncu replay pass, the exports and the parsing). Prints the report and writes the times,
and each kernel's bound-by and SOL figures, as JSON with ``--out``.

    python benchmarks/counters.py [--dim 768 --heads 12 --seq 512 --batch 8] [--top 10] [--out counters.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402
from rich.console import Console  # noqa: E402

import explorer  # noqa: E402
from benchmarks import recording  # noqa: E402
from compiler.model import progress  # noqa: E402
from tests import workloads  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dim", type=int, default=768)
    parser.add_argument("--heads", type=int, default=12)
    parser.add_argument("--seq", type=int, default=512)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--top", type=int, default=10)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--save", type=Path, help="save the trace, counters included")
    recording.add_argument(parser)
    args = parser.parse_args()
    torch.manual_seed(0)
    model = workloads.TransformerBlock(args.dim, args.heads).cuda()
    x = torch.randn(args.batch, args.seq, args.dim, device="cuda")
    with torch.no_grad():
        c = explorer.compile(model, x)
        c.profile(runs=10)
    slowest = max((k for k in c.kernels if k.language in ("triton", "template")), key=c.profiles[-1].ms)
    started = time.perf_counter()
    one = slowest.counters()
    one_s = time.perf_counter() - started
    steps: list[progress.Step] = []
    started = time.perf_counter()
    with progress.task("benchmark", steps.append):
        report = c.counters(top=args.top)
    many_s = time.perf_counter() - started
    print("steps (stage, done, s since start): " + ", ".join(f"{s.stage} {s.done} {s.elapsed:.1f}" for s in steps))
    Console(width=180).print(report)
    table = recording.Table(["", "figure"])
    table.add(f"`k.counters()` of the block's slowest Triton kernel (`{slowest.id}`)", f"{one_s:.1f} s")
    table.add(f"`c.counters(top={args.top})` of the block ({len(report.kernels)} kernels)", f"{many_s:.1f} s")
    print(table.text())
    result = {"device": torch.cuda.get_device_name(), "tool": report.tool, "one_kernel_s": one_s,
              "one_kernel": slowest.id, "top": args.top, "kernels_measured": len(report.kernels), "many_s": many_s,
              "kernels": [{"kernel": k.kernel, "us": k.duration_ns / 1e3, "bound_by": k.bound_by,
                           "memory_sol": k.memory_sol, "compute_sol": k.compute_sol, "samples": k.samples}
                          for k in report.kernels],
              "one": repr(one), "steps": [[s.stage, s.done, s.elapsed] for s in steps]}
    if args.out:
        args.out.write_text(json.dumps(result, indent=1))
    if args.save:
        c.save(args.save)
    recording.record(args, [table], device="cuda",
                     notes=[f"block dim {args.dim}, {args.heads} heads, x {tuple(x.shape)} fp32, inference"])


if __name__ == "__main__":
    main()
