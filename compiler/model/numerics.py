"""A NumericsReport: every kernel's output buffers against a reference run, and the first kernel that
diverges (checked by compiler/runs/numerics.py, saved by compiler/io/reports.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .slots import Rendered


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

    def _worst(self, attr: str) -> float | None:
        values = [getattr(b, attr) for b in self.compared if getattr(b, attr) is not None]
        return max(values) if values else None

    @property
    def max_abs(self) -> float | None:
        return self._worst("max_abs")

    @property
    def max_rel(self) -> float | None:
        return self._worst("max_rel")

    @property
    def mismatched(self) -> float | None:
        return self._worst("mismatched")

    @property
    def compiled_vs_float64(self) -> float | None:
        return self._worst("compiled_vs_float64")

    @property
    def eager_vs_float64(self) -> float | None:
        return self._worst("eager_vs_float64")

    @property
    def notes(self) -> list[str]:
        return sorted({f"{b.buffer}: {b.note}" for b in self.buffers if b.note})

    def __repr__(self) -> str:
        state = {True: "ok", False: "DIVERGES", None: "not compared"}[self.ok]
        rel = f", max rel {self.max_rel:.3g}" if self.max_rel is not None else ""
        return f"KernelNumerics({self.key}: {state}{rel}, {len(self.compared)}/{len(self.buffers)} buffers)"


@dataclass(repr=False)
class NumericsReport(Rendered):
    """Every kernel's outputs against a reference, in execution order (``kernels``)."""

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
        return [key for key, row in self.kernels.items() if row.ok is False]

    @property
    def ok(self) -> bool:
        return not self.divergent

    def __repr__(self) -> str:
        compared = sum(1 for row in self.kernels.values() if row.ok is not None)
        verdict = "all within tolerance" if self.ok else f"first divergent: {self.first_divergent}"
        return (f"NumericsReport(vs {self.reference} on {self.device}: {compared}/{len(self.kernels)} kernels "
                f"compared, {verdict})")
