"""g.memory: the wrapper's buffers over its steps, from Inductor's own memory plan.

A *step* is one call the wrapper makes (a generated kernel, an extern op): the buffers allocated for it
(or taken over from a freed one, ``# reuse``), the call, then the buffers it was the last user of,
freed. Live bytes are the storage the compiled graph itself holds: buffers it allocates, including its
outputs; inputs belong to the caller and are counted apart (``input_bytes``).

The events come from the planned Wrapper IR lines (``compiler/_torch/wrapper_ir.py``): Inductor's
allocation sizes, its reuse decisions and which reuses are in-place updates. Each event is then found
in the generated wrapper text, which gives it a line (linking a step to the explorer's kernel id) and
checks the two agree: every ``# reuse``, allocation and ``del`` of the text must match an event
(``mismatches`` lists any that do not). Inductor's own estimate (``torch/_inductor/memory.py``) is kept
beside it in ``estimate``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from . import slots
from .formatting import did_you_mean, fmt_bytes
from .slots import Rendered


@dataclass
class MemoryBuffer:
    name: str
    bytes: int  # storage bytes it brought (0 when it lives in another buffer's storage)
    dtype: str | None
    shape: list[Any]
    kind: str  # alloc | reuse | inplace | alias | extern (allocated inside an extern op)
    alloc_step: int
    free_step: int | None  # last step it is live in; None when it is returned
    storage: str  # the buffer whose allocation holds its data
    reuses: str | None = None  # reuse/inplace: the buffer whose storage it took over; alias: the one it views
    reused_by: str | None = None
    freed_by: str | None = None  # del | reuse | return (dropped when the call function returns)
    output: bool = False
    wrapper_line: int | None = None
    free_line: int | None = None


@dataclass
class MemoryStep:
    index: int
    call: str  # what the wrapper calls (kernel or extern op), or "return"
    kernel: str | None  # the explorer's kernel id for that call
    wrapper_line: int | None
    allocated: list[str] = field(default_factory=list)
    freed: list[str] = field(default_factory=list)
    peak_bytes: int = 0  # live while the call runs (its outputs allocated, its inputs not yet freed)
    live_bytes: int = 0  # live after the step's frees


@dataclass
class MemoryMeasurement:
    """One run on the GPU: torch.cuda.max_memory_allocated during the call minus what was held before."""

    peak_bytes: int
    baseline_bytes: int
    estimated_bytes: int
    device: str

    @property
    def ratio(self) -> float | None:
        return self.peak_bytes / self.estimated_bytes if self.estimated_bytes else None

    def __repr__(self) -> str:
        ratio = f", {self.ratio:.3f}x the plan" if self.ratio is not None else ""
        return f"MemoryMeasurement({fmt_bytes(self.peak_bytes)} measured on {self.device}{ratio})"


@dataclass(repr=False)
class MemoryTimeline(Rendered):
    steps: list[MemoryStep]
    buffers: list[MemoryBuffer]
    peak_bytes: int
    peak_step: int | None
    at_peak: list[str]  # buffers live at the peak
    input_bytes: int = 0
    output_bytes: int = 0
    estimate: dict[str, Any] | None = None  # Inductor's memory.py estimate: peak_bytes, input_bytes, nodes
    measured: MemoryMeasurement | None = None
    mismatches: list[str] = field(default_factory=list)  # wrapper text vs the planned lines
    notes: list[str] = field(default_factory=list)
    graph: Any = field(default=None, compare=False)  # the GraphCapture, while live

    def buffer(self, name: str) -> MemoryBuffer:
        for b in self.buffers:
            if b.name == name:
                return b
        names = [b.name for b in self.buffers]
        raise KeyError(f"no buffer {name!r} in the memory timeline{did_you_mean(name, names)}; buffers: {names[:20]}")

    @property
    def reuse_marks(self) -> list[tuple[str, str]]:
        """(buffer, the buffer whose storage it took over) for every ``# reuse`` of the wrapper."""
        return [(b.name, b.reuses) for b in self.buffers if b.kind in ("reuse", "inplace") and b.reuses]

    def measure(self) -> MemoryMeasurement:
        """Run this graph once on the GPU and record the measured peak next to the plan's."""
        if self.graph is None:
            raise RuntimeError("measure() needs the live compilation; this timeline was loaded from a trace")
        self.measured = slots.measure_memory(self.graph)
        return self.measured

    def __repr__(self) -> str:
        reused = sum(1 for b in self.buffers if b.kind == "reuse")
        inplace = sum(1 for b in self.buffers if b.kind == "inplace")
        return (f"MemoryTimeline({len(self.steps)} steps, {len(self.buffers)} buffers, "
                f"peak {fmt_bytes(self.peak_bytes)} at step {self.peak_step}, {reused} reused, {inplace} in place)")
