"""A reduction's split turned off, or on, for a compile (``c.what_if(split=...)``).

Inductor decides while lowering whether a reduction runs as one kernel or as a split: partial reductions
into a buffer, then a second reduction of the partials (``ir.Reduction.num_splits``, which returns the
reduction hint and the split count; ``split_reductions`` turns it off for every reduction). The block wraps
that static method: while the FX node being lowered (``V.graph.current_node``) is one ``turn`` names (with
the post-grad node names of the graph being lowered, so other graphs are left alone), its answer changes and
Inductor's hint is kept:

- ``"off"``: a split count is answered with 1;
- ``"on"``: a count of 1 for a reduction on a GPU becomes a split (``split_count``). Only Triton takes one: the
  C++ backend reduces to a single element itself (``REDUCE_TO_SINGLE_ELEMENT``) and never splits. The second
  reduction (over the partials) asks again while the same node is lowered; it is left alone, as it is too
  small to split (fewer elements than the smallest split's partials).

Welford reductions (``var_mean``) ask the same method. Feature-probed: ``available()`` is False where
``Reduction.num_splits`` is missing.
"""

from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator

import sympy
from torch._inductor import config as _config
from torch._inductor import ir as _ir
from torch._inductor.virtualized import V

from . import guard
from .fusion_edits import GraphNames

# (post-grad node names of the graph being lowered, the node being lowered) -> "off" | "on" | None
Turn = Callable[[frozenset[str], str], "str | None"]

_MIN_PARTIAL = 32  # elements each partial reduction reduces at least (Inductor's min_elements_per_thread)
_MAX_SPLIT = 64


def available() -> bool:
    return hasattr(getattr(_ir, "Reduction", None), "num_splits")


def split_count(reduction_numel: int) -> int:
    """The split a turned-on reduction gets: the largest power of two up to 64 that leaves each partial at least
    32 elements, and more partials than Inductor unrolls into a pointwise sum (``unroll_reductions_threshold``),
    so the second reduction is a reduction. 1 when the reduction is too small to split so."""
    smallest = 2
    while smallest <= getattr(_config, "unroll_reductions_threshold", 8):
        smallest *= 2
    count = 1
    while count * 2 <= _MAX_SPLIT and reduction_numel // (count * 2) >= _MIN_PARTIAL:
        count *= 2
    return count if count >= smallest else 1


def _numel(args: tuple[Any, ...], kwargs: dict[str, Any]) -> int | None:
    """The reduction's element count when static (argument 8 of ``num_splits``: ``reduction_numel``)."""
    numel = kwargs.get("reduction_numel", args[7] if len(args) > 7 else None)
    try:
        return int(sympy.Integer(numel)) if numel is not None else None
    except (TypeError, ValueError):
        return None


def _on_gpu(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    device = kwargs.get("device", args[0] if args else None)
    return getattr(device, "type", None) not in (None, "cpu")


@contextlib.contextmanager
def splits_changed(turn: Turn) -> Iterator[None]:
    if not available():
        raise RuntimeError("the installed torch's Inductor has no Reduction.num_splits to change a split with")
    reduction = _ir.Reduction
    own = reduction.__dict__.get("num_splits")
    original = reduction.num_splits  # the function a staticmethod returns
    graph_names = GraphNames()

    def num_splits(*args: Any, **kwargs: Any) -> Any:
        hint, split = original(*args, **kwargs)
        answer = split
        with guard.never_breaking(__name__):
            node = getattr(V.graph, "current_node", None)
            asked = turn(graph_names(), node.name) if node is not None else None
            numel = _numel(args, kwargs)
            if asked == "off" and split != 1:
                answer = 1
            elif asked == "on" and split == 1 and _on_gpu(args, kwargs) and numel is not None:
                answer = split_count(numel)
        return hint, answer

    reduction.num_splits = staticmethod(num_splits)
    try:
        yield
    finally:
        if own is None:
            del reduction.num_splits
        else:
            reduction.num_splits = own
