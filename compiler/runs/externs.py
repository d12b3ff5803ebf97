"""A compiled graph's extern calls (``extern_kernels.mm``, cuBLAS, cuDNN, flash attention...) as a profiler
sees them: by the operator's name, in the order the wrapper calls them."""

from __future__ import annotations

import re
from typing import Any

from ..model.profile import KernelRef


def extern_op_name(kernel: Any, graph: Any) -> str | None:
    """The profiler's name (``aten::mm``) of the operator an extern kernel calls: the op its call names
    (``aten.scatter_reduce_.two(...)``, a fallback's in-place op), else the op of the node it computes."""
    called = re.match(r"(?:\w+\s*=\s*)?aten\.(\w+)\.\w+\(", kernel.source.strip())
    if called:
        return f"aten::{called.group(1)}"
    for name in kernel.post_grad_nodes[:1]:
        try:
            target = graph.post_grad.node(name).target
        except KeyError:
            continue
        parts = target.split(".")
        if len(parts) >= 2:
            return f"{parts[0]}::{parts[1]}"
    match = re.search(r"extern_kernels\.(\w+)\(", kernel.source)
    if match:
        return f"aten::{match.group(1)}"
    match = re.search(r"torch\.ops\.(\w+)\.(\w+)", kernel.source)
    return f"{match.group(1)}::{match.group(2)}" if match else None


def externs_in_wrapper_order(c: Any, refs: dict[str, KernelRef]) -> dict[str, list[tuple[str, str | None]]]:
    """Graph id -> [(profile key, operator name)] of its extern kernels, in the order its wrapper calls them."""
    out: dict[str, list[tuple[str, str | None]]] = {}
    for graph in c.graphs:
        keys = {r.kernel: key for key, r in refs.items() if r.graph == graph.id}
        ordered = sorted((k for k in graph.kernels if k.language == "extern"),
                         key=lambda k: k.wrapper_lines[0] if k.wrapper_lines else 0)
        out[graph.id] = [(keys[k.id], extern_op_name(k, graph)) for k in ordered]
    return out
