"""Is every kernel traced back to the program? The reasons where a link cannot exist, and a report.

A kernel is *linked* when it has post-grad nodes, Dynamo FX nodes and source lines. Some kernels have
nothing to link to, for reasons Inductor's own graphs make plain: a copy of graph inputs into the
layout a later kernel needs, or a backward kernel that only reads values saved by the forward. Those
kernels carry ``Kernel.provenance_note`` (stored in the trace) and count as *explained*. Anything else
is *missing*: a gap in the capture, which the tests treat as a bug.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .slots import Rendered
from .stages import FxNode, FxStage, GraphCapture, Kernel

LINKED, EXPLAINED, MISSING = "linked", "explained", "missing"
_INPUT_OPS = ("placeholder", "get_attr")


def gaps(kernel: Kernel) -> list[str]:
    """Which of the three links a kernel lacks."""
    return [name for name, value in (("post_grad_nodes", kernel.post_grad_nodes), ("fx_nodes", kernel.fx_nodes),
                                     ("user_lines", kernel.user_lines)) if not value]


def note_for(kernel: Kernel, post_grad: FxStage, kind: str) -> str | None:
    """Why ``kernel`` lacks links, when the graphs say why; None when it lacks none or no reason is known."""
    if not gaps(kernel):
        return None
    nodes = [n for n in post_grad.nodes if n.name in set(kernel.post_grad_nodes)]
    if not nodes:
        return None
    if all(n.op in _INPUT_OPS for n in nodes):
        names = ", ".join(n.name for n in nodes)
        if kind == "backward":
            return (f"reads only inputs of the backward graph ({names}): values saved by the forward or "
                    "incoming gradients, copied into the layout this graph needs")
        return f"copies graph inputs ({names}) into the layout or buffer a later kernel needs"
    computed = [n for n in nodes if n.op not in _INPUT_OPS]
    if all(_is_input_write_back(n, post_grad) for n in computed):
        return ("writes a mutated graph input back (the copy_ that functionalization adds at the end of the "
                "graph); the value it writes has no source line of its own")
    return None


def _is_input_write_back(node: FxNode, post_grad: FxStage) -> bool:
    if not node.target.startswith("aten.copy_") or not node.inputs:
        return False
    try:
        return post_grad.node(node.inputs[0]).op == "placeholder"
    except KeyError:
        return False


def status_of(kernel: Kernel) -> str:
    if not gaps(kernel):
        return LINKED
    return EXPLAINED if kernel.provenance_note else MISSING


@dataclass(frozen=True)
class KernelProvenance:
    graph: str
    kernel: str
    status: str
    gaps: tuple[str, ...]
    note: str | None


@dataclass(repr=False)
class ProvenanceReport(Rendered):
    """Every kernel of a compilation with its provenance status (``c.provenance()``)."""

    function: str
    kernels: list[KernelProvenance] = field(default_factory=list)

    @classmethod
    def of(cls, compilation: Any) -> "ProvenanceReport":
        rows = [KernelProvenance(graph.id, kernel.id, status_of(kernel), tuple(gaps(kernel)), kernel.provenance_note)
                for graph in compilation.graphs for kernel in graph.kernels]
        return cls(function=compilation.function, kernels=rows)

    def count(self, status: str) -> int:
        return sum(1 for k in self.kernels if k.status == status)

    @property
    def missing(self) -> list[KernelProvenance]:
        return [k for k in self.kernels if k.status == MISSING]

    @property
    def complete(self) -> bool:
        """Every kernel linked or explained."""
        return not self.missing

    def __repr__(self) -> str:
        return (f"ProvenanceReport({self.function}: {self.count(LINKED)} linked, {self.count(EXPLAINED)} explained, "
                f"{self.count(MISSING)} missing of {len(self.kernels)} kernels)")


def annotate(graph: GraphCapture) -> None:
    """Set ``provenance_note`` on the kernels of ``graph`` that lack links for a known reason."""
    for kernel in graph.kernels:
        kernel.provenance_note = note_for(kernel, graph.post_grad, graph.kind)
