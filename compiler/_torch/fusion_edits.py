"""One fusion decision of the scheduler changed for a compile (``c.what_if``): pairs kept apart, pairs let fuse.

Inductor decides every fusion in ``Scheduler.can_fuse(node1, node2)``: legality first (order, devices,
extern and template rules, matching loops), then its score heuristics (shared bytes against
``score_fusion_memory_threshold``, ``max_fusion_size``, peak memory, distance). The block patches that one
method on the class for the compile and restores it on exit:

- a pair ``decide`` answers ``"refuse"`` is refused before Inductor looks at it, and the refusal is logged the
  way Inductor logs its own (``WhyNoFuse`` on the ``fusion`` logger), so the new capture's ``not_fused`` says
  who kept the pair apart;
- a pair it answers ``"relax"`` goes through Inductor's own checks with its score heuristics relaxed for that
  call only (``aggressive_fusion`` on, the score threshold at 0, no size cap; no peak-memory, distance or
  too-many-buffers veto, at least one shared byte): legality still decides. ``Scheduler.get_possible_fusions`` also offers such a pair
  first, since Inductor only considers pairs that share a buffer.

The C++ backend also writes consecutive unfused nodes into one C++ function (a loop nest each); with
``ends_kernel`` the function ends after the edited nodes, so nodes kept apart are separate kernels there too.

Nodes are named by what the program calls them: each scheduler node of a (fused) node is the set of post-grad
nodes it came from (its ``origins``), stable across compiles of one program where scheduler and buffer names
(``op3``, ``buf3``) are not guaranteed to be. ``decide`` also gets the post-grad node names of the graph being
scheduled, so an edit of one graph leaves the program's other graphs (a backward, a graph break) alone.
Feature-probed: ``available()`` is False where the scheduler lacks one of these methods.
"""

from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator

from torch._inductor import config as _config
from torch._inductor import scheduler as _sched
from torch._inductor.virtualized import V

from . import guard, method_patch

Members = list[frozenset[str]]  # the scheduler nodes inside one (fused) node, each as its post-grad origins
# (post-grad node names of the graph being scheduled, node1's members, node2's members) -> "refuse" | "relax" | None
Decide = Callable[[frozenset[str], Members, Members], "str | None"]
EndsKernel = Callable[[frozenset[str], Members], bool]  # (graph's node names, a node's members) -> end its kernel

REFUSED_REASON = "kept apart by what_if"
# the score heuristics a "relax" answer lifts for one can_fuse call: config keys and the values they take
_RELAXED_CONFIG = {"aggressive_fusion": True, "score_fusion_memory_threshold": 0, "max_fusion_size": 1 << 30}
# scheduler methods that veto a fusion for its cost, not its legality: answered "no veto" for the relaxed call
_COST_VETOES = ("can_fusion_increase_peak_memory", "are_long_distant_nodes", "fusion_prevent_too_many_reads_and_writes")


def available() -> bool:
    scheduler = getattr(_sched, "Scheduler", None)
    return scheduler is not None and all(hasattr(scheduler, name) for name in ("can_fuse", "get_possible_fusions"))


def members(snode: Any) -> Members:
    """Each scheduler node of ``snode`` (itself, or those a fused node holds) as its post-grad origins."""
    out = []
    for node in snode.get_nodes():
        ir_node = getattr(node, "node", None)
        out.append(frozenset(o.name for o in (getattr(ir_node, "origins", None) or ())))
    return out


class GraphNames:
    """The post-grad node names of the graph being scheduled, read once per graph module."""

    def __init__(self) -> None:
        self.module: Any = None
        self.names: frozenset[str] = frozenset()

    def __call__(self) -> frozenset[str]:
        module = getattr(V.graph, "module", None)
        if module is not self.module:
            graph = getattr(module, "graph", None)
            self.module = module
            self.names = frozenset(n.name for n in graph.nodes) if graph is not None else frozenset()
        return self.names


def _log_refusal(node1: Any, node2: Any) -> None:
    why = getattr(_sched, "WhyNoFuse", None)
    if why is not None:
        why(node1, node2)(REFUSED_REASON)


