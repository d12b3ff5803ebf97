"""An extern kernel's call rebuilt from the post-grad node it computes: the ATen op on tensors of the
layouts that node's inputs have in the graph.

``c.counters()`` re-runs an extern kernel as the wrapper calls it (``model.launch_args.extern_call``
reads the Python wrapper's line). An AOTInductor package calls the same op through a C shim in its C++
wrapper (``aoti_torch_cuda_mm_out(buf0, arg4_1, ...)``), whose argument order and handles are the
shim's own; the node it computes says the same thing in ATen's terms (``aten.mm.default(arg4_1,
permute)``), with each input's shape, strides and dtype in its ``val``: the library picks its kernel
from exactly these.
"""

from __future__ import annotations

from typing import Any

import torch

from .._torch import fx_meta
from ..model import provenance
from ..model.launch_args import ExternCall


def node_call(kernel: Any) -> ExternCall:
    """``kernel``'s call as its one ATen node makes it; ``ValueError`` says why it cannot be rebuilt."""
    module = kernel.graph.post_grad.module
    if module is None:
        raise ValueError("the post-grad graph is not held (a loaded trace), so its node cannot be called")
    names = set(kernel.post_grad_nodes)
    nodes = [n for n in module.graph.nodes if n.op == "call_function" and n.name in names]
    # what the call computes, not the views it reads through (q/k/v carved out by split, view, permute)
    computing = set(provenance.computing_nodes(kernel, {n.name: n for n in kernel.graph.post_grad.nodes}))
    ops = [(n, fx_meta.op_overload(n)) for n in nodes if n.name in computing and fx_meta.op_overload(n)]
    if len(ops) != 1:
        raise ValueError(f"its nodes ({[n.name for n in nodes]}) end in {len(ops)} ATen ops, not one op to call")
    ((node, function),) = ops
    return ExternCall(function=function, args=[_value(node, a) for a in node.args],
                      kwargs={name: _value(node, v) for name, v in node.kwargs.items()})


def _value(node: Any, value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return [_value(node, v) for v in value]
    if isinstance(value, torch.fx.Node):
        return _tensor(node, value)
    if isinstance(value, torch.dtype):
        return {"attribute": str(value)}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise ValueError(f"{node.name} takes {value!r} ({type(value).__name__}), which cannot be passed to a worker")


def _tensor(node: Any, producer: Any) -> dict[str, Any]:
    val = producer.meta.get("val")
    if not isinstance(val, torch.Tensor):
        raise ValueError(f"{node.name}'s input {producer.name} is not one tensor of a known layout")
    if any(not isinstance(n, int) for n in (*val.shape, *val.stride())):
        raise ValueError(f"{node.name}'s input {producer.name} has dynamic sizes ({list(val.shape)})")
    return {"shape": list(val.shape), "stride": list(val.stride()), "dtype": str(val.dtype).removeprefix("torch."),
            "device": str(val.device)}
