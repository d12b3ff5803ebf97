"""A watched run under CUDA graphs (``mode="reduce-overhead"``): what the CUDA graph tree did at each step.

``w.cudagraph_events`` lists, per step and compiled frame, each warm-up, recording, re-recording (with the
invariant that failed), skip (with torch's reason) and too-many-shapes warning, and the replays counted;
``w.frames[i].cudagraph_replays`` says whether a frame replays from a CUDA graph. Built by
compiler/pipeline/watch_cudagraphs.py from the tree's events (compiler/_torch/cudagraph_tree.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from .cudagraphs import EventKind


@dataclass(frozen=True)
class CudaGraphStepEvent:
    """What the tree did with one compiled graph's function in one step (replays merged into a count). Frozen:
    a report holds the events as they were when it was made."""

    step: int
    compile_id: str  # the Dynamo compile whose graph it is ("0/1"); "" when the tree did not say
    kind: EventKind
    function: str = ""  # what the tree records: "call" (a graph whole) or "partition_N"
    mode: str = ""  # "inference", "forward", "backward"
    count: int = 1
    reason: str = ""  # a re-record's failed invariant, a skip's or warning's message

    @property
    def frame_id(self) -> str:
        return self.compile_id.split("/")[0]

    def __repr__(self) -> str:
        times = f" x{self.count}" if self.count != 1 else ""
        why = f": {self.reason[:70]}" if self.reason else ""
        return f"CudaGraphStepEvent(step {self.step} {self.compile_id} {self.function} {self.kind.value}{times}{why})"
