"""Errors a capture raises, each saying what went wrong and keeping what was captured before."""

from __future__ import annotations

from typing import Any


class CompileError(RuntimeError):
    """torch.compile failed. ``stage`` names where; ``partial`` is the Compilation captured so far.

    The original exception is chained (``__cause__``); ``partial.graphs`` holds every graph that was
    fully compiled before the failure.
    """

    def __init__(self, stage: str, message: str, partial: Any) -> None:
        super().__init__(f"compilation failed during {stage}: {message}")
        self.stage = stage
        self.partial = partial


class TraceFormatError(ValueError):
    """A trace file that is not valid JSON of this schema, or of a newer schema version."""


class TraceLoadError(ValueError):
    """A TORCH_TRACE path that cannot be read at all (missing, no logs, not a log); what can be read
    of a damaged log is kept and its problems reported instead."""


class CountersUnavailable(RuntimeError):
    """Hardware counters cannot be taken here: no GPU compilation, no Nsight Compute, or no permission
    to read the GPU's performance counters. The message says which, and what to do."""
