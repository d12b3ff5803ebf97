"""Edited Triton kernels in place of the originals, inside the whole compiled program.

"Does my fix keep the model correct, and what does it save end to end" is asked of the whole program,
not of the kernel alone: ``with c.with_edits({kernel: source}):`` swaps each edited kernel into its
graph's wrapper (the global the wrapper launches it through, compiler/_torch/kernel_calls.py), so
``c.run()``, ``c.profile()`` and ``c.check_numerics()`` inside the block run the edited program; the
originals are back when the block exits, also when it raises. Each edit is first compiled and run in a
worker process (``k.edit``), so one that does not compile or faults never reaches this process.
"""

from __future__ import annotations

import contextlib
from typing import Any, Iterator, Mapping

from .._torch import cudagraph_tree, runtime
from ..model import slots
from ..model.formatting import did_you_mean
from . import replay


def substitutes(c: Any, edits: Mapping[Any, str] | None, what: str) -> dict[tuple[str, str], Any]:
    """(graph, kernel) -> the edited kernel object. ``what`` names the call in errors."""
    out: dict[tuple[str, str], Any] = {}
    for key, source in (edits or {}).items():
        kernel = key if not isinstance(key, str) else next((k for k in c.kernels if k.id == key), None)
        if kernel is None:
            ids = [k.id for k in c.kernels]
            raise KeyError(f"{what}: no kernel {key!r}{did_you_mean(key, ids)}; kernels: {ids}")
        if kernel.language not in ("triton", "template"):
            raise ValueError(f"{what}: {kernel.id} is a {kernel.language} kernel; only Triton kernels can be "
                             "edited in place (k.repro(path, source=...) checks an edited C++ kernel alone)")
        result = kernel.edit(source, bench=False)
        if not result.ok:
            raise ValueError(f"{what}: the edit of {kernel.id} does not run ({result.stage}: {result.error}); "
                             "fix it first (kernel.edit(source) shows the error)")
        module = runtime.load_kernel_module(source)
        out[(kernel.graph.id, kernel.id)] = getattr(module, kernel.name)
    return out


@contextlib.contextmanager
def swapped(c: Any, found: Mapping[tuple[str, str], Any]) -> Iterator[list[str]]:
    """The substitutes in their wrappers for the block; yields their labels (``graph/kernel``)."""
    originals: list[tuple[dict[str, Any], str, Any]] = []
    try:
        for graph in c.graphs:
            if graph.compiled_fn is None:
                continue
            edited = [k for k in graph.kernels if (graph.id, k.id) in found]
            namespace = runtime.wrapper_globals(graph.compiled_fn, [k.name for k in edited])
            for kernel in edited:
                if kernel.name in namespace:
                    originals.append((namespace, kernel.name, namespace[kernel.name]))
                    namespace[kernel.name] = found[(graph.id, kernel.id)]
        # a CUDA graph recorded the original kernels: under mode="reduce-overhead" the edited ones launch one by one
        with cudagraph_tree.without_cuda_graphs():
            yield [f"{g}/{k}" for g, k in found]
    finally:
        for namespace, name, original in reversed(originals):
            namespace[name] = original


@slots.with_edits.fill
@contextlib.contextmanager
def with_edits(c: Any, edits: Mapping[Any, str]) -> Iterator[list[str]]:
    """``with c.with_edits({kernel or id: source}):`` see the module docstring."""
    if not c.live:
        raise RuntimeError("with_edits needs the live compilation: this one was loaded from a file; compile it "
                           "again with explorer.compile(...)")
    replay.check_python_wrapper(c, "with_edits()")
    if not edits:
        raise ValueError("with_edits({kernel or id: edited source, ...}) needs at least one edit")
    with swapped(c, substitutes(c, edits, "with_edits")) as labels:
        yield labels
