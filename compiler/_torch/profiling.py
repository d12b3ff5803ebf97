"""Making the compiled program's own kernels visible to torch.profiler under the explorer's ids.

Inductor's wrapper calls every generated kernel through a global of its loaded module
(``cpp_fused_add_0(...)`` for C++, ``triton_poi_fused_add_0.run(...)`` for Triton), looked up at call
time. For the duration of a profile each such global is swapped for a thin stand-in that opens a
``record_function`` named after the explorer's id (``g0/cpp_fused_add_0``) around the call, so:

- C++ kernels, which the profiler cannot see otherwise (Inductor's ``cpp.enable_kernel_profile`` makes
  them visible but costs about a third more compile time: it is not turned on), become timed events;
- Triton kernels keep Inductor's own launch event inside ours, with their CUDA kernels linked to it;
- forward and backward graphs, which may both define ``cpp_fused_0``, are told apart.

The originals are put back on exit, also when a run raises.
"""

from __future__ import annotations

import contextlib
from typing import Any, Iterator

import torch
from torch.autograd import profiler as _autograd_profiler


def profiler_active() -> bool:
    """Whether a torch.profiler / autograd profiler is already recording in this process."""
    return bool(getattr(_autograd_profiler, "_is_profiler_enabled", False))


class _MarkedLaunch:
    """Stands in for a Triton kernel object: ``.run`` is recorded under ``label``; the rest forwards."""

    def __init__(self, kernel: Any, label: str) -> None:
        self._kernel = kernel
        self._label = label

    def run(self, *args: Any, **kwargs: Any) -> Any:
        with torch.profiler.record_function(self._label):
            return self._kernel.run(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._kernel, name)


def _marked_call(kernel: Any, label: str) -> Any:
    def call(*args: Any, **kwargs: Any) -> Any:
        with torch.profiler.record_function(label):
            return kernel(*args, **kwargs)

    return call


def _marked(kernel: Any, label: str) -> Any:
    return _MarkedLaunch(kernel, label) if callable(getattr(kernel, "run", None)) else _marked_call(kernel, label)


@contextlib.contextmanager
def marked_kernels(namespaces: list[tuple[dict[str, Any], dict[str, str]]]) -> Iterator[int]:
    """Swap kernel globals for recorded stand-ins: ``[(wrapper module globals, {name: label})]``.

    Yields how many kernels were marked (names missing from a namespace are left alone).
    """
    swapped: list[tuple[dict[str, Any], str, Any]] = []
    try:
        for namespace, labels in namespaces:
            for name, label in labels.items():
                original = namespace.get(name)
                if original is None or not callable(getattr(original, "run", original)):
                    continue
                namespace[name] = _marked(original, label)
                swapped.append((namespace, name, original))
        yield len(swapped)
    finally:
        for namespace, name, original in reversed(swapped):
            namespace[name] = original
