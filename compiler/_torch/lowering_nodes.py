"""Which FX node Inductor was lowering when it created each operation.

Inductor gives an IR node the origins of the FX node being lowered *and* of every unrealized input it
was handed (``gather_origins`` in ``GraphLowering.run_node``), and a subgraph lowered inside a
higher-order op (a ``cond`` branch) inherits the enclosing op's origins. Origins alone cannot tell
what a node computes: an extern matmul lists the LayerNorm it reads, a branch's kernel the predicate.
``GraphLowering.register_operation`` names each operation while ``current_node`` is the FX node being
lowered, so wrapping it records the creator, which tells the stages of one op (a split reduction, a
fallback's outputs) from the inputs they read.
"""

from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator

from torch._inductor.graph import GraphLowering

from . import guard, method_patch

Lowered = Callable[[Any, str, Any], None]  # (lowered GraphModule, operation name, FX node being lowered)


@contextlib.contextmanager
def on_operation_lowered(callback: Lowered) -> Iterator[None]:
    """Call ``callback(module, operation_name, fx_node)`` for every operation any lowering registers."""
    original = getattr(GraphLowering, "register_operation", None)
    if original is None:
        yield
        return

    def register_operation(self: Any, op: Any) -> str:
        name = original(self, op)
        node = getattr(self, "current_node", None)
        if node is not None:
            with guard.never_breaking(__name__):
                callback(getattr(self, "module", None), name, node)
        return name

    with method_patch.replaced(GraphLowering, "register_operation", register_operation):
        yield
