"""The run reports a ``Diff`` quotes beside each kernel pair: time and numerics of both sides.

Each side's latest profile gives a kernel's mean ms per run and the program's, its latest numerics
report the kernel's max relative error against the reference. Reports are keyed by (graph id, kernel
id) of their own compilation, so each side is looked up under its own graph's id: graphs paired by
their lines (diff_lines.py) may carry different ids on the two sides.
"""

from __future__ import annotations

from .compilation import Compilation
from .diff import GraphDiff

Figures = dict[tuple[str, str], float | None]


def kernel_errors(c: Compilation) -> Figures:
    """(graph id, kernel id) -> max relative error in the compilation's latest numerics report."""
    if not c.numerics:
        return {}
    return {(row.graph, row.kernel): row.max_rel for row in c.numerics[-1].kernels.values()}


def kernel_ms(c: Compilation) -> Figures:
    """(graph id, kernel id) -> mean ms per run in the compilation's latest profile."""
    if not c.profiles:
        return {}
    profile = c.profiles[-1]
    return {(ref.graph, ref.kernel): profile.kernel_ms.get(key) for key, ref in profile.kernels.items()}


def run_ms(c: Compilation) -> float | None:
    """The compiled program's time per run in the latest profile (None: never profiled)."""
    return c.profiles[-1].total_ms if c.profiles else None


def attach(graphs: list[GraphDiff], a: Compilation, b: Compilation) -> None:
    """Fill each kernel pair's ``error_a``/``error_b`` and ``ms_a``/``ms_b`` where a report has them."""
    errors_a, errors_b, ms_a, ms_b = kernel_errors(a), kernel_errors(b), kernel_ms(a), kernel_ms(b)
    for g in graphs:
        for change in g.kernels:
            key_a, key_b = (g.graph_a, change.a), (g.graph_b, change.b)
            change.error_a, change.ms_a = (errors_a.get(key_a), ms_a.get(key_a)) if change.a else (None, None)
            change.error_b, change.ms_b = (errors_b.get(key_b), ms_b.get(key_b)) if change.b else (None, None)
