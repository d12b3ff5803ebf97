"""Exactly which scheduler nodes each generated kernel (or extern call) implements.

Codegen reports every kernel it emits to ``debug.set_kernel_post_grad_provenance_tracing(node_schedule,
kernel_name, is_extern)``, which returns the kernel's provenance handle (the ``name:handle`` keys of the
provenance tables). Some codegen modules import that function by name, so it is swapped wherever a
loaded ``torch._inductor`` module holds it, and put back on exit.
"""

from __future__ import annotations

import contextlib
import sys
from typing import Any, Callable, Iterator

from torch._inductor import debug as _debug

from . import guard

_NAME = "set_kernel_post_grad_provenance_tracing"


def _node_names(node_schedule: Any, is_extern: bool) -> list[str]:
    if is_extern:
        getter = getattr(node_schedule, "get_operation_name", None)
        return [getter()] if getter else []
    names = []
    for snode in node_schedule or ():
        if isinstance(snode, type):  # the EnableReduction/DisableReduction markers are classes
            continue
        members = getattr(snode, "get_nodes", None)  # a fused group (a combo kernel's part) -> its members
        for member in members() if callable(members) else [snode]:
            getter = getattr(member, "get_name", None)
            if getter is not None:
                names.append(getter())
    return names


@contextlib.contextmanager
def on_kernel_nodes(callback: Callable[[str, list[str]], None]) -> Iterator[None]:
    """Call ``callback("kernel_name:handle", [scheduler node names])`` for every kernel codegen emits."""
    original = getattr(_debug, _NAME, None)
    if original is None:
        yield
        return

    def set_kernel_post_grad_provenance_tracing(node_schedule: Any, kernel_name: str, is_extern: bool = False) -> Any:
        handle = original(node_schedule, kernel_name, is_extern)
        if handle is not None:
            with guard.never_breaking(__name__):
                callback(f"{kernel_name}:{handle}", _node_names(node_schedule, is_extern))
        return handle

    holders = [m for name, m in list(sys.modules.items())
               if name.startswith("torch._inductor") and getattr(m, _NAME, None) is original]
    for module in holders:
        setattr(module, _NAME, set_kernel_post_grad_provenance_tracing)
    try:
        yield
    finally:
        for module in holders:
            setattr(module, _NAME, original)
