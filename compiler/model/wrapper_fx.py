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

from .formatting import did_you_mean
from .slots import Rendered


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
class WrapperFx(Rendered):
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
        names = [n.name for n in self.nodes]
        raise KeyError(f"no node {name!r} in the wrapper FX graph{did_you_mean(name, names)}; nodes: {names[:20]}")

    def kind(self, kind: str) -> list[WrapperFxNode]:
        return [n for n in self.nodes if n.kind == kind]

    def __repr__(self) -> str:
        if not self.built:
            return f"WrapperFx({self.status}: {self.reason})"
        counts = {k: len(self.kind(k)) for k in ("alloc", "kernel", "extern", "reinterpret")}
        return "WrapperFx(" + ", ".join(f"{v} {k}" for k, v in counts.items()) + f", {len(self.nodes)} nodes)"
