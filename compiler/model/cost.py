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

from .datasheet import lookup
from .provenance import VIEW_OPS

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


# ---- what one node costs on its own: the weight a kernel's time is split by over the nodes it computes
#
# cost = bytes + FLOPs / balance. Bytes: the node's output and every tensor it reads, as if it ran alone
# (eagerly); FLOPs: 2*M*N*K for a matmul, 2*out*Cin*kh*kw (per group) for a convolution, the two products
# of an attention, one per output element for anything else. A view or free op (reshape, permute, getitem,
# size) costs nothing. ``balance`` is the device's FLOPs per byte (its peak rate over its bandwidth), which
# puts a matmul and the pointwise work fused around it on one scale.

DEFAULT_GPU_BALANCE = 200.0  # FLOP/byte of a GPU the datasheet does not list (an H200 in bf16: 206)
CPU_BALANCE = 10.0  # FLOP/byte of a CPU: a few cores' vector units over their memory bandwidth
_LINEARS = {"mm", "bmm", "matmul", "__matmul__", "linear"}  # the first matrix is their first input
_ADD_LINEARS = {"addmm", "baddbmm"}  # the first matrix is their second input
_CONVOLUTIONS = {"convolution", "conv1d", "conv2d", "conv3d", "_convolution"}
_FREE = {"getitem", "size", "dim", "numel", "stride", "sym_size", "sym_stride", "sym_numel"}


def balance(device_name: str, dtype: str) -> float:
    """FLOPs per byte of the device the nodes ran on (datasheet), for ``node_cost``."""
    if not device_name or device_name.lower().startswith("cpu"):
        return CPU_BALANCE
    row = lookup(device_name)
    if row is None:
        return DEFAULT_GPU_BALANCE
    _, bandwidth, flops = row
    return flops.get(dtype.replace("torch.", ""), flops["float32"]) / bandwidth


def _op_name(node: Any) -> str:
    """The op's own name: ``aten.mm.default`` -> ``mm``, ``torch.nn.functional.linear`` -> ``linear``,
    a method call's name as it is."""
    parts = str(node.target).split(".")
    if parts[0] == "aten" and len(parts) >= 2:
        return parts[1]
    return parts[-1]


def is_free(node: Any) -> bool:
    """A view or an op that moves no data: it costs nothing, whatever graph it is in."""
    name = _op_name(node)
    return node.op in ("placeholder", "get_attr", "output") or name in _FREE or name in VIEW_OPS


def node_flops(node: Any, nodes: Mapping[str, Any]) -> float:
    """FLOPs of one FX or post-grad node from its shapes (see the rule above)."""
    name = _op_name(node)
    out = _numel(node.shape)
    inputs = [nodes[i] for i in node.inputs if i in nodes]
    if name in _LINEARS | _ADD_LINEARS:
        first = inputs[1] if name in _ADD_LINEARS and len(inputs) >= 3 else inputs[0] if inputs else None
        k = _numel(list(first.shape or [0])[-1:]) if first is not None and first.shape else 0
        return 2.0 * out * k
    if name in _CONVOLUTIONS and len(inputs) >= 2 and inputs[1].shape:
        weight = inputs[1].shape
        return 2.0 * out * (_numel(weight) / max(1, _numel(weight[:1])))
    if "scaled_dot_product" in name and len(inputs) >= 3 and inputs[0].shape and inputs[1].shape:
        query, keys = inputs[0].shape, inputs[1].shape
        rows, width = _numel(query[:-1]), _numel(query[-1:])
        return 2.0 * rows * _numel(keys[-2:-1]) * (width + _numel(list(inputs[2].shape or [0])[-1:]))
    return float(out)


def node_cost(node: Any, nodes: Mapping[str, Any], flops_per_byte: float) -> float:
    """What ``node`` costs on its own (bytes + FLOPs / ``flops_per_byte``); 0 for a view or free op.
    ``nodes``: the node's graph stage by name (its inputs' shapes)."""
    if is_free(node):
        return 0.0
    read = sum(_nbytes(nodes[i]) for i in dict.fromkeys(node.inputs) if i in nodes and nodes[i].shape is not None)
    return _nbytes(node) + read + node_flops(node, nodes) / flops_per_byte


def split_by_cost(names: list[str], nodes: Mapping[str, Any], flops_per_byte: float) -> dict[str, float]:
    """Each name's share (summing to 1) of a measure split over ``names`` by ``node_cost``: evenly over the
    names that are not free when no cost is known, evenly over all when every one is free."""
    if not names:
        return {}
    costs = {n: node_cost(nodes[n], nodes, flops_per_byte) if n in nodes else 0.0 for n in names}
    total = sum(costs.values())
    if total > 0:
        return {n: c / total for n, c in costs.items()}
    paying = [n for n in names if n not in nodes or not is_free(nodes[n])] or names
    return {n: (1.0 / len(paying) if n in paying else 0.0) for n in names}
