"""What a kernel's IR costs the views of a fresh GPU capture: the kernel tables, one kernel, the export.

A live capture leaves each Triton kernel's IR unbuilt (SASS from nvdisasm, then the line maps). This
script captures a training step (forward + backward) of ``--layers`` transformer blocks, then times,
through the parts the widget reads: every graph's kernel table, one Triton kernel's part (which builds
that kernel's IR), and ``c.to_html`` (which builds every IR, in parallel). ``--eager-table`` also times
the kernel tables as they were made before a kernel's IR was left to its own part: every kernel's
record with its IR, one after another, on a second fresh capture.

    python benchmarks/kernel_ir_cost.py [--layers 24] [--eager-table]
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
import widgets  # noqa: E402
from compiler.io import trace as trace_io  # noqa: E402
from tests.workloads import TransformerBlock  # noqa: E402


def _capture(layers: int) -> explorer.Compilation:
    torch.manual_seed(0)
    model = torch.nn.Sequential(*[TransformerBlock(dim=256, heads=4) for _ in range(layers)]).cuda()
    x = torch.randn(8, 256, 256, device="cuda", requires_grad=True)
    torch._dynamo.reset()
    return explorer.compile(model, x, backward=True)


def _seconds(fn) -> tuple[float, object]:
    started = time.perf_counter()
    value = fn()
    return time.perf_counter() - started, value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=24)
    parser.add_argument("--eager-table", action="store_true")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        sys.exit("kernel_ir_cost.py needs a GPU: only Triton kernels have IR to build")
    explorer.progress.off()
    capture_s, c = _seconds(lambda: _capture(args.layers))
    parts = widgets.TraceParts(c.trace_view())
    graphs = [g["id"] for g in parts.summary()["graphs"]]
    table_s, tables = _seconds(lambda: [parts.get(f"{gid}/kernels") for gid in graphs])
    gid, kernel = next((gid, row["id"]) for gid, rows in zip(graphs, tables) for row in rows if row["language"] == "triton")
    kernel_s, part = _seconds(lambda: parts.get(f"{gid}/kernel/{kernel}"))
    with tempfile.TemporaryDirectory() as tmp:
        html_s, _ = _seconds(lambda: c.to_html(Path(tmp) / "trace.html"))
    kernels = sum(len(rows) for rows in tables)
    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}: {args.layers} blocks, {kernels} kernels, "
          f"capture {capture_s:.2f} s")
    print(f"kernel tables {table_s:.3f} s; one kernel with its IR {kernel_s:.3f} s "
          f"(SASS {len(part['ir']['stages'].get('sass', ''))} characters); c.to_html {html_s:.2f} s")
    if args.eager_table:
        fresh = _capture(args.layers)
        eager_s, _ = _seconds(lambda: [trace_io.kernel_ir_to_json(k.ir) for k in fresh.kernels if k.ir is not None])
        print(f"kernel tables with every IR built one after another: {eager_s:.2f} s")


if __name__ == "__main__":
    main()
