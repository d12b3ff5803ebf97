"""Which Inductor systems acted on a graph: one ``FeatureUse`` per system seen acting, with its evidence
as ids (found by compiler/pipeline/feature_scan.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

SYSTEMS: dict[str, str] = {
    "combo_kernel": "horizontal fusion: independent kernels combined into one launch (combo_kernels)",
    "block_ptr": "loads and stores through tl.make_block_ptr (triton.use_block_ptr)",
    "pad_mm": "matmul operands padded to aligned sizes, or left alone, and why (shape_padding, AutoHeuristic)",
    "split_scan": "a long scan split across thread blocks that share a workspace buffer",
    "bound_check": "indirect indices checked against the tensor size (device_assert / TORCH_CHECK)",
    "subgraph": "a control-flow body (cond, while_loop, invoke_subgraph) lowered and called as its own function",
    "bitcast": "a tensor's bits reinterpreted as another dtype (Tensor.view(dtype))",
    "low_precision_cast": "values rounded to bfloat16/float16 inside the kernel (emulate_precision_casts adds them)",
}


@dataclass(frozen=True)
class FeatureUse:
    system: str  # a key of SYSTEMS
    summary: str  # what it did here, in one line
    kernel: str | None = None  # kernel id where it shows
    lines: tuple[int, ...] = ()  # kernel source lines (1-based)
    nodes: tuple[str, ...] = ()  # post-grad nodes involved
    wrapper_lines: tuple[int, ...] = ()  # wrapper lines (1-based)
    detail: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)

    def __repr__(self) -> str:
        where = f" in {self.kernel}" if self.kernel else ""
        return f"FeatureUse({self.system}{where}: {self.summary})"
