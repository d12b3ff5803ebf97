"""All capture hooks entered together, each restored on exit (also when compilation raises)."""

from __future__ import annotations

import contextlib
import re
import types
import warnings
from typing import Any, Callable, Iterator

from . import (autotune, benchmark_harness, combo_kernels, compile_events, dynamo_codes, fusion_log, inductor_config, kernel_lines,
               kernel_nodes, lowering_nodes, module_frames, output_code, pad_mm_decisions, scheduler_passes, wrapper_ir)

# Inductor settings every capture needs: caches off (a cache hit would skip codegen and hide every
# stage) and kernel -> node provenance on.
CAPTURE_SETTINGS: dict[str, Any] = {
    "force_disable_caches": True,
    output_code.PROVENANCE_LEVEL_KEY: 1,
}


# What torch warns about the settings above: the capture's own doing, not the user's to act on.
_OWN_WARNINGS = ("dynamo_pgo force disabled by torch.compiler.config.force_disable_caches",)


@contextlib.contextmanager
def own_warnings_silenced() -> Iterator[None]:
    """Torch's warnings about what the capture itself set (the cache bypass) stay out of the user's output;
    every other warning, the user's code's included, passes as before."""
    with warnings.catch_warnings():
        for message in _OWN_WARNINGS:
            warnings.filterwarnings("ignore", message=re.escape(message))
        yield


# A C++ wrapper calls its kernels inside a compiled library, where c.profile() cannot mark them; with this
# setting every generated kernel and shim call opens a profiler range named after it.
KERNEL_RANGES: dict[str, Any] = {"cpp.enable_kernel_profile": True}


def wrapper_settings(settings: dict[str, Any]) -> dict[str, Any]:
    """What a capture adds when the compile generates a C++ wrapper (``cpp_wrapper``)."""
    return dict(KERNEL_RANGES) if settings.get("cpp_wrapper") else {}


def device_settings(device: str) -> dict[str, Any]:
    """GPU kernels get Inductor's benchmark harness (get_args/call), which k.bench() and k.edit() run."""
    return {"benchmark_kernel": True} if device.startswith("cuda") else {}


@contextlib.contextmanager
def capture_hooks(
    *,
    settings: dict[str, Any],
    on_pre_fusion: Callable[[list[Any]], None],
    on_post_fusion: Callable[[list[Any]], None],
    on_output_code: Callable[[str], None],
    on_node_lines: Callable[[str, list[str]], None],
    on_kernel_nodes: Callable[[str, list[str]], None],
    on_fusion_refused: Callable[[str, str, str], None],
    on_autotune: autotune.Record,
    on_converted_code: Callable[[types.CodeType, bool], None],
    on_combo_kernel: Callable[[combo_kernels.Groups | None], None],
    on_pad_mm: Callable[[dict[str, Any]], None],
    on_wrapper_planned: Callable[[Any], None] = lambda wrapper: None,
    on_operation_lowered: lowering_nodes.Lowered = lambda module, name, node: None,
) -> Iterator[None]:
    values = {**CAPTURE_SETTINGS, **settings}
    if scheduler_passes.available():
        values.update(scheduler_passes.config_values(on_pre_fusion, on_post_fusion))
    with contextlib.ExitStack() as stack:
        stack.enter_context(own_warnings_silenced())
        stack.enter_context(inductor_config.patched(values))
        stack.enter_context(benchmark_harness.side_effects_removed(bool(values.get("benchmark_kernel"))))
        stack.enter_context(output_code.on_output_code(on_output_code))
        stack.enter_context(kernel_lines.on_node_lines(on_node_lines))
        stack.enter_context(kernel_nodes.on_kernel_nodes(on_kernel_nodes))
        stack.enter_context(lowering_nodes.on_operation_lowered(on_operation_lowered))
        stack.enter_context(fusion_log.on_fusion_refused(on_fusion_refused))
        stack.enter_context(autotune.on_autotune(on_autotune))
        stack.enter_context(compile_events.deferred_autotuning_named())
        stack.enter_context(wrapper_ir.on_planned_wrapper(on_wrapper_planned))
        stack.enter_context(dynamo_codes.converted_frames(on_converted_code))
        stack.enter_context(module_frames.keep_nn_module_frames())
        stack.enter_context(combo_kernels.on_combo_kernel(on_combo_kernel))
        stack.enter_context(pad_mm_decisions.on_pad_mm(on_pad_mm))
        yield
