"""A custom FX wrapper backend: Inductor's ``register_backend_for_device`` with a ``WrapperFxCodegen``.

A device's codegen registration names, beside its kernel scheduling and its Python and C++ wrapper
classes, the class used when ``config.fx_wrapper`` is on. ``WrapperFxCodegen.compile_graph(gm)`` is
the hook a backend overrides: it receives the wrapper as an FX GraphModule (allocations, kernel
launches, extern calls) and returns the callable the compiled function will run. Registering a
subclass whose ``compile_graph`` is a user function, for one block, lets anyone run, rewrite or
instrument the wrapper graph. On exit the device's previous registration (and its custom pass and
config) and ``fx_wrapper`` are put back. Kernels compiled in Inductor's compile workers get their Python
function back on import (``wrapper_fx.kernels_with_python_functions``), which launching them from the graph needs.
"""

from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator

from torch._inductor import config as _config
from torch._inductor.codegen import common as _common

from .wrapper_fx import kernels_with_python_functions

_MISSING = object()


def _registries() -> tuple[dict[str, Any], ...]:
    return (_common.device_codegens, _common.custom_backend_passes, _common.custom_backend_codegen_configs)


@contextlib.contextmanager
def fx_wrapper_backend(device: str, compile_graph: Callable[[Any], Callable[..., Any]]) -> Iterator[type]:
    """For the block, Inductor hands each graph compiled for ``device`` to ``compile_graph(gm)`` and runs
    what it returns. Yields the registered WrapperFxCodegen subclass."""
    try:
        from torch._inductor.codegen.wrapper_fxir import WrapperFxCodegen
    except ImportError as error:
        raise RuntimeError("this torch has no FX wrapper codegen (torch._inductor.codegen.wrapper_fxir)") from error
    if not callable(compile_graph):
        raise TypeError(f"compile_graph must be a function taking a GraphModule, got {type(compile_graph).__name__}")
    _common.init_backend_registration()
    current = _common.device_codegens.get(device)
    if current is None:
        raise ValueError(f"Inductor has no backend registered for device {device!r}; "
                         f"registered: {sorted(_common.device_codegens)}")

    class UserFxWrapperCodegen(WrapperFxCodegen):
        def compile_graph(self, gm: Any) -> Callable[..., Any]:
            return compile_graph(gm)

    saved = [registry.get(device, _MISSING) for registry in _registries()]
    _common.register_backend_for_device(
        device, current.scheduling, current.wrapper_codegen, current.cpp_wrapper_codegen, UserFxWrapperCodegen,
        _common.custom_backend_passes.get(device), _common.custom_backend_codegen_configs.get(device),
    )
    try:
        with _config.patch({"fx_wrapper": True}), kernels_with_python_functions(to_run=True):
            yield UserFxWrapperCodegen
    finally:
        for registry, value in zip(_registries(), saved):
            if value is _MISSING:
                registry.pop(device, None)
            else:
                registry[device] = value
