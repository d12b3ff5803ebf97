"""The generated wrapper module and Inductor's kernel -> post-grad-node provenance.

``GraphLowering.save_output_code`` is Inductor's documented hook (used by ``run_and_get_code``): it is
called with the whole output code once codegen is done. At that moment the provenance tables filled
by ``set_kernel_post_grad_provenance_tracing`` (enabled by ``trace.provenance_tracking_level``) hold
this graph's kernels, so they are copied in the same call.
"""

from __future__ import annotations

import contextlib
from typing import Callable, Iterator

from torch._inductor import debug as _debug
from torch._inductor.graph import GraphLowering

from . import guard

PROVENANCE_LEVEL_KEY = "trace.provenance_tracking_level"


def provenance_tables() -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """(kernel "name:handle" -> post-grad node names, kernel "name:handle" -> stack traces)."""
    nodes = getattr(_debug, "_inductor_triton_kernel_to_post_grad_node_info", {}) or {}
    traces = getattr(_debug, "_inductor_kernel_stack_trace", {}) or {}
    return ({k: list(v) for k, v in nodes.items()}, {k: list(v) for k, v in traces.items()})


def fresh_provenance_tables() -> contextlib.AbstractContextManager[None]:
    """Empty provenance tables for one backward compile, restored after it.

    Inductor resets the tables around the forward compile (``reset_provenance_globals`` in
    ``_compile_fx_main``), but a backward graph compiles lazily, on the first backward call, outside
    that scope: its kernels would be added to whatever an earlier backward compile left there."""
    reset = getattr(_debug, "reset_provenance_globals", None)
    return reset() if reset is not None else contextlib.nullcontext()


@contextlib.contextmanager
def on_output_code(callback: Callable[[str], None]) -> Iterator[None]:
    previous = GraphLowering.save_output_code

    def save_output_code(code: str) -> None:
        with guard.never_breaking(__name__):
            callback(code)
        if previous is not None:
            previous(code)

    GraphLowering.save_output_code = staticmethod(save_output_code)  # type: ignore[assignment]
    try:
        yield
    finally:
        GraphLowering.save_output_code = previous  # type: ignore[assignment]
