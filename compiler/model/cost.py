"""Bytes and FLOPs a kernel must move and compute, from the trace alone (works on loaded traces too).

Bytes: Inductor's own estimate for Triton kernels (``kernel_num_gb`` in inductor_meta, or the harness's
``num_gb``); for extern calls, every tensor input read once and the output written once.
FLOPs: Inductor's ``kernel_flop`` where it computed one; otherwise 2*M*N*K per matmul node and one
operation per output element for every other node.
"""

from __future__ import annotations

import math
import re
from typing import Any

_MATMULS = {"aten.mm.default": "mm", "aten.addmm.default": "addmm", "aten.bmm.default": "bmm",
            "aten.baddbmm.default": "baddbmm"}
_DTYPE_BYTES = {"torch.float32": 4, "torch.float16": 2, "torch.bfloat16": 2, "torch.float64": 8,
                "torch.int64": 8, "torch.int32": 4, "torch.int8": 1, "torch.uint8": 1, "torch.bool": 1}


def _numel(shape: Any) -> int:
    try:
        return math.prod(int(s) for s in shape) if shape is not None else 0
    except (TypeError, ValueError):
        return 0


def _nbytes(node: Any) -> int:
    return _numel(node.shape) * _DTYPE_BYTES.get(node.dtype or "", 4)


def kernel_bytes(kernel: Any, graph: Any) -> float | None:
    meta = kernel.meta.get("inductor_meta") or {}
    if isinstance(meta.get("kernel_num_gb"), (int, float)):
        return float(meta["kernel_num_gb"]) * 1e9
    match = re.search(r"^\s*num_gb = ([0-9.eE+-]+)\s*$", kernel.source, re.MULTILINE)
    if match:
        return float(match.group(1)) * 1e9
    if kernel.language == "extern" and graph is not None:
        total = 0
        for name in kernel.post_grad_nodes[:1]:
            node = graph.post_grad.node(name)
            total += _nbytes(node) + sum(_nbytes(graph.post_grad.node(i)) for i in node.inputs)
        return float(total) or None
    return None


def node_flops(node: Any, graph: Any) -> float:
    kind = _MATMULS.get(node.target)
    shape = node.shape or []
    if kind and len(shape) >= 2:
        inputs = [graph.post_grad.node(i) for i in node.inputs]
        mat = inputs[-2] if kind in ("addmm", "baddbmm") else inputs[0]
        k = int((mat.shape or [0])[-1] or 0)
        return 2.0 * _numel(shape) * k
    return float(_numel(shape))


def kernel_flops(kernel: Any, graph: Any) -> float | None:
    meta = kernel.meta.get("inductor_meta") or {}
    if isinstance(meta.get("kernel_flop"), (int, float)) and meta["kernel_flop"] > 0:
        return float(meta["kernel_flop"])
    if graph is None:
        return None
    names = kernel.post_grad_nodes[:1] if kernel.language == "extern" else kernel.post_grad_nodes
    total = sum(node_flops(graph.post_grad.node(n), graph) for n in names)
    return total or None


def main_dtype(kernel: Any, graph: Any) -> str:
    if graph is None or not kernel.post_grad_nodes:
        return "float32"
    node = graph.post_grad.node(kernel.post_grad_nodes[0])
    return (node.dtype or "torch.float32").replace("torch.", "")
