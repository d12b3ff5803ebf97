"""Which nodes each pattern rewrite replaced, and by what.

Inductor's pattern passes (joint-graph, post-grad, and pre-grad ones) replace a matched group of nodes
with new ones: ``mm`` + ``add`` becomes one ``addmm``, an attention written out becomes one
``_scaled_dot_product_*`` call, a ``cat`` of ``split`` outputs disappears. The new node's ``from_node``
ancestry names only the node whose place it took (``add``), so the ``mm`` and its source line vanish
from the graph's provenance: the matmul line would own no kernel. Every rewrite goes through one of the
``PatternEntry.apply`` methods (a lowering pattern, a graph pattern's handler, a replacement pattern);
wrapping them tells, per rewrite, the nodes it made and where the nodes it erased came from.
"""

from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator

from torch._inductor import pattern_matcher as _pm

from . import fx_meta, guard, method_patch

Source = tuple[str, "int | None"]  # (node name, id of its fx.Graph), as ``from_node`` records ancestry
Rewritten = Callable[[list[Source], list[Source]], None]  # (nodes made, erased nodes and their ancestry)
_ENTRIES = ("LoweringPatternEntry", "GraphPatternEntry", "ReplacementPatternEntry")


def _sources(node: Any, graph_id: int) -> list[Source]:
    return [(node.name, graph_id), *fx_meta.origin_sources(node)]


@contextlib.contextmanager
def _new_nodes(graph: Any) -> Iterator[list[Any]]:
    """The nodes created in ``graph`` inside the block: through the owning module's create-node hook, or
    (a graph without a module) the difference of its node sets."""
    made: list[Any] = []
    module = getattr(graph, "owning_module", None)
    register = getattr(module, "_register_create_node_hook", None)
    unregister = getattr(module, "_unregister_create_node_hook", None)
    if callable(register) and callable(unregister):
        hook = made.append
        register(hook)
        try:
            yield made
        finally:
            unregister(hook)
        return
    before = set(graph.nodes)
    yield made
    made.extend(n for n in graph.nodes if n not in before)


def _wrapped(original: Callable[..., Any], callback: Rewritten) -> Callable[..., Any]:
    def apply(self: Any, match: Any, graph: Any, node: Any) -> Any:
        matched = list(getattr(match, "nodes", None) or ())
        ancestry = {id(n): _sources(n, id(graph)) for n in matched}  # read before the nodes are erased
        with _new_nodes(graph) as made:
            result = original(self, match, graph, node)
        with guard.never_breaking(__name__):
            erased = [source for n in matched if getattr(n, "_erased", False) for source in ancestry[id(n)]]
            alive = [(n.name, id(graph)) for n in made if not getattr(n, "_erased", False)]
            if erased and alive:
                callback(alive, list(dict.fromkeys(erased)))
        return result

    return apply


@contextlib.contextmanager
def on_rewrite(callback: Rewritten) -> Iterator[None]:
    """Call ``callback(made, erased)`` for every pattern rewrite that erased nodes and made new ones."""
    with contextlib.ExitStack() as stack:
        for name in _ENTRIES:
            owner = getattr(_pm, name, None)
            original = owner.__dict__.get("apply") if isinstance(owner, type) else None
            if callable(original):
                stack.enter_context(method_patch.replaced(owner, "apply", _wrapped(original, callback)))
        yield
