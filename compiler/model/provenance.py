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

# Why one post-grad node may belong to several kernels; anything else shared is UNEXPLAINED (a bug).
VIEW = "view"  # an alias of its input (permute, view, getitem...): it computes nothing, each reader owns it
INPUT = "input"  # a graph input, copied by several layout copies
SPLIT = "split"  # computed in parts by loop-IR nodes that read one another (a split reduction's passes)
IN_PLACE = "in place"  # a cat whose parts several kernels write straight into its slices
RECOMPUTED = "recomputed"  # inlined into each kernel: Inductor computes it again in every one
UNEXPLAINED = "unexplained"
_REASONS = {VIEW: "an alias of its input: computes nothing, each kernel that reads it lists it",
            INPUT: "a graph input that several kernels copy",
            SPLIT: ("computed in parts by several kernels, each reading what another wrote (a layout copy of "
                    "its inputs, a split reduction's passes)"),
            RECOMPUTED: "recomputed: Inductor inlined it into each of these kernels",
            IN_PLACE: "a cat whose parts each of these kernels writes into its slices (the cat has no code)",
            UNEXPLAINED: "claimed by several kernels for no known reason"}

# ATen ops whose output aliases their input (their schema's return is a view), as post-grad graphs spell them
VIEW_OPS = frozenset({
    "alias", "as_strided", "chunk", "conj", "detach", "diagonal", "expand", "expand_as", "flatten", "imag",
    "lift_fresh", "movedim", "narrow", "permute", "positive", "real", "reshape", "_reshape_alias", "select", "slice",
    "split", "split_with_sizes", "squeeze", "t", "tensor_split", "transpose", "unbind", "unflatten", "unfold",
    "unsqueeze", "view", "view_as", "_unsafe_view", "view_as_complex", "view_as_real",
})


def is_view(node: FxNode) -> bool:
    """An op that returns an alias of its input (an ATen view op, or one element of a multi-output op)."""
    if node.target in ("operator.getitem", "_operator.getitem"):
        return True
    parts = node.target.split(".")
    return len(parts) >= 2 and parts[0] == "aten" and parts[1] in VIEW_OPS


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


def computing_nodes(kernel: Kernel, nodes: dict[str, FxNode]) -> list[str]:
    """The post-grad nodes of ``kernel`` that compute something (views left out), or all of them when
    it has only views. Time and counters are spread over these: a view of a matmul's weight costs
    nothing, the matmul all. ``nodes``: the graph's post-grad nodes by name."""
    computing = [n for n in kernel.post_grad_nodes if n not in nodes or not is_view(nodes[n])]
    return computing or list(kernel.post_grad_nodes)


def computing_fx_nodes(kernel: Kernel, nodes: dict[str, FxNode]) -> list[str]:
    """The FX nodes the kernel's computing post-grad nodes come from (``computing_nodes``), in the kernel's
    order; all its FX nodes when none is known. A view the kernel reads brings its FX node to the kernel's
    links, but time and compile seconds go where something is computed. ``nodes``: post-grad nodes by name."""
    made_from = {f for name in computing_nodes(kernel, nodes) if name in nodes for f in nodes[name].fx}
    return [f for f in kernel.fx_nodes if f in made_from] or list(kernel.fx_nodes)


@dataclass(frozen=True)
class SharedNode:
    """A post-grad node that more than one kernel of a graph lists, and why."""

    graph: str
    node: str
    kernels: tuple[str, ...]
    reason: str

    @property
    def explanation(self) -> str:
        return _REASONS[self.reason]


def shared_nodes(graph: GraphCapture) -> list[SharedNode]:
    """Every post-grad node of ``graph`` listed by several kernels, with the reason (``VIEW``, ``INPUT``,
    ``SPLIT``, ``RECOMPUTED``, ``IN_PLACE``; ``UNEXPLAINED`` for anything else, which the tests treat as a bug)."""
    claims: dict[str, list[str]] = {}
    for kernel in graph.kernels:
        for name in dict.fromkeys(kernel.post_grad_nodes):
            claims.setdefault(name, []).append(kernel.id)
    nodes = {n.name: n for n in graph.post_grad.nodes}
    return [SharedNode(graph.id, name, tuple(kernels), _reason(name, kernels, nodes, graph))
            for name, kernels in claims.items() if len(kernels) > 1]


def _reason(name: str, kernels: list[str], nodes: dict[str, FxNode], graph: GraphCapture) -> str:
    node = nodes.get(name)
    if node is not None and node.op in _INPUT_OPS:
        return INPUT
    if node is not None and is_view(node):
        return VIEW
    if any(ir.kind == "nop" and name in ir.origins and not ir.kernels for ir in graph.loop_ir):
        return IN_PLACE
    computing = [ir for ir in graph.loop_ir if name in ir.origins and ir.kernels and not ir.eliminated]
    if {k for ir in computing for k in ir.kernels} != set(kernels):
        return UNEXPLAINED  # a kernel lists it although none of its loop-IR nodes computes it
    buffers = {b: ir.name for ir in computing for b in ir.buffers}
    reads_another = [ir for ir in computing if any(buffers.get(dep.split("[", 1)[0], ir.name) != ir.name
                                                   for dep in ir.reads)]
    if reads_another:
        return SPLIT
    if all(ir.kind in ("pointwise", "reduction") for ir in computing):
        return RECOMPUTED
    return UNEXPLAINED


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
    shared: list[SharedNode] = field(default_factory=list)  # post-grad nodes several kernels list, with why

    @classmethod
    def of(cls, compilation: Any) -> "ProvenanceReport":
        rows = [KernelProvenance(graph.id, kernel.id, status_of(kernel), tuple(gaps(kernel)), kernel.provenance_note)
                for graph in compilation.graphs for kernel in graph.kernels]
        shared = [s for graph in compilation.graphs for s in shared_nodes(graph)]
        return cls(function=compilation.function, kernels=rows, shared=shared)

    @property
    def overlaps(self) -> list[SharedNode]:
        """Nodes claimed by several kernels for no known reason: a provenance bug."""
        return [s for s in self.shared if s.reason == UNEXPLAINED]

    def count(self, status: str) -> int:
        return sum(1 for k in self.kernels if k.status == status)

    @property
    def missing(self) -> list[KernelProvenance]:
        return [k for k in self.kernels if k.status == MISSING]

    @property
    def complete(self) -> bool:
        """Every kernel linked or explained, and no node claimed by two kernels without a reason."""
        return not self.missing and not self.overlaps

    def __repr__(self) -> str:
        overlaps = f", {len(self.overlaps)} nodes claimed twice" if self.overlaps else ""
        return (f"ProvenanceReport({self.function}: {self.count(LINKED)} linked, {self.count(EXPLAINED)} explained, "
                f"{self.count(MISSING)} missing of {len(self.kernels)} kernels{overlaps})")


def annotate(graph: GraphCapture) -> None:
    """Set ``provenance_note`` on the kernels of ``graph`` that lack links for a known reason."""
    for kernel in graph.kernels:
        kernel.provenance_note = note_for(kernel, graph.post_grad, graph.kind)
