"""Which scheduler nodes each combo kernel combines.

With ``combo_kernels`` on, Inductor's scheduler wraps independent fused groups into one
``ForeachKernelSchedulerNode`` after fusion, and ``SIMDScheduling.codegen_combo_kernel`` generates one
Triton kernel for them. Wrapping that method tells the capture, for the kernels emitted inside the
call, the sub-kernels and their scheduler nodes (``get_subkernel_nodes``).
"""

from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator

from torch._inductor.codegen import simd as _simd

from . import guard

_NAME = "codegen_combo_kernel"

Groups = list[list[str]]


def sub_kernels(combo_node: Any) -> Groups:
    getter = getattr(combo_node, "get_subkernel_nodes", None)
    subs = getter() if getter is not None else []
    return [[member.get_name() for member in sub.get_nodes()] for sub in subs]


@contextlib.contextmanager
def on_combo_kernel(callback: Callable[[Groups | None], None]) -> Iterator[None]:
    """``callback(groups)`` before a combo kernel is generated, ``callback(None)`` after it."""
    owner = getattr(_simd, "SIMDScheduling", None)
    original = vars(owner).get(_NAME) if owner is not None else None
    if original is None:
        yield
        return

    def codegen_combo_kernel(self: Any, combo_kernel_node: Any) -> Any:
        with guard.never_breaking(__name__):
            callback(sub_kernels(combo_kernel_node))
        try:
            return original(self, combo_kernel_node)
        finally:
            with guard.never_breaking(__name__):
                callback(None)

    setattr(owner, _NAME, codegen_combo_kernel)
    try:
        yield
    finally:
        setattr(owner, _NAME, original)
