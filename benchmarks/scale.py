"""What the explorer costs as a model grows: a training step of 1, 4 and 24 transformer blocks.

For each size, in one process: plain ``torch.compile`` and ``explorer.compile`` (caches bypassed,
Dynamo reset before each, forward + backward, alternating), then on the explorer's capture
a save right after the capture, the compiled step's own run time (10 runs, no profiler), ``c.profile(runs=10)`` (its cost, the wall time of a
profiled run, and the share of device time it could not attribute), ``c.check_numerics()``, ``c.save`` as JSON and as ``.json.gz`` (sizes),
``explorer.load`` and ``to_html``. Prints a markdown table and, per column, the growth from the
smallest to the largest model next to the growth of the model itself (post-grad nodes).

    python benchmarks/scale.py [--layers 1,4,24] [--device cuda] [--dim 256] [--tokens 256] [--batch 8]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import explorer  # noqa: E402
from benchmarks import recording  # noqa: E402
from compiler._torch import inductor_config  # noqa: E402
from compiler.runs import replay  # noqa: E402
from tests.workloads import TransformerBlock  # noqa: E402

COLUMNS = ("plain s", "explorer s", "ratio", "first save s", "run ms", "profile s", "profiled run ms", "unattributed %",
           "check s", "save s", "JSON MB", "gz MB", "load s", "html s")


def _timed(fn) -> tuple[float, object]:
    start = time.perf_counter()
    value = fn()
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    return time.perf_counter() - start, value


def _plain(model, x) -> None:
    with inductor_config.patched({"force_disable_caches": True}):
        torch.compile(model)(x).sum().backward()


def _run_time(c, runs: int) -> float:
    """Seconds for ``runs`` runs of the captured step as c.profile() runs it, without the profiler (after 3
    warm-up runs): what the profile's cost is measured against."""
    run = replay.runner(c)
    for _ in range(3):
        run()
    replay.synchronize(c.device)
    seconds, _ = _timed(lambda: [run() for _ in range(runs)])
    return seconds


def measure(layers: int, device: str, dim: int, tokens: int, batch: int, tmp: Path) -> dict[str, float]:
    torch.manual_seed(0)
    model = torch.nn.Sequential(*[TransformerBlock(dim=dim, heads=4) for _ in range(layers)]).to(device)
    x = torch.randn(batch, tokens, dim, device=device, requires_grad=True)
    torch._dynamo.reset()
    plain_s, _ = _timed(lambda: _plain(model, x))
    torch._dynamo.reset()
    explorer_s, c = _timed(lambda: explorer.compile(model, x, backward=True, cache=False))  # as plain: no cache
    first_save_s, _ = _timed(lambda: c.save(tmp / f"l{layers}-first.json"))  # what a save right after the capture costs
    run_s = _run_time(c, runs=10)
    profile_s, p = _timed(lambda: c.profile(runs=10))
    print(f"{layers} blocks: profile unattributed {p.unattributed_ms:.3f} of {p.total_ms:.3f} ms: "
          + ", ".join(f"{name} {ms:.3f}" for name, ms in list(p.unattributed.items())[:5]), flush=True)
    check_s, _ = _timed(c.check_numerics)
    save_s, path = _timed(lambda: c.save(tmp / f"l{layers}.json"))
    packed = c.save(tmp / f"l{layers}.json.gz")
    load_s, _ = _timed(lambda: explorer.load(packed))
    html_s, _ = _timed(lambda: c.to_html(tmp / f"l{layers}.html"))
    return {"layers": layers, "nodes": sum(len(g.post_grad) for g in c.graphs), "kernels": len(c.kernels),
            "plain s": plain_s, "explorer s": explorer_s, "ratio": explorer_s / plain_s, "first save s": first_save_s,
            "run ms": 1e3 * run_s / 10,
            "profile s": profile_s, "profiled run ms": p.wall_ms, "unattributed %": 100 * p.unattributed_ms / p.total_ms, "check s": check_s, "save s": save_s, "JSON MB": path.stat().st_size / 1e6,
            "gz MB": packed.stat().st_size / 1e6, "load s": load_s, "html s": html_s}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", default="1,4,24")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--dim", type=int, default=256)
    parser.add_argument("--tokens", type=int, default=256)
    parser.add_argument("--batch", type=int, default=8)
    recording.add_argument(parser)
    args = parser.parse_args()
    sizes = [int(n) for n in args.layers.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        _plain(TransformerBlock(dim=args.dim, heads=4).to(args.device),  # the first compile pays imports
               torch.randn(1, 8, args.dim, device=args.device, requires_grad=True))
        rows = [measure(n, args.device, args.dim, args.tokens, args.batch, Path(tmp)) for n in sizes]
    name = torch.cuda.get_device_name() if args.device.startswith("cuda") else "CPU"
    setup = (f"{name}, torch {torch.__version__}; training step of N blocks (d={args.dim}, {args.batch}x{args.tokens} "
             "tokens), one run each")
    print(setup)
    notes = [setup]
    table = recording.Table(["blocks", "post-grad nodes", "kernels", *COLUMNS])
    for r in rows:
        table.add(r["layers"], r["nodes"], r["kernels"],
                  *(f"{r[c]:.3f}" if c == "ratio" else f"{r[c]:.2f}" for c in COLUMNS))
    print(table.text())
    if len(rows) > 1:
        first, last = rows[0], rows[-1]
        notes.append(f"growth from {first['layers']} to {last['layers']} blocks: nodes x{last['nodes'] / first['nodes']:.1f}; "
                     + ", ".join(f"{c} x{last[c] / first[c]:.1f}" for c in COLUMNS
                                 if c not in ("ratio", "unattributed %") and first[c]))
        print(notes[-1])
    recording.record(args, [table], device=args.device, notes=notes)


if __name__ == "__main__":
    main()
