"""torch.profiler around the compiled program: is one recording already, and kernel calls as marks.

Each generated kernel call is wrapped in a ``record_function`` named after the explorer's id
(``explorer:g0/cpp_fused_add_0``, see kernel_calls.py), so:

- C++ kernels, which the profiler cannot see otherwise (Inductor's ``cpp.enable_kernel_profile`` makes
  them visible but costs about a third more compile time: it is not turned on), become timed events;
- Triton kernels keep Inductor's own launch event inside ours, with their CUDA kernels linked to it;
- forward and backward graphs, which may both define ``cpp_fused_0``, are told apart.
"""

from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator

import torch
from torch.autograd import profiler as _autograd_profiler

from .kernel_calls import observed_kernels


def profiler_active() -> bool:
    """Whether a torch.profiler / autograd profiler is already recording in this process."""
    return bool(getattr(_autograd_profiler, "_is_profiler_enabled", False))


def _record(label: str, invoke: Callable[[], Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    with torch.profiler.record_function(label):
        return invoke()


@contextlib.contextmanager
def marked_kernels(namespaces: list[tuple[dict[str, Any], dict[str, str]]]) -> Iterator[int]:
    """Every call of the named kernel globals becomes a profiler event named by its label."""
    with observed_kernels(namespaces, _record) as swapped:
        yield swapped
