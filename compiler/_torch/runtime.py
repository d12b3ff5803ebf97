"""Live Inductor artifacts after a compile: the loaded wrapper module and Triton kernel modules.

- ``wrapper_globals``: ``CompiledFxGraph.current_callable`` is (a wrapper around) the wrapper module's
  ``call``; that module's globals hold every kernel object by name.
- ``launch_config``: a Triton ``CachingAutotuner``'s launchers after its first run (the chosen config).
- ``load_kernel_module``: Inductor's ``PyCodeCache`` writes a source to a file and imports it; Triton's
  ``@jit`` needs a real file to read the kernel's source from.
"""

from __future__ import annotations

from typing import Any


def wrapper_globals(compiled_fn: Any, kernel_names: list[str]) -> dict[str, Any]:
    """The loaded wrapper module's namespace: the first function reachable from ``current_callable``
    (through bound methods, ``__wrapped__`` and closures: Inductor wraps ``call`` to realign inputs)
    whose globals define one of ``kernel_names``."""
    pending = [getattr(compiled_fn, "current_callable", None)]
    seen: set[int] = set()
    while pending:
        candidate = pending.pop(0)
        if candidate is None or id(candidate) in seen or len(seen) > 64:
            continue
        seen.add(id(candidate))
        namespace = getattr(candidate, "__globals__", None)
        if isinstance(namespace, dict) and any(name in namespace for name in kernel_names):
            return namespace
        pending += [getattr(candidate, "__func__", None), getattr(candidate, "__wrapped__", None)]
        pending += [cell.cell_contents for cell in (getattr(candidate, "__closure__", None) or ())
                    if callable(getattr(cell, "cell_contents", None))]
    return {}


def launch_config(kernel_object: Any) -> dict[str, Any]:
    """num_warps, num_stages, block sizes and resource use of the config a Triton kernel launches with."""
    launchers = getattr(kernel_object, "launchers", None) or []
    if not launchers:
        return {}
    launcher = launchers[0]
    config = getattr(launcher, "config", None)
    out: dict[str, Any] = {}
    if config is not None:
        out["config"] = dict(getattr(config, "kwargs", {}) or {})
        for attr in ("num_warps", "num_stages", "num_ctas"):
            if getattr(config, attr, None) is not None:
                out[attr] = getattr(config, attr)
    for attr, key in (("n_regs", "registers"), ("n_spills", "spills"), ("shared", "shared_memory")):
        value = getattr(launcher, attr, None)
        if isinstance(value, (int, float)):
            out[key] = value
    out["configs_tried"] = len(getattr(kernel_object, "configs", None) or [])
    return out


def load_kernel_module(source: str) -> Any:
    from torch._inductor.codecache import PyCodeCache

    return PyCodeCache.load(source)


def rand_strided_seeded(seed: int) -> None:
    """Seed the generator behind the ``rand_strided`` inputs of a kernel's benchmark harness."""
    import torch

    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)
