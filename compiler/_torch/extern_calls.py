"""Extern calls codegen writes without a provenance handle.

Most extern kernels announce themselves (``ExternKernel.codegen_comment`` writes ``# [Provenance debug
handles] name:N`` above the call), but some fallbacks write their call line directly: a scatter with a
reduction (``aten.scatter_reduce_.two(buf8, ...)``), an index_put, and others. Their scheduler node
computes a post-grad node, yet no kernel in Inductor's provenance map is there to own it.
``Scheduler.codegen_extern_call`` codegens every extern node; wrapping it tells, for each call that
moved no provenance handle, which scheduler node it was and how its call is spelled.
"""

from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator

from torch._inductor import debug as _debug
from torch._inductor.scheduler import Scheduler

from . import guard, method_patch

Written = Callable[[str, list[str]], None]  # (scheduler node name, the names its call may be spelled with)
_HANDLE = "_inductor_kernel_provenance_debug_handle"


def call_names(scheduler_node: Any) -> list[str]:
    """How the wrapper spells the call of an extern node: its Python kernel name (``aten.scatter_reduce_.two``)
    and its C++ one; none for a node that calls nothing (an output of a multi-output call, an alias)."""
    node = getattr(scheduler_node, "node", None)
    names = [getattr(node, attr, None) for attr in ("python_kernel_name", "cpp_kernel_name")]
    return [n for n in dict.fromkeys(names) if isinstance(n, str) and n]


@contextlib.contextmanager
def on_unhandled_extern_call(callback: Written) -> Iterator[None]:
    """Call ``callback(node_name, call_names)`` for every extern call codegen writes without a provenance
    handle. The lines themselves may still be objects that print later (a scatter fallback's line is
    written out after memory planning), so the call is told by the names it is spelled with."""
    original = getattr(Scheduler, "codegen_extern_call", None)
    if original is None or not hasattr(_debug, _HANDLE):
        yield
        return

    def codegen_extern_call(self: Any, scheduler_node: Any, *args: Any, **kwargs: Any) -> Any:
        handle = getattr(_debug, _HANDLE)
        result = original(self, scheduler_node, *args, **kwargs)
        if getattr(_debug, _HANDLE) == handle:
            with guard.never_breaking(__name__):
                names = call_names(scheduler_node)
                if names:
                    callback(scheduler_node.get_name(), names)
        return result

    with method_patch.replaced(Scheduler, "codegen_extern_call", codegen_extern_call):
        yield
