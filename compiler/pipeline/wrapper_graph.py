"""Links the FX wrapper converter's output (compiler/_torch/wrapper_fx.py) to the explorer's kernel ids."""

from __future__ import annotations

from typing import Any

from ..model.wrapper_fx import WrapperFx, WrapperFxNode


def wrapper_fx(raw: dict[str, Any] | None, kernels: list[Any], loop_ir: list[Any], memory: Any) -> WrapperFx | None:
    """The converter's output linked to kernel ids: Triton launches by kernel name, extern calls through
    the memory timeline's steps (both come from the same planned lines, so the n-th call node is the
    n-th step), else by the buffer they write."""
    if raw is None:
        return None
    if raw.get("status") != "built":
        return WrapperFx(status=raw.get("status", "failed"), reason=raw.get("reason", ""))
    by_name = {k.name: k.id for k in kernels if k.language != "extern"}
    nodes = [WrapperFxNode(**{k: v for k, v in n.items() if k != "kernel"}) for n in raw["nodes"]]
    for node, record in zip(nodes, raw["nodes"]):
        if node.kind == "kernel" and record.get("kernel"):
            node.kernel = by_name.get(record["kernel"])
    _link_calls(nodes, memory, {buf: node.kernels[0] for node in loop_ir for buf in node.buffers if node.kernels})
    return WrapperFx(status="built", code=raw["code"], nodes=nodes, seconds=raw.get("seconds"),
                     dropped_lines=int(raw.get("dropped_lines", 0)), module=raw.get("module"))


def _link_calls(nodes: list[WrapperFxNode], memory: Any, by_buffer: dict[str, str]) -> None:
    calls = [n for n in nodes if n.kind in ("kernel", "extern")]
    steps = [s for s in memory.steps if s.call != "return"] if memory is not None else []
    paired = len(calls) == len(steps)
    for i, node in enumerate(calls):
        if paired:
            node.frees = list(steps[i].freed)
            if node.kind == "extern":
                node.kernel = steps[i].kernel
        elif node.kind == "extern" and node.buffer:
            node.kernel = by_buffer.get(node.buffer)
