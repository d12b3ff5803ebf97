"""What a ``c.what_if`` edit is, kind by kind: the decision it changes and the questions it answers while
Inductor compiles the same program again.

An edit names nodes of the captured graph by the post-grad nodes they came from (a loop-IR node as its origins,
``node_key``), which are the same in every compile of one program where scheduler and buffer names (``op3``,
``buf3``) are not; and it carries the post-grad node names of its graph, so that the program's other graphs (a
backward, a graph break) are left alone. Each kind is a class holding only what its questions need:

- ``UnfuseEdit``, ``PreventEdit``: parts the scheduler must not fuse with each other (``decide`` answers
  "refuse"; ``ends_kernel``: the C++ function ends after them);
- ``FuseEdit``: two parts the scheduler judges with its score heuristics relaxed (``decide`` answers "relax");
- ``SplitEdit``: a reduction run split or unsplit while lowering (``turn_split``);
- ``OrderEdit``: one kernel's scheduled nodes moved before another's (``pick``, ``same_kernel``);
- ``MaterializeEdit``: values Inductor inlined into their users' loop stored to buffers of their own while
  lowering (``realize``), then kept apart from their users (``decide``, ``ends_kernel``).

How each kind is resolved from what the user names, made during the compile and checked in what compiled is
the table in compiler/pipeline/what_if.py; the resolvers are in what_if.py, what_if_order.py and
what_if_materialize.py of this room.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import ClassVar, Iterable

Members = list[frozenset[str]]  # the scheduler nodes inside one (fused) node, each as its post-grad origins


class EditKind(StrEnum):
    """The keyword of ``c.what_if`` an edit answers (``materialize`` also answers ``unfuse=`` of a group Inductor
    inlined into one loop)."""

    UNFUSE = "unfuse"
    PREVENT = "prevent"
    FUSE = "fuse"
    SPLIT = "split"
    ORDER = "order"
    MATERIALIZE = "materialize"


@dataclass(frozen=True)
class FusionEdit:
    """One scheduling decision to change in graph ``graph``, on the loop-IR nodes ``parts`` of the captured graph."""

    kind: ClassVar[EditKind]
    graph: int  # index of the graph in the compilation
    parts: tuple[tuple[str, ...], ...]  # loop-IR node names of the captured graph, per part
    keys: tuple[frozenset[frozenset[str]], ...]  # each part's loop-IR nodes as their post-grad origins
    graph_nodes: frozenset[str]  # the graph's post-grad node names: which graph the compile edits
    label: str  # how the verdict names the edit: "unfusing op0_op1 (add, mul)"
    note: str = ""  # what the user should know about how the edit was made

    def side(self, members: Iterable[frozenset[str]]) -> set[int]:
        """Which parts the scheduler nodes ``members`` (each as its origins) hold nodes of."""
        return {i for member in members for i, keys in enumerate(self.keys) if member in keys}


@dataclass(frozen=True)
class PairEdit(FusionEdit):
    """An edit the scheduler's ``can_fuse`` makes: every pair with nodes of two different parts is answered
    ``answer`` (compiler/_torch/fusion_edits.py)."""

    answer: ClassVar[str]  # "refuse" | "relax"

    def decide(self, graph_nodes: frozenset[str], members1: Members, members2: Members) -> str | None:
        """What the scheduler does with a candidate pair: ``answer``, or None (as Inductor decides)."""
        if graph_nodes != self.graph_nodes:
            return None
        side1, side2 = self.side(members1), self.side(members2)
        if not side1 or not side2 or not any(i != j for i in side1 for j in side2):
            return None
        return self.answer

    def ends_kernel(self, graph_nodes: frozenset[str], members: Members) -> bool:
        """Whether the C++ function being written ends after this scheduler node (C++ writes consecutive nodes
        into one function: nodes kept apart get functions of their own)."""
        return self.answer == "refuse" and graph_nodes == self.graph_nodes and bool(self.side(members))


@dataclass(frozen=True)
class UnfuseEdit(PairEdit):
    """A fused group's scheduler nodes kept apart from each other: one kernel each."""

    kind = EditKind.UNFUSE
    answer = "refuse"


@dataclass(frozen=True)
class PreventEdit(PairEdit):
    """The scheduler nodes computing one node kept apart from those computing another."""

    kind = EditKind.PREVENT
    answer = "refuse"


@dataclass(frozen=True)
class FuseEdit(PairEdit):
    """Two kernels Inductor kept apart for a score reason, judged again with the score heuristics relaxed."""

    kind = EditKind.FUSE
    answer = "relax"


