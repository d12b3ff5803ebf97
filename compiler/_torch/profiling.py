"""torch.profiler around the compiled program: is one recording already, kernel calls as marks, and
the events it recorded as the native layer holds them.

On CPU each generated kernel call is wrapped in a ``record_function`` named after the explorer's id
(``explorer:g0/cpp_fused_add_0``, see kernel_calls.py): C++ kernels, which the profiler cannot see
otherwise (Inductor's ``cpp.enable_kernel_profile`` makes them visible but costs about a third more
compile time: it is not turned on), become timed events, and forward and backward graphs, which may
both define ``cpp_fused_0``, are told apart.

On a GPU only each graph call is marked (``explorer-graph:g0``): Inductor already opens an event named
after the kernel around every Triton launch, and CUPTI links each CUDA kernel to the host event it was
launched under, so a mark per kernel call (a Python stand-in and a ``record_function``, ten times the
launch itself) buys nothing there.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import tempfile
import warnings
from typing import Any, Callable, Iterator, NamedTuple

import torch
from torch.autograd import profiler as _autograd_profiler

from .kernel_calls import observed_graph_calls, observed_kernels

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
    """A started ``torch.profiler.profile``, stopped on exit, without the native layer's stderr lines.
    Torch 2.11 and 2.12 warn at every first start that a profiler "clears events at the end of each
    cycle" (unless ``acc_events``): a profile here is one cycle, so the notice is not the user's."""
    prof = torch.profiler.profile(activities=activities)
    with native_lines_dropped(), warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"Warning: Profiler clears events at the end of each cycle")
        prof.start()
    try:
        yield prof
    finally:
        with native_lines_dropped():
            prof.stop()


class RawEvent(NamedTuple):
    """One event as the profiler's native layer recorded it (times in ns, one clock for host and device)."""

    name: str
    on_device: bool  # a GPU activity (kernel, memcpy, memset); else a host event (operator, annotation, runtime call)
    thread: int
    start_ns: int
    end_ns: int
    correlation: int  # a host operator's id; a GPU activity's CUPTI correlation (its launch's)
    linked: int  # a GPU activity or runtime call: the id of the innermost host operator it ran under; else 0


def raw_events(prof: Any) -> list[RawEvent]:
    """The events of a stopped ``torch.profiler.profile`` as its native layer recorded them.

    ``prof.events()`` builds torch's event tree first (a FunctionEvent per event, parents and children
    linked): about a second for a profile of a 24-layer training step, most of a profile's cost. The
    native list has everything attribution needs: names, threads, times and the correlation ids that
    link each GPU activity to the host operator that launched it."""
    results = getattr(getattr(prof, "profiler", None), "kineto_results", None)
    if results is None:
        raise RuntimeError("this torch's profiler keeps no native event list (profiler.kineto_results); "
                           "inductor-explorer supports torch 2.11 to 2.14")
    host = torch.autograd.DeviceType.CPU
    return [RawEvent(e.name(), e.device_type() != host, e.start_thread_id(), e.start_ns(), e.end_ns(),
                     e.correlation_id(), e.linked_correlation_id()) for e in results.events()]


def profiler_active() -> bool:
    """Whether a torch.profiler / autograd profiler is already recording in this process."""
    return bool(getattr(_autograd_profiler, "_is_profiler_enabled", False))


def _record(label: str, invoke: Callable[[], Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    with torch.profiler.record_function(label):
        return invoke()


@contextlib.contextmanager
def marked_graph_calls(graphs: list[tuple[Any, str]]) -> Iterator[int]:
    """Every call of each ``CompiledFxGraph`` becomes a profiler event named by its label."""
    with observed_graph_calls(graphs, _record) as swapped:
        yield swapped


@contextlib.contextmanager
def marked_kernels(namespaces: list[tuple[dict[str, Any], dict[str, str]]]) -> Iterator[int]:
    """Every call of the named kernel globals becomes a profiler event named by its label."""
    with observed_kernels(namespaces, _record) as swapped:
        yield swapped