@contextlib.contextmanager
def _relaxed(scheduler: Any) -> Iterator[None]:
    values = {key: value for key, value in _RELAXED_CONFIG.items() if hasattr(_config, key)}
    vetoes = [name for name in _COST_VETOES if hasattr(scheduler, name)]
    for name in vetoes:
        setattr(scheduler, name, lambda *args, **kwargs: False)
    score = getattr(scheduler, "score_fusion_memory", None)
    if score is not None:  # "no shared data" vetoes reductions even with aggressive_fusion: count one shared byte
        def at_least_one(*args: Any, **kwargs: Any) -> Any:
            result = score(*args, **kwargs)
            return max(result, 1) if isinstance(result, int) else result

        scheduler.score_fusion_memory = at_least_one
    try:
        with _config.patch(values):
            yield
    finally:
        for name in [*vetoes, "score_fusion_memory"]:
            scheduler.__dict__.pop(name, None)


@contextlib.contextmanager
def fusion_decided(decide: Decide, offers: bool = False, ends_kernel: EndsKernel | None = None) -> Iterator[None]:
    """Inside the block, every fusion Inductor considers asks ``decide`` first (see the module's docstring);
    ``offers``: pairs ``decide`` relaxes are also offered to the scheduler when it did not find them itself;
    ``ends_kernel``: scheduler nodes after which the C++ backend ends the kernel it is writing (below)."""
    if not available():
        raise RuntimeError("the installed torch's Inductor scheduler has no can_fuse / get_possible_fusions to "
                           "change a fusion decision with")
    scheduler_cls = _sched.Scheduler
    original_can_fuse = scheduler_cls.can_fuse
    original_possible = scheduler_cls.get_possible_fusions
    graph_names = GraphNames()

    def answer(node1: Any, node2: Any) -> str | None:
        result = None
        with guard.never_breaking(__name__):
            result = decide(graph_names(), members(node1), members(node2))
        return result

    def can_fuse(self: Any, node1: Any, node2: Any, *args: Any, **kwargs: Any) -> bool:
        decision = answer(node1, node2)
        if decision == "refuse":
            _log_refusal(node1, node2)
            return False
        if decision == "relax":
            with _relaxed(self):
                return original_can_fuse(self, node1, node2, *args, **kwargs)
        return original_can_fuse(self, node1, node2, *args, **kwargs)

    def get_possible_fusions(self: Any, nodes: list[Any], *args: Any, **kwargs: Any) -> list[Any]:
        found = original_possible(self, nodes, *args, **kwargs)
        if not offers:
            return found
        offered = []
        with guard.never_breaking(__name__):
            known = {(id(a), id(b)) for a, b in found}
            for i, node1 in enumerate(nodes):
                for node2 in nodes[i + 1:]:
                    for first, second in ((node1, node2), (node2, node1)):
                        if (id(first), id(second)) in known or answer(first, second) != "relax":
                            continue
                        if can_fuse(self, first, second, *args[:1]):
                            offered.append((first, second))
                            break
        return offered + [pair for pair in found if pair not in offered]

    with contextlib.ExitStack() as stack:
        stack.enter_context(method_patch.replaced(scheduler_cls, "can_fuse", can_fuse))
        stack.enter_context(method_patch.replaced(scheduler_cls, "get_possible_fusions", get_possible_fusions))
        if ends_kernel is not None:
            stack.enter_context(cpp_kernels_ended(lambda snode: ends_kernel(graph_names(), members(snode))))
        yield


@contextlib.contextmanager
def cpp_kernels_ended(ends: Callable[[Any], bool]) -> Iterator[None]:
    """The C++ backend writes consecutive scheduler nodes, fused or not, as loop nests of one C++ function
    until the scheduler flushes it (``CppScheduling.ready_to_flush``): nodes kept apart would still be one
    kernel. After a node ``ends`` names, the backend asks for a flush, so that node's kernel ends there."""
    try:
        from torch._inductor.codegen.cpp import CppScheduling
    except ImportError:
        yield
        return
    if not (hasattr(CppScheduling, "codegen_node") and hasattr(CppScheduling, "_set_flush_status")):
        yield
        return
    original = CppScheduling.codegen_node

    def codegen_node(self: Any, node: Any, *args: Any, **kwargs: Any) -> Any:
        result = original(self, node, *args, **kwargs)
        with guard.never_breaking(__name__):
            if ends(node):
                self._set_flush_status(True)
        return result

    with method_patch.replaced(CppScheduling, "codegen_node", codegen_node):
        yield
