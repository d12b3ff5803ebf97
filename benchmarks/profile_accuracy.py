"""How well c.profile() and k.bench() agree with each other and with torch.profiler, and what profiling costs.

    PYTHONPATH=. python benchmarks/profile_accuracy.py [--json out.json]

For a transformer block and a 2-layer GPT-2 built from a transformers config (no download), on the GPU:
- per kernel, k.bench().ms / profile.kernel_ms (k.bench's own in-place run vs the profile's), and
  k.bench().isolated_ms / profile.kernel_ms (the kernel alone in a loop, caches warm, vs in place), for
  every Triton kernel and extern call;
- per Triton kernel, profile.kernel_ms / the kernel's time in torch.profiler's own table for a plain
  (unmarked) run of the compiled function;
- the worst of each ratio over kernels of at least 5 us in place (target: within 10%);
- profiling overhead: c.profile(runs=20) wall time / the wall time of 20 plain runs.
Without a GPU it runs small sizes on CPU and prints the overhead and the in-place kernel table only.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import explorer  # noqa: E402
from benchmarks import recording  # noqa: E402
from compiler.runs import replay  # noqa: E402
from tests.workloads import TransformerBlock  # noqa: E402

MIN_US = 5.0
RATIOS = {"bench_ratio": "bench / in place", "alone_ratio": "alone / in place",
          "profiler_ratio": "in place / torch.profiler"}


def workloads(device: str) -> dict[str, tuple]:
    from transformers import GPT2Config, GPT2Model

    torch.manual_seed(0)
    big = device == "cuda"
    dim, batch, seq = (1024, 8, 512) if big else (128, 2, 64)
    config = GPT2Config(n_layer=2, n_embd=768 if big else 128, n_head=12 if big else 4, vocab_size=50257 if big else 1000, bos_token_id=0, eos_token_id=0,
                        n_positions=1024)
    gpt2 = GPT2Model(config).eval().to(device)
    return {
        "transformer block": (TransformerBlock(dim, 16 if big else 4).eval().to(device),
                              (torch.randn(batch, seq, dim, device=device),)),
        "GPT-2 (2 layers)": (gpt2, (torch.randint(0, config.vocab_size, (batch, seq), device=device),)),
    }


def plain_table(c, runs: int) -> dict[str, float]:
    """CUDA kernel name -> mean ms per run, from torch.profiler's own events of plain runs."""
    run = replay.runner(c)
    run()
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(runs):
            run()
        torch.cuda.synchronize()
    out: dict[str, float] = defaultdict(float)
    for event in prof.events():
        if event.device_type == torch.autograd.DeviceType.CUDA:
            out[event.name] += event.device_time / 1e3 / runs
    return out


def overhead(c, runs: int = 20) -> float:
    run = replay.runner(c)
    for _ in range(3):
        run()
    replay.synchronize(c.device)
    started = time.perf_counter()
    for _ in range(runs):
        run()
    replay.synchronize(c.device)
    plain = time.perf_counter() - started
    started = time.perf_counter()
    c.profile(runs=runs)
    return (time.perf_counter() - started) / plain


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    recording.add_argument(parser)
    args = parser.parse_args()
    device = "cuda" if torch.cuda.is_available() else "cpu"
    figures: dict[str, dict] = {}
    summary = recording.Table(["workload", f"kernels >= {MIN_US:.0f} us",
                               *(f"{label}, worst (median)" for label in RATIOS.values()),
                               "profile(runs=20) / 20 plain runs"])
    notes = []
    for name, (model, inputs) in workloads(device).items():
        with torch.no_grad():
            c = explorer.compile(model, *inputs)
            p = c.profile(runs=20)
            cost = overhead(c)
        row: dict = {"kernels": [], "profile_overhead": cost, "total_ms": p.total_ms,
                     "unattributed_ms": p.unattributed_ms}
        notes.append(f"{name} on {device}: {len(p.kernel_ms)} kernels, {p.total_ms:.3f} ms per run, "
                     f"{p.unattributed_ms:.3f} ms unattributed, profile(runs=20) costs {cost:.2f}x 20 plain runs")
        print(f"\n{notes[-1]}")
        cells = ["" for _ in range(1 + len(RATIOS))]  # kernels >= MIN_US and the worst ratios: on the GPU only
        if device == "cuda":
            table = plain_table(c, 20)
            kernels = recording.Table(["kernel", "in place us", "bench/in place", "alone/in place", "in place/profiler"])
            for key, ref in p.kernels.items():
                kernel = c.graph(ref.graph).kernel(ref.kernel)
                in_place = p.kernel_ms[key]
                bench = kernel.bench() if kernel.language != "cpp" else None
                own = table.get(kernel.name) if kernel.language in ("triton", "template") else None
                r_bench = bench.ms / in_place if bench and in_place else None
                r_alone = bench.isolated_ms / in_place if bench and bench.isolated_ms and in_place else None
                r_own = in_place / own if own else None
                row["kernels"].append({"kernel": key, "language": ref.language, "in_place_us": in_place * 1e3,
                                       "bench_ratio": r_bench, "alone_ratio": r_alone, "profiler_ratio": r_own})
                kernels.add(key[:46], f"{in_place * 1e3:.1f}",
                            *(f"{r:.3f}" if r else "" for r in (r_bench, r_alone, r_own)))
            print(kernels.text())
            cells = [sum(k["in_place_us"] >= MIN_US for k in row["kernels"])]
            for ratio in RATIOS:
                big = [k[ratio] for k in row["kernels"] if k[ratio] and k["in_place_us"] >= MIN_US]
                worst = max(big, key=lambda r: abs(r - 1)) if big else None
                row[f"worst_{ratio}"] = worst
                print(f"worst {ratio} over {len(big)} kernels >= {MIN_US:.0f} us: "
                      + (f"{worst:.3f}" if worst else "n/a") + (f" (median {statistics.median(big):.3f})" if big else ""))
                cells.append(f"{worst:.3f} ({statistics.median(big):.3f})" if big else "n/a")
        else:
            for key, ms in p.top_kernels(8):
                print(f"  {key:<48}{ms * 1e3:>10.1f} us")
        summary.add(name, *cells, f"{cost:.2f}x")
        figures[name] = row
    print(f"\n{summary.text()}")
    if args.json:
        args.json.write_text(json.dumps({"device": device, "figures": figures}, indent=1))
    recording.record(args, [summary], device=device, notes=notes)


if __name__ == "__main__":
    main()
