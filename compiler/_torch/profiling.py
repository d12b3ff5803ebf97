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
import os
import re
import sys
import tempfile
from typing import Any, Callable, Iterator

import torch
from torch.autograd import profiler as _autograd_profiler

from .kernel_calls import observed_kernels

# What the profiler's native layer (kineto) writes to the process's stderr when it starts and stops:
# ``USDT:2026-... SyncActivityProfilerHandler.cpp:52] profiler_start`` and ``STAGE:... Completed Stage``.
_NATIVE_LINE = re.compile(rb"^(USDT|STAGE):\d{4}-\d\d-\d\d [\d:.]+ +\d+:\d+ \w+\.cpp:\d+\] ")


@contextlib.contextmanager
def native_lines_dropped() -> Iterator[None]:
    """Around the profiler's start and stop: the lines its native layer writes to file descriptor 2 (a
    notebook shows them in red under the cell) are dropped; anything else written meanwhile goes on."""
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError):  # no real stderr (an embedded interpreter): nothing to filter
        yield
        return
    with tempfile.TemporaryFile() as held:
        os.dup2(held.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            held.seek(0)
            kept = [line for line in held.read().splitlines(keepends=True) if not _NATIVE_LINE.match(line)]
            if kept:
                os.write(2, b"".join(kept))


@contextlib.contextmanager
def recording(activities: list[Any]) -> Iterator[Any]:
    """A started ``torch.profiler.profile``, stopped on exit, without the native layer's stderr lines."""
    prof = torch.profiler.profile(activities=activities)
    with native_lines_dropped():
        prof.start()
    try:
        yield prof
    finally:
        with native_lines_dropped():
            prof.stop()


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
