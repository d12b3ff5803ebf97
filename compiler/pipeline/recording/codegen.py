"""Codegen in a live capture: the wrapper Inductor wrote (Python, or the C++ inside it), its planned lines
(the memory plan, Inductor's estimate, what its FX form is made from), the provenance tables, and which
scheduler nodes each kernel implements and which source lines each node generated, kept on the inner
compile running now."""

from __future__ import annotations

from typing import Any

from ..._torch import memory_estimate, wrapper_fx, wrapper_ir
from ..._torch.output_code import provenance_tables
from .. import cpp_wrapper_code
from .state import CaptureState


class CodegenRecorder:
    """Hears the codegen hooks. An AOTInductor capture replaces it (compiler/pipeline/export_capture.py):
    there the C++ pass's output is the wrapper."""

    def __init__(self, state: CaptureState) -> None:
        self.state = state
        self.combo: list[list[str]] | None = None  # the combo kernel codegen is writing now, by its parts' nodes

    def on_output_code(self, code: str) -> None:
        current = self.state.current
        if current is None:
            return
        self.state.enter("kernel compile")
        cpp = cpp_wrapper_code.cpp_source(code)  # cpp_wrapper: the C++ inside the Python module is the wrapper
        current.wrapper = code if cpp is None else cpp
        if cpp is not None:
            current.wrapper_language = "cpp"
            current.python_pass = cpp_wrapper_code.python_kernels_source(code)
        current.provenance, current.kernel_traces = provenance_tables()

    def on_wrapper_planned(self, wrapper: Any) -> None:
        """The wrapper's planned lines: its memory plan, Inductor's estimate, and what its FX form is made
        from when first asked for."""
        current = self.state.current
        if current is None:
            return
        current.memory = {**wrapper_ir.events(wrapper), "estimate": memory_estimate.estimate()}
        current.wrapper_fx = wrapper_fx.plan(wrapper)

    def on_node_lines(self, node_name: str, lines: list[str]) -> None:
        if self.state.current is not None:
            self.state.current.node_lines.setdefault(node_name, set()).update(lines)

    def on_kernel_nodes(self, key: str, node_names: list[str]) -> None:
        current = self.state.current
        if current is not None:
            current.kernel_nodes[key] = node_names
            if self.combo is not None:
                current.combos[key] = self.combo

    def on_combo_kernel(self, groups: list[list[str]] | None) -> None:
        self.combo = groups  # the kernels codegen reports until None are this combo kernel

    def on_unhandled_extern_call(self, node_name: str, call_names: list[str]) -> None:
        if self.state.current is not None:
            self.state.current.unhandled_externs.append((node_name, call_names))
