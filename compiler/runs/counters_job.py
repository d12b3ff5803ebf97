"""Which kernels ``c.counters()`` measures, and what its worker (compiler/runs/counters_worker.py) is told
to run for each.

Every GPU kernel of a compilation can be measured: a Triton kernel (or template) runs from its captured
source; an extern kernel (``extern_kernels.mm``, ``addmm``, ``bmm``, ``convolution``,
``torch.ops.aten._scaled_dot_product_*``...) is called as the wrapper calls it, on tensors of the
layouts the wrapper gives its arguments (``model.launch_args.extern_call``); an AOTInductor package's
C shim call as the ATen op of the node it computes (``runs/node_call.py``). Only the trace is needed:
a compilation loaded from a file can be measured too (but for a package's shims, which need the
post-grad graph of the live capture).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..model.errors import CountersUnavailable
from ..model.formatting import did_you_mean
from ..model.launch_args import extern_call
from .node_call import node_call
from .replay import in_package

MEASURED_LANGUAGES = ("triton", "template", "extern")
RANGE_PREFIX = "inductor_explorer_item_"  # the worker's NVTX range of job item i is RANGE_PREFIX + str(i)


@dataclass
class Plan:
    """The kernels to measure and the worker's items for them, in the same order; ``skipped``: kernels
    the default selection picked that cannot be re-run (kernel id -> why)."""

    kernels: list[Any] = field(default_factory=list)
    job: list[dict[str, Any]] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)


def job_id(kernel: Any) -> str:
    return f"{kernel.graph.id}/{kernel.id}" if kernel.graph is not None else kernel.id


def job_item(kernel: Any, index: int) -> dict[str, Any]:
    """What the worker runs for ``kernel``; ``ValueError`` says why an extern call cannot be rebuilt."""
    item: dict[str, Any] = {"id": job_id(kernel), "name": kernel.name, "range": f"{RANGE_PREFIX}{index}"}
    if kernel.language != "extern":
        return {**item, "kind": "triton", "source": kernel.source}
    if kernel.graph is None:
        raise ValueError("it belongs to no graph, so there is no wrapper to read its call from")
    if in_package(kernel):
        return {**item, "kind": "extern", "call": node_call(kernel)}  # a C shim in the package's C++ wrapper
    return {**item, "kind": "extern", "call": extern_call(kernel, kernel.graph.wrapper.source)}


def _measurable(c: Any) -> list[Any]:
    return [k for g in c.graphs for k in g.kernels if k.language in MEASURED_LANGUAGES]


def _by_profile(c: Any, kernels: list[Any]) -> list[Any]:
    """Slowest first by the newest profile (kernels it did not see last); in graph order without one."""
    if not c.profiles:
        return kernels
    profile = c.profiles[-1]

    def ms(k: Any) -> float:
        try:
            return profile.ms(k)
        except KeyError:
            return -1.0

    return sorted(kernels, key=ms, reverse=True)


def _named(c: Any, kernels: Any) -> list[Any]:
    if isinstance(kernels, (str, bytes)) or not hasattr(kernels, "__iter__"):
        kernels = [kernels]
    every = [k for g in c.graphs for k in g.kernels]
    chosen: list[Any] = []
    for item in kernels:
        if hasattr(item, "source") and hasattr(item, "language"):
            kernel = item
        else:
            found = [k for k in every if k.id == item or k.name == item]
            if not found:
                raise KeyError(f"no kernel {item!r} in {c.function}{did_you_mean(str(item), [k.id for k in every])}")
            kernel = found[0]
        if kernel.language not in MEASURED_LANGUAGES:
            raise CountersUnavailable(
                f"kernel {kernel.id} is a {kernel.language} kernel, which runs on the CPU: counters measure GPU "
                "kernels (Triton kernels, templates and extern calls such as cuBLAS matmuls); time it with c.profile()")
        if kernel not in chosen:
            chosen.append(kernel)
    return chosen


def plan(c: Any, kernels: Any = None, top: int = 10) -> Plan:
    """The kernels named (Kernel objects or ids), else the ``top`` slowest by the newest profile, Triton
    and extern alike. A kernel named that cannot be measured raises ``CountersUnavailable`` saying why;
    one the default selection picked is kept in ``skipped`` with the reason."""
    if kernels is None:
        measurable = _measurable(c)
        if not measurable:
            raise CountersUnavailable(f"{c.function} has no GPU kernel to measure (its kernels are "
                                      f"{sorted({k.language for g in c.graphs for k in g.kernels}) or 'none'})")
        chosen, named = _by_profile(c, measurable)[:max(1, top)], False
    else:
        chosen, named = _named(c, kernels), True
    out = Plan()
    for kernel in chosen:
        try:
            item = job_item(kernel, len(out.job))
        except ValueError as error:
            why = f"its call cannot be re-run outside the wrapper: {error}"
            if named:
                raise CountersUnavailable(f"extern kernel {kernel.id}: {why}") from None
            out.skipped[kernel.id] = why
            continue
        out.kernels.append(kernel)
        out.job.append(item)
    return out
