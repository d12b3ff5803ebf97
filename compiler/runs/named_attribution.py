"""Profile attribution for C++ wrappers (an AOTInductor package, a JIT ``cpp_wrapper`` compile).

The Python-wrapper attribution marks kernels by swapping the wrapper's Python globals; a C++ wrapper
calls its kernels directly, inside a compiled library. The capture builds C++ wrappers with
``cpp.enable_kernel_profile``, so every generated kernel and every shim call (``aoti_torch_cpu_addmm_out``)
opens a profiler range named after it (``graph_0_cpp_fused_relu_0``). Those ranges, found under each run's
mark, are matched to the kernels by name (a GPU package names a Triton launch ``kernels_.<kernel>``): generated kernels by their name, extern calls in wrapper
order (the same shim is called once per extern kernel). On a GPU a range's time is the device time of
the kernels launched inside it.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from ..model.profile import KernelRef

_GRAPH_PREFIX = re.compile(r"^graph_\d+_")


@dataclass
class NamedAttribution:
    kernel_us: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    calls: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    unattributed: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    total_us: float = 0.0
    timeline: list[list[Any]] = field(default_factory=list)


def uses_named_ranges(c: Any) -> bool:
    """Every graph of ``c`` has a C++ wrapper (its kernels are seen by the ranges they open)."""
    return bool(c.graphs) and all(g.wrapper.language == "cpp" for g in c.graphs)


def attribute_named(c: Any, refs: dict[str, KernelRef], events: Any, run_mark: str, cuda: bool) -> NamedAttribution:
    """Sum each kernel's time over every run marked ``run_mark`` in the profiler's ``events``."""
    generated, externs = _names(c, refs)
    out = NamedAttribution()
    marks = sorted((e for e in events if e.name == run_mark), key=lambda e: e.time_range.start)
    for index, mark in enumerate(marks):
        pending = {name: list(keys) for name, keys in externs.items()}
        origin = mark.time_range.start if index == len(marks) - 1 else None  # the last run is the timeline
        listed = 0.0
        for item in _ranges(mark, generated, externs):
            name = _kernel_name(item.name)
            spent = float(item.device_time_total if cuda else item.cpu_time_total)
            listed += float(item.cpu_time_total)
            key = generated.get(name) or (pending[name].pop(0) if pending.get(name) else None)
            if key is None:
                out.unattributed[item.name] += spent
                continue
            out.kernel_us[key] += spent
            out.calls[key] += 1
            if origin is not None:
                out.timeline.append([key, round(item.time_range.start - origin, 3), round(spent, 3)])
        total = float(mark.cpu_time_total)
        out.total_us += total
        if not cuda:
            out.unattributed["the wrapper's own code between kernels"] += max(0.0, total - listed)
    return out


def _kernel_name(range_name: str) -> str:
    """The kernel a range is named after: ``graph_0_cpp_fused_relu_0`` (a C++ kernel),
    ``kernels_.triton_poi_fused_add_0`` (a Triton launch in a GPU package), ``aoti_torch_cpu_addmm_out``."""
    return _GRAPH_PREFIX.sub("", range_name.rsplit(".", 1)[-1])


def _names(c: Any, refs: dict[str, KernelRef]) -> tuple[dict[str, str], dict[str, list[str]]]:
    """Generated kernel name -> profile key; extern call name -> its keys in wrapper order."""
    key_of = {(r.graph, r.kernel): key for key, r in refs.items()}
    generated: dict[str, str] = {}
    externs: dict[str, list[tuple[int, str]]] = defaultdict(list)
    for graph in c.graphs:
        for kernel in graph.kernels:
            key = key_of[(graph.id, kernel.id)]
            if kernel.language == "extern":
                externs[kernel.name].append((kernel.wrapper_lines[0] if kernel.wrapper_lines else 0, key))
            else:
                generated[kernel.name] = key
    return generated, {name: [key for _, key in sorted(items)] for name, items in externs.items()}


def _ranges(event: Any, generated: dict[str, str], externs: dict[str, list[str]]) -> list[Any]:
    """The kernel and shim ranges under ``event``, looking through the ranges around them (a JIT graph's
    call); an operator range that is neither (``aten::...``) is listed as it is, as unattributed work."""
    out = []
    for child in event.cpu_children:
        name = _kernel_name(child.name)
        if name in generated or name in externs or "::" in child.name or not child.cpu_children:
            out.append(child)
        else:
            out.extend(_ranges(child, generated, externs))
    return out
