"""Inductor's ``extern_kernels`` namespace: the callables a wrapper's ``extern_kernels.mm(...)`` lines call.

Each ``ExternKernelChoice`` sets its callable on ``torch._inductor.select_algorithm.extern_kernels`` under
its name; importing ``select_algorithm`` imports the lowerings that create them (torch 2.11 to 2.14), so
the namespace is full once the import returns. Used to re-run an extern call outside its wrapper
(``compiler/runs/counters_worker.py``).
"""

from __future__ import annotations

from typing import Any


def extern_kernel(name: str) -> Any:
    """``extern_kernels.<name>`` (``mm``, ``addmm``, ``convolution``...)."""
    from torch._inductor import select_algorithm

    namespace = getattr(select_algorithm, "extern_kernels", None)
    kernel = getattr(namespace, name, None)
    if kernel is None:
        known = sorted(vars(namespace)) if namespace is not None else []
        raise LookupError(f"this torch's Inductor has no extern kernel {name!r} (it has {known})")
    return kernel
