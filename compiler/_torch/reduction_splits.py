"""A reduction's split turned off for a compile (``c.what_if(split=...)``).

Inductor decides while lowering whether a reduction runs as one kernel or as a split: partial reductions
into a buffer, then a second reduction of the partials (``ir.Reduction.num_splits``, which returns the
reduction hint and the split count; ``split_reductions`` turns it off for every reduction). The block wraps
that static method: while the FX node being lowered (``V.graph.current_node``) is one ``unsplit`` names
(with the post-grad node names of the graph being lowered, so other graphs are left alone), a split count is
answered with 1 and Inductor's hint kept. Welford reductions (``var_mean``) ask the same method.
Feature-probed: ``available()`` is False where ``Reduction.num_splits`` is missing.
"""

from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator

from torch._inductor import ir as _ir
from torch._inductor.virtualized import V

from . import guard

# (post-grad node names of the graph being lowered, the node being lowered) -> run it without a split
Unsplit = Callable[[frozenset[str], str], bool]


def available() -> bool:
    return hasattr(getattr(_ir, "Reduction", None), "num_splits")


@contextlib.contextmanager
def splits_off(unsplit: Unsplit) -> Iterator[None]:
    if not available():
        raise RuntimeError("the installed torch's Inductor has no Reduction.num_splits to turn a split off with")
    reduction = _ir.Reduction
    own = reduction.__dict__.get("num_splits")
    original = reduction.num_splits  # the function a staticmethod returns
    seen: list[Any] = [None, frozenset()]  # the graph module last asked about, and its node names

    def graph_names() -> frozenset[str]:
        module = getattr(V.graph, "module", None)
        if module is not seen[0]:
            graph = getattr(module, "graph", None)
            seen[:] = [module, frozenset(n.name for n in graph.nodes) if graph is not None else frozenset()]
        return seen[1]

    def num_splits(*args: Any, **kwargs: Any) -> Any:
        hint, split = original(*args, **kwargs)
        off = False
        with guard.never_breaking(__name__):
            node = getattr(V.graph, "current_node", None)
            off = split != 1 and node is not None and unsplit(graph_names(), node.name)
        return (hint, 1) if off else (hint, split)

    reduction.num_splits = staticmethod(num_splits)
    try:
        yield
    finally:
        if own is None:
            del reduction.num_splits
        else:
            reduction.num_splits = own
