"""torch's own provenance records of a compile, read the way tlparse reads them: from the structured trace.

With ``trace.provenance_tracking_level = 1`` every inner compile logs two artifacts to the
``torch.__trace`` logger (what ``TORCH_TRACE`` writes): ``inductor_provenance_tracking_node_mappings``
(``preToPost``/``postToPre``: post-grad node <-> Dynamo FX nodes; ``cppCodeToPost``: kernel
``name:handle`` -> post-grad nodes) and ``inductor_provenance_tracking_kernel_stack_traces`` (kernel
``name:handle`` -> the stack traces Inductor collected for it). A handler of our own on that logger
receives them as a TORCH_TRACE log would hold them; nothing here reads the explorer's capture.
"""

from __future__ import annotations

import contextlib
import json
import logging
from dataclasses import dataclass, field
from typing import Any, Iterator

MAPPINGS = "inductor_provenance_tracking_node_mappings"
STACK_TRACES = "inductor_provenance_tracking_kernel_stack_traces"


@dataclass
class GraphRecords:
    """torch's records of one inner compile (one graph: inference, forward or backward)."""

    kernel_nodes: dict[str, list[str]] = field(default_factory=dict)  # "name:handle" -> post-grad nodes
    post_to_pre: dict[str, list[str]] = field(default_factory=dict)  # post-grad node -> Dynamo FX nodes
    stack_traces: dict[str, list[str]] = field(default_factory=dict)  # "name:handle" -> stack trace texts

    def handles_of(self, kernel_name: str) -> list[str]:
        """Every ``name:handle`` key torch logged for a kernel name (a kernel called for several groups)."""
        return [key for key in self.kernel_nodes.keys() | self.stack_traces.keys()
                if key.rpartition(":")[0] == kernel_name]


class _Reader(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.graphs: list[GraphRecords] = []

    def emit(self, record: logging.LogRecord) -> None:
        metadata = getattr(record, "metadata", None)
        if not isinstance(metadata, dict) or "artifact" not in metadata:
            return
        name = metadata["artifact"].get("name")
        if name not in (MAPPINGS, STACK_TRACES):
            return
        payload = json.loads(getattr(record, "payload", None) or "{}") or {}
        if name == MAPPINGS:  # logged first, once per inner compile
            self.graphs.append(GraphRecords(kernel_nodes=dict(payload.get("cppCodeToPost") or {}),
                                            post_to_pre=dict(payload.get("postToPre") or {})))
        elif self.graphs:
            self.graphs[-1].stack_traces = {k: list(v) for k, v in payload.items()}


@contextlib.contextmanager
def recorded() -> Iterator[list[GraphRecords]]:
    """torch's records of every inner compile inside the block, in compile order."""
    logger = logging.getLogger("torch.__trace")
    reader = _Reader()
    level, propagate = logger.level, logger.propagate
    logger.addHandler(reader)
    logger.setLevel(logging.DEBUG)
    try:
        yield reader.graphs
    finally:
        logger.removeHandler(reader)
        logger.setLevel(level)
        logger.propagate = propagate


def non_lazy_backward() -> Any:
    """A backward compiled with its forward, so that torch logs its kernel map too (a lazily compiled
    backward logs an empty one)."""
    from torch._functorch import config as functorch_config

    if not hasattr(functorch_config, "force_non_lazy_backward_lowering"):
        return contextlib.nullcontext()
    return functorch_config.patch(force_non_lazy_backward_lowering=True)
