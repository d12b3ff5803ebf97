"""``c.cudagraphs.what_if()``: the same program with what kept a region out of CUDA graphs removed, the way
Inductor offers it, compiled again and measured beside the original.

Three fixes, each for the cause it removes: an input the graph writes into, marked static (``"static"``:
``torch._dynamo.mark_static_address``, the CUDA graph tree then records a graph that writes into it) or
cloned before the call (``"clone"``: your tensor is no longer updated in place); a CPU tensor input moved
to the GPU (``"device"``: what was computed on the CPU is computed there, its result on the GPU). Each
compile runs on copies of the inputs: yours are left as they were. Built by
compiler/pipeline/cudagraph_what_if.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from .slots import Rendered

Fix = Literal["static", "clone", "device"]
FIXES: dict[str, str] = {  # fix -> what it does to the program, in words
    "static": "input {input} marked static (torch._dynamo.mark_static_address): the CUDA graph writes into it",
    "clone": "input {input} cloned before the call: the graph writes into the clone, and your tensor is no longer "
             "updated in place (return the result and assign it)",
    "device": "input {input} moved to the GPU: what was computed from it on the CPU runs on the GPU, and its "
              "results are on the GPU",
}


class CudaGraphFixError(ValueError):
    """No fix Inductor offers applies (or the one asked for does not fit); nothing was compiled."""


@dataclass(repr=False)
class CudaGraphWhatIf(Rendered):
    """The original and the fixed program, side by side: how each graph runs in CUDA graphs, and a call's time."""

    fix: str
    input: int  # the position of the input changed (your inputs, flattened)
    change: str  # what the fix does to the program, in words
    before: Any  # the Compilation asked (unchanged)
    after: Any  # the Compilation of the fixed program
    before_time: Any = None  # CudaGraphTime of each, when measured
    after_time: Any = None
    notes: list[str] = field(default_factory=list)

    def states(self) -> list[tuple[str, str, str]]:
        """(graph, state before, state after), graphs paired by position."""
        before = [g for g in self.before.graphs if g.cudagraphs is not None]
        after = [g for g in self.after.graphs if g.cudagraphs is not None]
        out = []
        for i in range(max(len(before), len(after))):
            b = before[i].cudagraphs.state.value if i < len(before) else "-"
            a = after[i].cudagraphs.state.value if i < len(after) else "-"
            out.append((before[i].id if i < len(before) else after[i].id, b, a))
        return out

    @property
    def saved_ms(self) -> float | None:
        """Per call, what the fixed program saves over the original (with CUDA graphs both)."""
        if self.before_time is None or self.after_time is None:
            return None
        return self.before_time.with_ms - self.after_time.with_ms

    def __repr__(self) -> str:
        states = ", ".join(f"{g} {b} -> {a}" for g, b, a in self.states())
        saved = f", {self.saved_ms:.4f} ms saved per call" if self.saved_ms is not None else ""
        return f"CudaGraphWhatIf({self.fix} input {self.input}: {states}{saved})"
