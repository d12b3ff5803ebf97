"""Memory plans under the memory toggles, and (on a GPU) measured peaks and the cost of k.ir and g.wrapper.fx.

    python benchmarks/memory_ir.py            # CPU: planned peaks; GPU: also measured peaks and capture costs

1. The transformer block's planned peak (g.memory.peak_bytes) with Inductor's defaults and with each of
   allow_buffer_reuse, inplace_buffers, reorder_for_peak_memory off; and the two-branch workload where
   memory-aware reordering alone (locality reordering off) changes the peak.
2. GPU: the planned peak against torch.cuda.max_memory_allocated around one run (c.measure_memory()),
   for transformer blocks of a few sizes.
3. GPU: what capturing k.ir (IR files + SASS) and g.wrapper.fx (FX conversion) adds to a compile,
   as seconds and as a fraction of the whole capture.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import explorer  # noqa: E402
from benchmarks import recording  # noqa: E402
from compiler.model.formatting import fmt_bytes  # noqa: E402
from tests import workloads  # noqa: E402

TOGGLES = [{}, {"allow_buffer_reuse": False}, {"inplace_buffers": False}, {"reorder_for_peak_memory": False}]


def _block(device: str, dim: int = 64, heads: int = 4, shape: tuple[int, int] = (2, 16)):
    torch.manual_seed(0)
    model = workloads.TransformerBlock(dim, heads).to(device).eval().requires_grad_(False)
    return model, torch.randn(*shape, dim, device=device)


def planned_peaks(device: str) -> recording.Table:
    model, x = _block(device)
    table = recording.Table(["toggles", "planned peak", "reuses", "in-place", "steps"],
                            title=f"transformer block {tuple(x.shape)} on {device}: planned peak by toggle")
    for config in TOGGLES:
        m = explorer.compile(model, x, config=config or None).graphs[0].memory
        inplace = sum(b.kind == "inplace" for b in m.buffers)
        toggles = ", ".join(f"`{key}={value}`" for key, value in config.items()) or "defaults"
        table.add(toggles, fmt_bytes(m.peak_bytes), len(m.reuse_marks) - inplace, inplace, len(m.steps))
    torch.manual_seed(0)
    args = tuple(t.to(device) for t in (torch.randn(64, 32), torch.randn(32, 2048), torch.randn(32, 2048)))
    on, off = (explorer.compile(workloads.two_branches, *args,
                                config={"reorder_for_locality": False, "reorder_for_peak_memory": reorder}).graphs[0].memory
               for reorder in (True, False))
    table.add("two matmul branches, locality reordering off, `reorder_for_peak_memory` on / off",
              f"{fmt_bytes(on.peak_bytes)} / {fmt_bytes(off.peak_bytes)}",
              f"{len(on.reuse_marks)} / {len(off.reuse_marks)}", "", f"{len(on.steps)} / {len(off.steps)}")
    print(f"\n{table.text()}")
    return table


def measured_peaks() -> recording.Table:
    table = recording.Table(["block", "planned", "measured", "measured/planned"],
                            title="planned vs measured peak (torch.cuda.max_memory_allocated around one run)")
    for dim, heads, shape in ((256, 4, (8, 128)), (512, 8, (8, 512)), (1024, 16, (4, 1024))):
        model, x = _block("cuda", dim, heads, shape)
        c = explorer.compile(model, x)
        (m,) = c.measure_memory()
        table.add(f"dim {dim}, x {tuple(x.shape)}", fmt_bytes(m.estimated_bytes), fmt_bytes(m.peak_bytes),
                  f"{m.ratio:.3f}")
    print(f"\n{table.text()}")
    return table


def capture_costs() -> recording.Table:
    table = recording.Table(["workload", "kernels", "capture s", "k.ir s", "fx s", "(k.ir + fx)/capture"],
                            title="cost of k.ir and g.wrapper.fx inside a GPU capture")
    model, x = _block("cuda", 512, 8, (8, 512))
    cases = {"transformer block": (model, (x,)),
             "reduction": (workloads.reduction_with_pointwise, (torch.randn(2048, 2048, device="cuda"),))}
    for name, (fn, args) in cases.items():
        c = explorer.compile(fn, *args)
        ir = sum(g.timings.get("kernel_ir", 0.0) for g in c.graphs)
        fx = sum(g.wrapper.fx.seconds or 0.0 for g in c.graphs if g.wrapper.fx is not None)
        total = c.timings["total"]
        table.add(name, len(c.kernels), f"{total:.2f}", f"{ir:.3f}", f"{fx:.3f}", f"{(ir + fx) / total:.1%}")
    print(f"\n{table.text()}")
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    recording.add_argument(parser)
    args = parser.parse_args()
    device = "cuda" if torch.cuda.is_available() else "cpu"
    tables = [planned_peaks(device)]
    if device == "cuda":
        tables += [measured_peaks(), capture_costs()]
    recording.record(args, tables, device=device)


if __name__ == "__main__":
    main()
