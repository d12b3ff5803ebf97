"""Errors a capture raises, each saying what went wrong and keeping what was captured before."""

from __future__ import annotations

from typing import Any

from .contract import ContractError


class CompileError(RuntimeError):
    """torch.compile failed. ``stage`` names where; ``partial`` is the Compilation captured so far.

    The original exception is chained (``__cause__``); ``partial.graphs`` holds every graph that was
    fully compiled before the failure.
    """

    def __init__(self, stage: str, message: str, partial: Any) -> None:
        super().__init__(f"compilation failed during {stage}: {message}")
        self.stage = stage
        self.partial = partial


class ExportError(CompileError):
    """torch.export could not export the model: torch's reason with the user's line, then ``hint``, what to
    try (non-strict export, ``torch.cond`` for a data-dependent branch, dynamic shapes). Nothing was
    compiled; the original exception is chained."""

    def __init__(self, message: str, hint: str) -> None:
        super().__init__("export", f"{message}\n\nWhat to try: {hint}" if hint else message, None)
        self.hint = hint


class TraceFormatError(ContractError):
    """A trace file that is not valid JSON of this schema, or of a newer schema version. A ContractError,
    the error of the trace contract's own checks (compiler/model/contract.py), which the widgets share."""


class TraceLoadError(ValueError):
    """A TORCH_TRACE path that cannot be read at all (missing, no logs, not a log); what can be read
    of a damaged log is kept and its problems reported instead."""


class CountersUnavailable(RuntimeError):
    """Hardware counters cannot be taken here: no GPU compilation, no Nsight Compute, or no permission
    to read the GPU's performance counters. The message says which, and what to do."""
