"""Which FX nodes an autotuning was for, so its seconds can be charged to the kernel computing them.

Inductor times each autotuning (``{op}_template_precompiling`` / ``{op}_template_autotuning`` chromium
events) and then hands the results to its feedback savers (compiler/_torch/autotune.py), but neither
names the node. Two places know it:

- autotuning done while lowering a node (``select_algorithm`` called from the node's lowering):
  ``V.graph.current_node`` is that node;
- autotuning deferred to the scheduler (``benchmark_epilogue_fusion``, on by default under max-autotune):
  ``MultiTemplateBuffer.choice_timings`` runs it, and the buffer's ``origins`` are its nodes. The method is
  wrapped for the capture to note the buffer it is timing.
"""

from __future__ import annotations

import contextlib
import threading
from typing import Any, Iterator

from . import method_patch

_timing = threading.local()


def autotuned_nodes() -> list[Any]:
    """The FX nodes the autotuning reporting now belongs to (empty when not known)."""
    buffer = getattr(_timing, "buffer", None)
    if buffer is not None:
        return [n for n in (getattr(buffer, "origins", None) or ()) if getattr(n, "op", "") == "call_function"]
    try:
        from torch._inductor.virtualized import V

        node = getattr(V.graph, "current_node", None)
    except Exception:  # no graph being lowered on this thread
        return []
    return [node] if node is not None else []


@contextlib.contextmanager
def deferred_autotuning_named() -> Iterator[None]:
    """While active, the MultiTemplateBuffer whose choices are being timed is known to ``autotuned_nodes``."""
    try:
        from torch._inductor.ir import MultiTemplateBuffer
    except Exception:
        yield
        return
    if not callable(getattr(MultiTemplateBuffer, "choice_timings", None)):
        yield
        return
    original = MultiTemplateBuffer.choice_timings

    def choice_timings(self: Any, *args: Any, **kwargs: Any) -> Any:
        outer, _timing.buffer = getattr(_timing, "buffer", None), self
        try:
            return original(self, *args, **kwargs)
        finally:
            _timing.buffer = outer

    with method_patch.replaced(MultiTemplateBuffer, "choice_timings", choice_timings):
        yield
