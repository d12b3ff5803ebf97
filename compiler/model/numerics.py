"""A NumericsReport: every kernel's output buffers against a reference run, and the first kernel that
diverges (checked by compiler/runs/numerics.py, saved by compiler/io/reports.py).

Each buffer has two errors. Its *propagated* error compares it with the reference run of the whole
graph from the graph's inputs: it holds every error the kernels before it introduced. Its *local* error
compares it with the reference run of the kernel's own nodes on the values the compiled program
actually gave the kernel: the error this kernel introduces. Rounding that earlier kernels introduce
within tolerance can leave tolerance by the time a matmul has summed it; only the local error says
which kernel made it, so the first divergent kernel is the first whose local error leaves tolerance.
Local errors are computed for the buffers whose propagated error leaves tolerance.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from .slots import Rendered


class Divergence(str, Enum):
    """Which error of a kernel leaves tolerance."""

    LOCAL = "local"  # its own: its output against its nodes run on the inputs the compiled program gave it
    PROPAGATED = "propagated"  # only the whole graph's: errors of the kernels before it, carried in its inputs


@dataclass
class BufferCheck:
    """One buffer one kernel call wrote, against its reference."""

    buffer: str
    node: str | None  # the post-grad node whose value the buffer holds
    call: int  # which call of the kernel (0-based): a kernel may run once per layer
    dtype: str = ""
    shape: list[int] = field(default_factory=list)
    compared: bool = False
    ok: bool | None = None
    max_abs: float | None = None
    max_rel: float | None = None  # max |compiled - reference| / max |reference|
    mismatched: float | None = None  # fraction of elements outside tolerance
    rtol: float | None = None
    atol: float | None = None
    compiled_vs_float64: float | None = None  # max_rel of the compiled buffer against float64
    eager_vs_float64: float | None = None  # max_rel of eager against float64
    nan: tuple[int, int] = (0, 0)  # NaNs in the compiled buffer, in the reference
    inf: tuple[int, int] = (0, 0)
    note: str = ""  # why it was not compared
    # against the kernel's nodes run on the compiled program's own inputs to it; None: not computed, as
    # for a buffer within tolerance of the reference (only an error that leaves tolerance is traced back)
    local_ok: bool | None = None
    local_max_abs: float | None = None
    local_max_rel: float | None = None
    local_mismatched: float | None = None


def _worst(attr: str) -> Any:
    """A row's figure: the worst ``attr`` of its compared buffers (None when none has one)."""

    def worst(row: KernelNumerics) -> float | None:
        values = [getattr(b, attr) for b in row.compared if getattr(b, attr) is not None]
        return max(values) if values else None

    return property(worst)


@dataclass
class KernelNumerics:
    key: str
    graph: str
    kernel: str
    language: str
    calls: int
    buffers: list[BufferCheck] = field(default_factory=list)

    @property
    def compared(self) -> list[BufferCheck]:
        return [b for b in self.buffers if b.compared]

    @property
    def ok(self) -> bool | None:
        """True within tolerance, False outside, None when nothing could be compared."""
        checked = self.compared
        return None if not checked else all(b.ok for b in checked)

    max_abs = _worst("max_abs")
    max_rel = _worst("max_rel")
    mismatched = _worst("mismatched")
    compiled_vs_float64 = _worst("compiled_vs_float64")
    eager_vs_float64 = _worst("eager_vs_float64")
    local_max_abs = _worst("local_max_abs")
    local_max_rel = _worst("local_max_rel")
    local_mismatched = _worst("local_mismatched")

    @property
    def local_ok(self) -> bool | None:
        """The local error within tolerance (True), outside it (False), or not computed (None)."""
        checked = [b.local_ok for b in self.compared if b.local_ok is not None]
        return None if not checked else all(checked)

    @property
    def divergence(self) -> Divergence | None:
        """Which error leaves tolerance: LOCAL when the kernel's own does, PROPAGATED when only the whole
        graph's does (or no local error was computed), None when neither does."""
        if self.local_ok is False:
            return Divergence.LOCAL
        return Divergence.PROPAGATED if self.ok is False else None

    @property
    def introduces_error(self) -> bool:
        """Whether this kernel is a candidate for first divergent: its local error leaves tolerance, or,
        where none was computed (a report saved before local errors, a graph whose local run failed),
        its propagated error does."""
        return self.local_ok is False or (self.local_ok is None and self.ok is False)

    @property
    def notes(self) -> list[str]:
        return sorted({f"{b.buffer}: {b.note}" for b in self.buffers if b.note})

    def __repr__(self) -> str:
        state = {True: "ok", False: "DIVERGES", None: "not compared"}[self.ok]
        if self.divergence is not None:
            state = f"DIVERGES ({self.divergence.value})"
        rel = f", max rel {self.max_rel:.3g}" if self.max_rel is not None else ""
        local = f", local max rel {self.local_max_rel:.3g}" if self.local_max_rel is not None else ""
        return f"KernelNumerics({self.key}: {state}{rel}{local}, {len(self.compared)}/{len(self.buffers)} buffers)"


@dataclass(repr=False)
class NumericsReport(Rendered):
    """Every kernel's outputs against a reference, in execution order (``kernels``).

    ``first_divergent``: the first kernel that introduces an error beyond tolerance (its local error
    leaves it; ``KernelNumerics.introduces_error``). ``divergent`` and ``ok`` are about the propagated
    errors: whether the compiled program's buffers are within tolerance of the reference run."""

    reference: str
    device: str
    rtol: float | None  # None: the per-dtype defaults (TOLERANCES)
    atol: float | None
    kernels: dict[str, KernelNumerics]
    first_divergent: str | None
    first_divergent_nodes: dict[str, list[Any]] = field(default_factory=dict)  # post_grad, fx, user_lines
    post_grad_error: dict[str, dict[str, float]] = field(default_factory=dict)  # graph -> node -> max_rel
    fx_error: dict[str, dict[str, float]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    edited: list[str] = field(default_factory=list)  # kernels run with an edited source

    @property
    def divergent(self) -> list[str]:
        """Kernels whose propagated error leaves tolerance, in execution order."""
        return [key for key, row in self.kernels.items() if row.ok is False]

    @property
    def locally_divergent(self) -> list[str]:
        """Kernels whose own (local) error leaves tolerance, in execution order."""
        return [key for key, row in self.kernels.items() if row.local_ok is False]

    @property
    def ok(self) -> bool:
        return not self.divergent

    @property
    def verdict(self) -> str:
        """One sentence: within tolerance, the first divergent kernel and which error, or, when no kernel's
        own error leaves tolerance, where their accumulated error first does."""
        if self.ok:
            return f"every compared kernel is within tolerance of {self.reference}"
        if self.first_divergent is not None:
            kind = self.kernels[self.first_divergent].divergence
            return f"first divergent kernel: {self.first_divergent} ({kind.value if kind else 'propagated'} error)"
        return (f"no kernel's own error leaves tolerance of {self.reference}; their accumulated error does, first at "
                f"{self.divergent[0]} (propagated error)")

    def __repr__(self) -> str:
        compared = sum(1 for row in self.kernels.values() if row.ok is not None)
        return (f"NumericsReport(vs {self.reference} on {self.device}: {compared}/{len(self.kernels)} kernels "
                f"compared, {self.verdict})")