@dataclass(frozen=True)
class SplitEdit(FusionEdit):
    """A split reduction run as one (``unsplit_nodes``), or (GPU) a reduction run as one split (``split_nodes``)."""

    kind = EditKind.SPLIT
    unsplit_nodes: frozenset[str] = frozenset()  # the post-grad nodes whose reduction runs unsplit
    split_nodes: frozenset[str] = frozenset()  # the post-grad nodes whose reduction is split (GPU only)

    def turn_split(self, graph_nodes: frozenset[str], node: str) -> str | None:
        """Whether the reduction Inductor lowers for post-grad node ``node`` runs unsplit ("off") or split
        ("on"), or as Inductor decides (None) (compiler/_torch/reduction_splits.py)."""
        if graph_nodes != self.graph_nodes:
            return None
        return "off" if node in self.unsplit_nodes else "on" if node in self.split_nodes else None


@dataclass(frozen=True)
class OrderEdit(FusionEdit):
    """The first part's kernel launched before the second's; every kernel computes what it computed."""

    kind = EditKind.ORDER
    kernel_keys: tuple[frozenset[frozenset[str]], ...] = ()  # each kernel of the graph as its nodes' keys

    def pick(self, graph_nodes: frozenset[str], nodes: list[Members]) -> tuple[list[int], list[int]] | None:
        """Which scheduled nodes (each as its members' origins) run first and which they must precede
        (compiler/_torch/node_order.py); None for another graph."""
        if graph_nodes != self.graph_nodes:
            return None
        sides = [self.side(members) for members in nodes]
        first = [i for i, side in enumerate(sides) if 0 in side]
        second = [i for i, side in enumerate(sides) if 1 in side]
        return (first, second) if first and second else None

    def same_kernel(self, members1: Members, members2: Members) -> bool:
        """Whether two scheduled nodes were one kernel in the compile edited (an order edit keeps kernels whole)."""
        def kernel(members: Members) -> int | None:
            return next((i for i, keys in enumerate(self.kernel_keys) if any(m in keys for m in members)), None)

        found = kernel(members1)
        return found is not None and found == kernel(members2)


@dataclass(frozen=True)
class MaterializeEdit(FusionEdit):
    """Post-grad nodes ``nodes`` that Inductor inlined into the loop of their users (the scheduler nodes
    ``parts``, which compute ``region``) stored to buffers of their own while lowering, and each such buffer
    kept out of the kernels of the rest of the region, so the loop becomes several kernels.

    The recompiled region is cut by what each scheduler node stores: a node whose origins hold a node of
    ``nodes`` writes that value (a stored value is read from its buffer, never inlined again, so no other node
    lists it); a node whose origins lie inside the region and hold none is the rest of the loop. Nodes of
    different cuts are never fused; nodes outside the region fuse as Inductor decides."""

    kind = EditKind.MATERIALIZE
    nodes: frozenset[str] = frozenset()  # post-grad nodes to store to buffers of their own
    region: frozenset[str] = frozenset()  # post-grad nodes the inlining scheduler nodes computed

    def realize(self, graph_nodes: frozenset[str], node: str) -> bool:
        """Whether the value of post-grad node ``node``, just lowered, is stored (compiler/_torch/materialize.py)."""
        return graph_nodes == self.graph_nodes and node in self.nodes

    def cut(self, member: frozenset[str]) -> frozenset[str] | None:
        """Which stored values a scheduler node (as its origins) writes: the empty set for the rest of the
        region, None for a node outside it."""
        stored = member & self.nodes
        if stored or (member and member <= self.region):
            return frozenset(stored)
        return None

    def _cuts(self, members: Members) -> set[frozenset[str]]:
        return {cut for cut in map(self.cut, members) if cut is not None}

    def decide(self, graph_nodes: frozenset[str], members1: Members, members2: Members) -> str | None:
        """"refuse" for a pair holding different cuts of the region; None (as Inductor decides) otherwise."""
        if graph_nodes != self.graph_nodes:
            return None
        cuts1, cuts2 = self._cuts(members1), self._cuts(members2)
        return "refuse" if any(a != b for a in cuts1 for b in cuts2) else None

    def ends_kernel(self, graph_nodes: frozenset[str], members: Members) -> bool:
        """Whether the C++ function being written ends after this scheduler node (a node of the region)."""
        return graph_nodes == self.graph_nodes and bool(self._cuts(members))
