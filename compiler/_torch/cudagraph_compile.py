"""What Inductor decided about CUDA graphs for one compiled graph, read from the ``CompiledFxGraph`` it returned.

``compile_fx_inner`` returns the compiled graph after its ``post_compile``, which wrapped it (or each
partition function) for CUDA graphs, or did not, and why: ``disabled_cudagraphs_reason`` (set while
lowering: a CPU node, an incompatible op, control flow, symbolic shapes...) and
``cudagraph_info.cudagraph_fail_reasons`` (checked after: non-Tensor inputs, input storage mutation...).
On the partition path Inductor logs none of them (pytorch#176611); they are read here for every graph.
The node a reason points at is found in the post-grad graph as Inductor found it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

_CPU_NODE = re.compile(r"cpu device \((?P<name>[^)]+)\)")
_CONTROL_FLOW = ("cond", "while_loop")


@dataclass
class CompiledState:
    """A compiled graph's CUDA graph state as Inductor left it."""

    wrapped: bool  # Inductor handed the graph (or its partition functions) to the CUDA graph tree
    reason: str | None  # why not, in Inductor's words (``disabled_cudagraphs_reason``, else its fail reasons)
    partition_functions: int  # how many partition functions it recorded (0: the graph whole, or none)
    device_types: list[str] = field(default_factory=list)
    mutated_inputs: list[str] = field(default_factory=list)  # the graph's inputs it writes into (buffer names)


def state_of(compiled: Any) -> CompiledState | None:
    """None when ``compiled`` is not an Inductor graph compiled with ``triton.cudagraphs`` (nothing to read)."""
    info = getattr(compiled, "cudagraph_info", None)
    disabled = getattr(compiled, "disabled_cudagraphs_reason", None)
    kwargs = getattr(compiled, "fx_kwargs", None) or {}
    switch = kwargs.get("cudagraphs") if isinstance(kwargs, dict) else None
    if info is None and disabled is None and switch is None:
        return None
    fail = list(getattr(info, "cudagraph_fail_reasons", None) or [])
    maps = getattr(compiled, "partition_maps", None) or []
    wrapped = bool(switch) and not disabled and not fail
    if wrapped and getattr(compiled, "compiled_fn_runner", None) is not None and not maps:
        wrapped = False  # the partition path records nothing when no partition is cudagraphable
    reason = disabled or (f"skipping cudagraphs due to {', '.join(fail)}" if fail else None)
    return CompiledState(wrapped=wrapped, reason=reason, partition_functions=len(maps),
                         device_types=sorted(getattr(compiled, "device_types", None) or []),
                         mutated_inputs=sorted(getattr(compiled, "mutated_inputs", None) or []))


def _target_name(node: Any) -> str:
    target = getattr(node, "target", None)
    return str(getattr(target, "__name__", target))


def cause_node(gm: Any, reason: str) -> str | None:
    """The post-grad node Inductor's ``reason`` points at, found in ``gm`` as Inductor found it (None when the
    reason names none: several devices, the caching allocator off)."""
    if gm is None:
        return None
    cpu = _CPU_NODE.search(reason)
    if cpu:
        return cpu.group("name")
    nodes = list(getattr(getattr(gm, "graph", None), "nodes", []))
    lowered = reason.lower()
    if "incompatible op" in lowered or "index_put_" in lowered:
        return _first_incompatible(gm)
    if "control flow" in lowered:
        return next((n.name for n in nodes if _target_name(n) in _CONTROL_FLOW), None)
    if "symbolic shape" in lowered:
        return next((n.name for n in nodes if n.op != "placeholder" and _symbolic(n)), None)
    if "storage mutation" in lowered:
        return next((n.name for n in nodes if n.op == "call_function" and "set_" in _target_name(n)), None)
    if "non-tensor inputs" in lowered:
        return next((n.name for n in nodes if n.op == "placeholder" and not _tensor_like(n)), None)
    return None


def _first_incompatible(gm: Any) -> str | None:
    try:
        from torch._inductor.utils import get_first_incompatible_cudagraph_node
    except ImportError:
        return None
    node = get_first_incompatible_cudagraph_node(gm)
    return node.name if node is not None else None


def _symbolic(node: Any) -> bool:
    import torch

    value = node.meta.get("val")
    if not isinstance(value, torch.Tensor):
        return False
    return any(isinstance(s, torch.SymInt) for s in (*value.shape, *value.stride()))


def _tensor_like(node: Any) -> bool:
    import torch

    value = node.meta.get("val")
    return value is None or isinstance(value, (torch.Tensor, torch.SymInt, torch.Generator))


def placeholders(gm: Any) -> list[str]:
    """The post-grad graph's placeholder names, in order (the order of the graph's inputs)."""
    return [n.name for n in getattr(getattr(gm, "graph", None), "nodes", []) if n.op == "placeholder"]


def mark_static(tensor: Any) -> None:
    """Tell Dynamo and Inductor that ``tensor`` keeps its address from call to call
    (``torch._dynamo.mark_static_address``): CUDA graph trees then let a graph write into it."""
    import torch._dynamo

    torch._dynamo.mark_static_address(tensor)
