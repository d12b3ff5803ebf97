"""Bytes and FLOPs a kernel must move and compute, from the trace alone (works on loaded traces too).

Bytes: Inductor's own estimate for Triton kernels (``kernel_num_gb`` in inductor_meta, or the harness's
``num_gb``); for extern calls, every tensor input read once and the output written once.
FLOPs: Inductor's ``kernel_flop`` where it computed one; otherwise 2*M*N*K per matmul node and one
operation per output element for every other node.

This is the one place the rule lives: the trace writer stores each kernel's result as its ``cost``
(``kernel_costs``, compiler/SCHEMA.md), so the views read the numbers instead of deriving them again.
Sizes that are symbols count as unknown (0), and names a kernel lists that its graph lacks are skipped:
a trace read from a log is written with whatever its graph holds.
"""

from __future__ import annotations

import math
import re
from typing import Any, Mapping

_MATMULS = {"aten.mm.default": "mm", "aten.addmm.default": "addmm", "aten.bmm.default": "bmm",
            "aten.baddbmm.default": "baddbmm"}
_DTYPE_BYTES = {"torch.float32": 4, "torch.float16": 2, "torch.bfloat16": 2, "torch.float64": 8,
                "torch.int64": 8, "torch.int32": 4, "torch.int8": 1, "torch.uint8": 1, "torch.bool": 1}


def _numel(shape: Any) -> int:
    try:
        return math.prod(int(s) for s in shape) if shape is not None else 0
    except (TypeError, ValueError):  # a symbolic size
        return 0


def _nbytes(node: Any) -> int:
    return _numel(node.shape) * _DTYPE_BYTES.get(node.dtype or "", 4)


def _nodes(graph: Any) -> dict[str, Any]:
    """The graph's post-grad nodes by name, looked up once per graph (a graph may hold 100,000 nodes)."""
    return {n.name: n for n in graph.post_grad.nodes} if graph is not None else {}


def _bytes(kernel: Any, nodes: Mapping[str, Any]) -> float | None:
    meta = kernel.meta.get("inductor_meta") or {}
    if isinstance(meta.get("kernel_num_gb"), (int, float)):
        return float(meta["kernel_num_gb"]) * 1e9
    match = re.search(r"^\s*num_gb = ([0-9.eE+-]+)\s*$", kernel.source, re.MULTILINE)
    if match:
        return float(match.group(1)) * 1e9
    if kernel.language == "extern" and nodes:
        first = [nodes[n] for n in kernel.post_grad_nodes[:1] if n in nodes]
        total = sum(_nbytes(n) + sum(_nbytes(nodes[i]) for i in n.inputs if i in nodes) for n in first)
        return float(total) or None
    return None


def _node_flops(node: Any, nodes: Mapping[str, Any]) -> float:
    kind = _MATMULS.get(node.target)
    shape = node.shape or []
    if kind and len(shape) >= 2:
        inputs = [nodes[i] for i in node.inputs if i in nodes]
        mat = inputs[-2] if kind in ("addmm", "baddbmm") and len(inputs) >= 2 else inputs[0] if inputs else None
        k = _numel(list(mat.shape or [0])[-1:]) if mat is not None else 0
        return 2.0 * _numel(shape) * k
    return float(_numel(shape))


def _flops(kernel: Any, nodes: Mapping[str, Any]) -> float | None:
    meta = kernel.meta.get("inductor_meta") or {}
    if isinstance(meta.get("kernel_flop"), (int, float)) and meta["kernel_flop"] > 0:
        return float(meta["kernel_flop"])
    names = kernel.post_grad_nodes[:1] if kernel.language == "extern" else kernel.post_grad_nodes
    total = sum(_node_flops(nodes[n], nodes) for n in names if n in nodes)
    return total or None


def kernel_bytes(kernel: Any, graph: Any) -> float | None:
    return _bytes(kernel, _nodes(graph))


def kernel_flops(kernel: Any, graph: Any) -> float | None:
    return _flops(kernel, _nodes(graph))


def kernel_costs(graph: Any) -> dict[str, dict[str, float | None]]:
    """Every kernel of ``graph`` -> ``{"bytes": ..., "flops": ...}`` (None where the rule gives none): what
    the trace stores as each kernel's ``cost``."""
    nodes = _nodes(graph)
    return {k.id: {"bytes": _bytes(k, nodes), "flops": _flops(k, nodes)} for k in graph.kernels}


def main_dtype(kernel: Any, graph: Any) -> str:
    if graph is None or not kernel.post_grad_nodes:
        return "float32"
    node = graph.post_grad.node(kernel.post_grad_nodes[0])
    return (node.dtype or "torch.float32").replace("torch.", "")
