"""All capture hooks entered together, each restored on exit (also when compilation raises)."""

from __future__ import annotations

import contextlib
import inspect
import re
import types
import warnings
from typing import Any, Callable, Iterator, Protocol

from . import (autotune, benchmark_harness, combo_kernels, compile_events, compile_warnings, cudagraph_partitions,
               dynamo_codes, extern_calls, fusion_log, fx_graph_cache, guard, inductor_config, kernel_lines,
               kernel_nodes, lowering_nodes, module_frames, output_code, pad_mm_decisions, pattern_rewrites,
               scheduler_passes, wrapper_ir)

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


class CaptureListener(Protocol):
    """What a capture is told while torch compiles: one method per event the hooks below fire.

    ``capture_hooks`` takes one object with every method (the capture's recorder); each hook adapter of
    this folder calls its method from inside Inductor, and an adapter never lets what the method raises
    change what Inductor compiles: it reports it as ``on_hook_failed`` instead (``guard.py``)."""

    def on_pre_fusion(self, nodes: list[Any]) -> None:
        """The scheduler's nodes before fusion (the loop IR), for the graph or subgraph being scheduled."""

    def on_post_fusion(self, nodes: list[Any]) -> None:
        """The scheduler's nodes after fusion: each one a kernel-to-be or a node left alone."""

    def on_output_code(self, code: str) -> None:
        """The generated wrapper module's source, once codegen wrote it."""

    def on_node_lines(self, node_name: str, lines: list[str]) -> None:
        """Kernel source lines that scheduler node ``node_name`` generated."""

    def on_kernel_nodes(self, key: str, node_names: list[str]) -> None:
        """The scheduler nodes a generated kernel (or extern call) ``key`` implements."""

    def on_fusion_refused(self, name1: str, name2: str, reason: str) -> None:
        """Inductor's own reason for not fusing two nodes."""

    def on_autotune(self, kernel: str, choice: str, time_ms: float, chosen: bool, source: str) -> None:
        """One autotuning choice or Triton config timed (``source``: select_algorithm or triton_heuristics)."""

    def on_converted_code(self, code: types.CodeType, fresh: bool) -> None:
        """A code object Dynamo converted; ``fresh`` when it had no cache entry before."""

    def on_combo_kernel(self, groups: combo_kernels.Groups | None) -> None:
        """The kernels codegen reports from now on are one combo kernel of ``groups`` (None: it ended)."""

    def on_pad_mm(self, decision: dict[str, Any]) -> None:
        """One shape-padding decision about a matmul, with its reason."""

    def on_cudagraph_partitions(self, partitions: list[cudagraph_partitions.PartitionRecord]) -> None:
        """The partitions the scheduler made of the graph (or subgraph) being scheduled: their nodes, which are
        cudagraphable, and why the others are not (``triton.cudagraphs`` with ``graph_partition``)."""

    def on_wrapper_planned(self, wrapper: Any) -> None:
        """The wrapper codegen of a top-level graph once its lines and buffers are planned."""

    def on_operation_lowered(self, module: Any, operation: str, node: Any) -> None:
        """Lowering FX node ``node`` of ``module`` created Inductor operation ``operation``."""

    def on_rewrite(self, made: list[pattern_rewrites.Source], erased: list[pattern_rewrites.Source]) -> None:
        """A pattern rewrite made nodes ``made`` in place of erased ones (each with its ``from_node`` ancestry)."""

    def on_unhandled_extern_call(self, node_name: str, call_names: list[str]) -> None:
        """Codegen wrote the call of extern scheduler node ``node_name`` (spelled with one of ``call_names``)
        without a provenance handle."""

    def on_torch_warning(self, kind: str, where: str, message: str) -> None:
        """Torch warned (``kind``: "warning", or "error" for a logged error) from logger or file ``where``;
        nothing was printed (``compile_warnings.py``)."""

    def on_hook_failed(self, adapter: str, error_type: str, message: str) -> None:
        """An adapter's own code raised ``error_type: message``, swallowed so the compile went on (``guard.py``)."""


