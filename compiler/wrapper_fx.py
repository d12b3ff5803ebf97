"""g.wrapper.fx: the wrapper as an FX graph (Inductor's FX wrapper codegen), linked to the explorer's ids.

Nodes are what Inductor's ``FxConverter`` emits: ``alloc`` (torch.empty_strided), ``reinterpret``
(torch.as_strided: a view or a reuse with another shape), ``kernel`` (a Triton launch through
``triton_kernel_wrapper_mutation``), ``extern`` (the aten op itself), ``getitem`` (one output of a
multi-output op), ``input``/``output``. FX has no free node: a value dies after its last use (the
generated code sets it to None). ``frees`` names, for each call node, the buffers the Python wrapper
deletes after that call (from g.memory), so both plans can be read side by side.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .records import from_dict, to_dict
from .stages import _Rendered


@dataclass
class WrapperFxNode:
    name: str
    op: str  # FX opcode
    kind: str  # input | alloc | reinterpret | kernel | extern | getitem | output | other
    target: str
    args: str = ""
    inputs: list[str] = field(default_factory=list)
    kernel: str | None = None  # the explorer's kernel id for kernel and extern nodes
    buffer: str | None = None  # the buffer it allocates or views; extern calls: the FX value passed as out=
    frees: list[str] = field(default_factory=list)


@dataclass(repr=False)
class WrapperFx(_Rendered):
    status: str  # built | unsupported | failed
    reason: str = ""  # why there is no graph
    code: str = ""  # the GraphModule's Python code
    nodes: list[WrapperFxNode] = field(default_factory=list)
    seconds: float | None = None  # time the conversion took, inside the compile
    dropped_lines: int = 0  # text-only wrapper lines with no FX form (size asserts)
    module: Any = None  # torch.fx.GraphModule while live

    @property
    def built(self) -> bool:
        return self.status == "built"

    def node(self, name: str) -> WrapperFxNode:
        for n in self.nodes:
            if n.name == name:
                return n
        raise KeyError(f"no node {name!r} in the wrapper FX graph; nodes: {[n.name for n in self.nodes][:20]}")

    def kind(self, kind: str) -> list[WrapperFxNode]:
        return [n for n in self.nodes if n.kind == kind]

    def __repr__(self) -> str:
        if not self.built:
            return f"WrapperFx({self.status}: {self.reason})"
        counts = {k: len(self.kind(k)) for k in ("alloc", "kernel", "extern", "reinterpret")}
        return "WrapperFx(" + ", ".join(f"{v} {k}" for k, v in counts.items()) + f", {len(self.nodes)} nodes)"


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


def wrapper_fx_to_json(fx: WrapperFx) -> dict[str, Any]:
    return to_dict(fx, skip=("module",))


def wrapper_fx_from_json(data: dict[str, Any]) -> WrapperFx:
    return from_dict(WrapperFx, data, nodes=lambda items: [from_dict(WrapperFxNode, n) for n in items])
