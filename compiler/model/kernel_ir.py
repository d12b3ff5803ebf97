"""k.ir: what Triton made of a kernel below its Python source (TTIR, TTGIR, LLVM IR, PTX, SASS), with
each IR line mapped to the kernel source line it came from (built by compiler/pipeline/ir_line_maps.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar

from . import slots
from .lazy import LazyFields
from .slots import Rendered

STAGES = ("ttir", "ttgir", "llir", "ptx", "sass")


@dataclass(repr=False)
class KernelIR(LazyFields, Rendered):
    stages: dict[str, str] = field(default_factory=dict)  # stage name -> text, in lowering order
    line_map: dict[str, list[int | None]] = field(default_factory=dict)  # stage -> per IR line: kernel line
    meta: dict[str, Any] = field(default_factory=dict)  # registers, spills, shared_memory, num_warps, ...
    notes: list[str] = field(default_factory=list)
    truncated: dict[str, int] = field(default_factory=dict)  # stage -> characters before the cap
    source_file: str | None = None  # the file Triton compiled the kernel from
    # Set by a live capture (a RawKernelIR, or a loader of one): builds the fields above (SASS
    # disassembly, line maps) when one is first read, so a capture pays only for copying Triton's texts;
    # saving a trace builds every pending one.
    pending: Callable[[], KernelIR] | None = field(default=None, repr=False, compare=False)
    _lazy_fields: ClassVar[frozenset[str]] = frozenset({"stages", "line_map", "meta", "notes", "truncated",
                                                        "source_file"})

    def _fill(self, built: KernelIR) -> None:
        for name in self._lazy_fields:
            object.__setattr__(self, name, getattr(built, name))

    def lines(self, stage: str) -> list[str]:
        return self.stages.get(stage, "").splitlines()

    def source_line(self, stage: str, ir_line: int) -> int | None:
        """The kernel source line (1-based) that IR line ``ir_line`` (1-based) of ``stage`` comes from."""
        mapped = self.line_map.get(stage) or []
        return mapped[ir_line - 1] if 0 < ir_line <= len(mapped) else None

    def ir_lines(self, kernel_line: int) -> dict[str, list[int]]:
        """Stage -> the IR lines (1-based) generated from kernel source line ``kernel_line``."""
        return {stage: [i for i, line in enumerate(mapped, start=1) if line == kernel_line]
                for stage, mapped in self.line_map.items()}

    def __repr__(self) -> str:
        sizes = ", ".join(f"{s} {len(self.lines(s))} lines" for s in self.stages)
        meta = self.meta
        resources = ", ".join(f"{k} {meta[k]}" for k in ("registers", "spills", "shared_memory", "num_warps",
                                                         "num_stages") if meta.get(k) is not None)
        return f"KernelIR({sizes or 'no stages'}; {resources or 'no resource info'})"


@dataclass(repr=False)
class RawKernelIR:
    """What a capture copies from a kernel's chosen binary, kept until ``k.ir`` is first read: Triton's
    texts, the cubin, its metadata (``compiler/_torch/triton_ir.capture``), and the arch of the GPU that
    ran it. Calling it builds the KernelIR (nvdisasm for SASS, about 0.5 s a kernel, then the line
    maps). A sweep worker sends kernels in this form, so that work happens where, and when, someone
    opens the kernel (SCHEMA.md, "Raw kernel IR")."""

    raw: dict[str, Any]
    source: str  # the kernel's source, which the line maps point into
    name: str
    arch: int | None  # the capturing GPU's compute capability (a note says when the binary was built for another)

    def __call__(self) -> KernelIR:
        return slots.build_kernel_ir(self)
