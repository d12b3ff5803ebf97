"""A second ``explorer.compile`` of a program captured before, against plain torch.compile with warm caches.

Each compile runs alone in a fresh process, as a user's second notebook session or script does, timed
from the call to its outputs (imports and the model's construction excluded). Every round has its own
Inductor cache directory (TORCHINDUCTOR_CACHE_DIR): plain torch.compile once to fill Inductor's caches,
``explorer.compile`` once to fill its store beside them, then the measured pair, plain warm and explorer
warm, in alternating order from round to round, then plain with AOTAutograd's cache off (what tracing
and partitioning cost, which a hit there skips) and a cold capture (``cache=False``) for reference. Each
warm capture is checked to have been served (every graph ``served``) and to keep every stage. Last, the
first compile of the program with every cache empty, plain's and the explorer's (which writes Inductor's
caches and its store, where ``cache=False`` writes nothing), each in a directory of its own.

Each explorer compile also reports its compile-time report's total against the call's wall time
(``c.compile_time.seconds / seconds``): the report must account for the call, cold or warm, first in its
process or not (its ``startup`` phase holds torch's compiler imported, its ``served`` phase a warm capture's
own work).

The model is a stack of ``--blocks`` MLP blocks (LayerNorm, Linear 256->1024, GELU, Linear 1024->256,
residual), under ``torch.no_grad()``, or a training step with ``--backward``.

    python benchmarks/warm_capture.py [--blocks 8] [--rounds 3] [--backward] [--device cpu] [--record]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks import recording  # noqa: E402

MODES = ("plain", "explorer", "plain-no-aot-cache", "cold")
FIRSTS = ("plain-first", "explorer-first")  # plain and explorer once more, each alone in an empty cache directory


def one_compile(mode: str, blocks: int, backward: bool, device: str) -> dict:
    """In a fresh process: one compile of ``mode``, its seconds and what it served."""
    import time

    import torch

    class Block(torch.nn.Module):
        def __init__(self, dim: int = 256) -> None:
            super().__init__()
            self.norm, self.up, self.down = torch.nn.LayerNorm(dim), torch.nn.Linear(dim, 4 * dim), torch.nn.Linear(4 * dim, dim)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x + self.down(torch.nn.functional.gelu(self.up(self.norm(x))))

    torch.manual_seed(0)
    model = torch.nn.Sequential(*[Block() for _ in range(blocks)]).to(device)
    x = torch.randn(64, 256, device=device, requires_grad=backward)
    grad = torch.enable_grad() if backward else torch.no_grad()
    out: dict = {"mode": mode}
    if mode.startswith("plain"):
        import torch._functorch.config as functorch_config

        functorch_config.enable_autograd_cache = mode == "plain"
        started = time.perf_counter()
        with grad:
            result = torch.compile(model)(x)
            if backward:
                result.sum().backward()
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        out["seconds"] = time.perf_counter() - started
        return out
    import explorer

    explorer.progress.off()
    started = time.perf_counter()
    with grad:
        c = explorer.compile(model, x, backward=backward, cache=mode == "explorer")
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    out["seconds"] = time.perf_counter() - started
    out["report_ratio"] = c.compile_time.seconds / out["seconds"]
    out["categories"] = c.compile_time.categories()
    out["cache"] = [g.cache for g in c.graphs]
    out["stages"] = [[len(g.fx.nodes), len(g.post_grad.nodes), len(g.loop_ir), len(g.fused), len(g.kernels)]
                     for g in c.graphs]
    return out


def _run(mode: str, cache_dir: str, args: argparse.Namespace) -> dict:
    code = (f"import json, sys; sys.path.insert(0, {str(ROOT)!r}); from benchmarks.warm_capture import one_compile; "
            f"print(json.dumps(one_compile({mode!r}, {args.blocks}, {args.backward}, {args.device!r})))")
    env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": cache_dir, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--blocks", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--backward", action="store_true")
    parser.add_argument("--device", default="cpu")
    recording.add_argument(parser)
    args = parser.parse_args()
    seconds: dict[str, list[float]] = {mode: [] for mode in MODES + FIRSTS}
    ratios: list[float] = []
    report_ratios: dict[str, list[float]] = {"explorer": [], "cold": [], "explorer-first": []}
    stages_ok = True
    for round_ in range(args.rounds):
        with tempfile.TemporaryDirectory(prefix="warm-capture-") as cache_dir:
            _run("plain", cache_dir, args)  # fills Inductor's caches
            first = _run("explorer", cache_dir, args)  # fills the explorer's store
            order = ("plain", "explorer") if round_ % 2 == 0 else ("explorer", "plain")
            measured = {mode: _run(mode, cache_dir, args) for mode in order}
            no_aot_cache = _run("plain-no-aot-cache", cache_dir, args)
            cold = _run("cold", cache_dir, args)
        for mode in FIRSTS:  # what the very first compile of a program costs, every cache empty
            with tempfile.TemporaryDirectory(prefix="first-compile-") as empty:
                row = _run(mode.removesuffix("-first"), empty, args)
                seconds[mode].append(row["seconds"])
                if "report_ratio" in row:
                    report_ratios[mode].append(row["report_ratio"])
        warm = measured["explorer"]
        if set(warm["cache"]) != {"served"} or warm["stages"] != first["stages"]:
            stages_ok = False
            print(f"round {round_}: the warm capture was not served whole: {warm['cache']}", flush=True)
        for mode, row in (*measured.items(), ("plain-no-aot-cache", no_aot_cache), ("cold", cold)):
            seconds[mode].append(row["seconds"])
        ratios.append(warm["seconds"] / measured["plain"]["seconds"])
        report_ratios["explorer"].append(warm["report_ratio"])
        report_ratios["cold"].append(cold["report_ratio"])
        print(f"round {round_}: report / wall: first (cold, empty caches) {report_ratios['explorer-first'][-1]:.3f}, "
              f"cold (cache=False) {cold['report_ratio']:.3f}, warm {warm['report_ratio']:.3f}; warm report by "
              f"phase: {warm['categories']}", flush=True)
        print(f"round {round_}: plain warm {measured['plain']['seconds']:.2f} s, explorer warm {warm['seconds']:.2f} s "
              f"({ratios[-1]:.3f}x), plain without AOTAutograd's cache {no_aot_cache['seconds']:.2f} s, "
              f"explorer cold {cold['seconds']:.2f} s; first compiles: plain {seconds['plain-first'][-1]:.2f} s, "
              f"explorer {seconds['explorer-first'][-1]:.2f} s; graphs {warm['cache']}", flush=True)
    table = recording.Table(["compile", "median s", "min s", "max s", "/ plain warm (median of rounds)"])
    plain = seconds["plain"]
    for mode, label in (("plain", "plain torch.compile, warm caches"), ("explorer", "explorer.compile, warm"),
                        ("plain-no-aot-cache", "plain, warm, AOTAutograd's cache off"),
                        ("cold", "explorer.compile(cache=False)"),
                        ("plain-first", "plain torch.compile, first (empty caches)"),
                        ("explorer-first", "explorer.compile, first (empty caches: writes them and its store)")):
        values = seconds[mode]
        ratio = statistics.median(v / p for v, p in zip(values, plain))
        table.add(label, f"{statistics.median(values):.2f}", f"{min(values):.2f}", f"{max(values):.2f}", f"{ratio:.3f}")
    print(table.text())
    kind = "training step" if args.backward else "inference"
    notes = [f"{args.blocks} MLP blocks (d=256, 64 rows), {kind}, {args.device}; {args.rounds} rounds, each with its own "
             "Inductor cache directory and every compile in a fresh process; plain and explorer warm alternate",
             "every warm capture served every graph with the stages of its cold capture" if stages_ok
             else "some warm capture was not served whole (see the rounds above)",
             "a first capture against plain's first compile, both with empty caches (median of rounds): "
             f"{statistics.median(e / p for e, p in zip(seconds['explorer-first'], seconds['plain-first'])):.3f}; "
             "against a cold capture: "
             f"{statistics.median(e / c for e, c in zip(seconds['explorer-first'], seconds['cold'])):.3f}",
             "c.compile_time total / wall of the call (median of rounds): "
             + ", ".join(f"{label} {statistics.median(report_ratios[mode]):.3f}" for mode, label in (
                 ("explorer-first", "first (cold, empty caches)"), ("cold", "cold (cache=False)"),
                 ("explorer", "warm")))]
    recording.record(args, [table], device=args.device, notes=notes)


if __name__ == "__main__":
    main()
