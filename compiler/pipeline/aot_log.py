"""The records of an AOTInductor compile in a TORCH_TRACE log, which carry no compile id.

``aoti_compile_and_package`` runs Inductor outside Dynamo: its records (the pre-grad and post-grad
graphs, provenance, and the C++ wrapper and kernel file as ``graph_dump`` records named
``inductor_aot_wrapper_code`` / ``inductor_aot_kernel_code``) have no ``frame_id``. The reader gives
them a compile id of their own, ``aot/0``, ``aot/1``, ...: a compile's graphs come first and its kernel
file near the end (its provenance after it), so a graph seen after a kernel file starts the next id.
"""

from __future__ import annotations

from ..model.trace_log import Record

PREFIX = "aot/"
WRAPPER, KERNELS = "inductor_aot_wrapper_code", "inductor_aot_kernel_code"
FX_GRAPH = "before_pre_grad_graph"  # the exported program's module as Inductor received it
_STARTS = frozenset({FX_GRAPH, "inductor_post_grad_graph"})
PARTS = frozenset({FX_GRAPH, "inductor_post_grad_graph", "aot_inference_graph",
                    "inductor_provenance_tracking_node_mappings", "inductor_provenance_tracking_kernel_stack_traces"})


def part(record: Record) -> str | None:
    """What part of an AOT compile ``record`` is (its name), or None when it is not one."""
    if record.compile_id is not None:
        return None
    if record.kind == "graph_dump":
        return code_of(record)
    return record.name if record.name in PARTS else None


def code_of(record: Record) -> str | None:
    """``WRAPPER`` or ``KERNELS`` for the records holding an AOT compile's C++ sources, else None."""
    name = record.data.get("name") if record.kind == "graph_dump" and isinstance(record.data, dict) else None
    return name if name in (WRAPPER, KERNELS) else None


def is_aot(compile_id: str) -> bool:
    return compile_id.startswith(PREFIX)


class Ids:
    """Assigns AOT compile ids to records in log order, while a log is indexed."""

    def __init__(self) -> None:
        self.current = 0
        self.finished = False  # the current compile's kernel file was seen

    def assign(self, record: Record) -> None:
        """Give ``record`` its AOT compile id when it is part of an AOT compile."""
        name = part(record)
        if name is None:
            return
        if self.finished and name in _STARTS:
            self.current, self.finished = self.current + 1, False
        record.compile_id = f"{PREFIX}{self.current}"
        self.finished = self.finished or name == KERNELS


def belongs(record: Record, compile_id: str) -> bool:
    """``record``, read back from ``compile_id``'s own byte ranges, is one of its records."""
    if record.compile_id is None and is_aot(compile_id) and part(record) is not None:
        record.compile_id = compile_id
    return record.compile_id == compile_id