# The events a listener receives: the protocol's methods (tests check the hooks fire exactly these).
EVENTS = tuple(name for name in vars(CaptureListener) if name.startswith("on_"))

Hook = Callable[..., None]


def _as_is(hook: Hook) -> Hook:
    return hook


def _check_listener(listener: Any) -> None:
    """Refuse, before any hook is installed, a listener that lacks an event's method (read statically:
    checking must not call into the listener)."""
    missing = [name for name in EVENTS if not callable(inspect.getattr_static(listener, name, None))]
    if missing:
        raise TypeError(f"{type(listener).__name__} is not a CaptureListener: it has no {', '.join(missing)} "
                        f"(every capture hook event needs a method: {', '.join(EVENTS)})")


@contextlib.contextmanager
def capture_hooks(listener: CaptureListener, *, settings: dict[str, Any], wrap: Callable[[Hook], Hook] = _as_is,
                  store: fx_graph_cache.Store | None = None) -> Iterator[None]:
    """Every hook installed for one block, each event calling ``wrap(listener.<event>)`` (the capture
    wraps them to time its own work), and every one restored on exit. With a ``store``, a warm capture:
    the FX graph cache on, its lookups decided by the store (``fx_graph_cache.py``); ``settings`` still
    win, so a setting that turns the caches off makes the capture cold."""
    _check_listener(listener)
    values = {**CAPTURE_SETTINGS, **(fx_graph_cache.settings(settings) if store is not None else {}), **settings}
    if scheduler_passes.available():
        values.update(scheduler_passes.config_values(wrap(listener.on_pre_fusion), wrap(listener.on_post_fusion)))
    with contextlib.ExitStack() as stack:
        stack.enter_context(guard.reporting_to(wrap(listener.on_hook_failed)))
        stack.enter_context(compile_warnings.kept(wrap(listener.on_torch_warning)))
        stack.enter_context(own_warnings_silenced())
        stack.enter_context(inductor_config.patched(values))
        if store is not None:
            stack.enter_context(fx_graph_cache.other_caches_off())
            stack.enter_context(fx_graph_cache.lookups_decided(store))
        stack.enter_context(benchmark_harness.side_effects_removed(bool(values.get("benchmark_kernel"))))
        stack.enter_context(output_code.on_output_code(wrap(listener.on_output_code)))
        stack.enter_context(kernel_lines.on_node_lines(wrap(listener.on_node_lines)))
        stack.enter_context(kernel_nodes.on_kernel_nodes(wrap(listener.on_kernel_nodes)))
        stack.enter_context(lowering_nodes.on_operation_lowered(wrap(listener.on_operation_lowered)))
        stack.enter_context(pattern_rewrites.on_rewrite(wrap(listener.on_rewrite)))
        stack.enter_context(extern_calls.on_unhandled_extern_call(wrap(listener.on_unhandled_extern_call)))
        stack.enter_context(fusion_log.on_fusion_refused(wrap(listener.on_fusion_refused)))
        stack.enter_context(autotune.on_autotune(wrap(listener.on_autotune)))
        stack.enter_context(compile_events.deferred_autotuning_named())
        stack.enter_context(wrapper_ir.on_planned_wrapper(wrap(listener.on_wrapper_planned)))
        stack.enter_context(dynamo_codes.converted_frames(wrap(listener.on_converted_code)))
        stack.enter_context(module_frames.keep_nn_module_frames())
        stack.enter_context(combo_kernels.on_combo_kernel(wrap(listener.on_combo_kernel)))
        stack.enter_context(pad_mm_decisions.on_pad_mm(wrap(listener.on_pad_mm)))
        stack.enter_context(cudagraph_partitions.on_partitions(wrap(listener.on_cudagraph_partitions)))
        yield
