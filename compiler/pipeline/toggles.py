"""Named Inductor toggles: what each maps to on the installed torch, and checks before compiling.

A toggle lists the config keys that have spelled it across releases; the first key the installed
Inductor has wins (feature probe, no version checks). Raw Inductor keys (``"triton.cudagraphs"``) are
accepted too, as an escape hatch. Everything is validated before anything is compiled.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from .._torch import inductor_config
from ..model.formatting import did_you_mean


class ToggleError(ValueError):
    """A config request that cannot be compiled as asked; nothing was compiled."""


class ToggleWarning(UserWarning):
    """A toggle was accepted but cannot do anything for this compile (said before compiling)."""


@dataclass(frozen=True)
class Toggle:
    name: str
    keys: tuple[str, ...]  # candidate Inductor keys, newest spelling first
    description: str
    value_type: type = bool
    # device -> Inductor codegen module that must read the key for the toggle to do anything there
    read_by: tuple[tuple[str, str], ...] = ()

    @property
    def key(self) -> str | None:
        """The key the installed Inductor uses, or None when it lacks this toggle."""
        return next((k for k in self.keys if inductor_config.has_key(k)), None)


TOGGLES: dict[str, Toggle] = {
    t.name: t
    for t in (
        Toggle("native_matmul", ("triton.native_matmul", "native_matmul"),
               "Generate matmuls as tl.dot inside fused Triton kernels instead of calling an extern mm."),
        Toggle("deterministic", ("deterministic",),
               "Bitwise-reproducible results: turns off autotuning and other sources of run-to-run variation."),
        Toggle("loop_ordering_after_fusion", ("loop_ordering_after_fusion",),
               "Reorder loops after fusion so nodes reading a tensor and its transpose can still fuse."),
        Toggle("combo_kernels", ("combo_kernels",),
               "Combine independent small kernels into one launch (horizontal fusion across groups)."),
        Toggle("use_block_ptr", ("triton.use_block_ptr",),
               "Use tl.make_block_ptr for loads and stores in Triton kernels."),
        Toggle("max_autotune", ("max_autotune",),
               "Benchmark Triton templates and extern choices for matmuls/convs and pick the fastest."),
        Toggle("coordinate_descent_tuning", ("coordinate_descent_tuning",),
               "Refine pointwise/reduction block sizes by coordinate descent after autotuning."),
        Toggle("emulate_precision_casts", ("emulate_precision_casts",),
               "Round intermediates to their low-precision dtype as eager does, for closer numerics.",
               read_by=(("cpu", "cpp"),)),
        Toggle("allow_buffer_reuse", ("allow_buffer_reuse",),
               "Let a new buffer take over the storage of one freed before it (the wrapper's '# reuse' lines)."),
        Toggle("inplace_buffers", ("inplace_buffers",),
               "Let a kernel write its output over an input it was the last reader of (in-place updates)."),
        Toggle("reorder_for_peak_memory", ("reorder_for_peak_memory",),
               "Reorder the scheduled kernels to lower the estimated peak memory."),
        Toggle("cpp_wrapper", ("cpp_wrapper",),
               "Generate the wrapper as C++ compiled with the kernels (less Python per call), as AOTInductor does."),
        Toggle("cudagraphs", ("triton.cudagraphs",),
               "Record each graph as CUDA graphs and replay them: one launch per graph instead of one per kernel "
               "(mode=\"reduce-overhead\"; GPU only)."),
    )
}

# Pairs Inductor refuses (or miscompiles) when both are on.
CONFLICTS: tuple[tuple[str, str, str], ...] = (
    ("native_matmul", "use_block_ptr", "native matmul does not support block pointers"),
)


def available() -> dict[str, Toggle]:
    """Registered toggles the installed torch has."""
    return {name: t for name, t in TOGGLES.items() if t.key is not None}


def valid_names() -> str:
    names = ", ".join(sorted(available()))
    return f"valid toggles: {names}; or any raw Inductor key such as 'triton.cudagraphs'"


def unknown_name(name: str) -> str:
    """Why ``name`` is refused: neither a toggle nor an Inductor key; the nearest toggle names, else the nearest
    Inductor keys (a raw key misspelled, ``triton.cudagraph``, is as likely as a toggle name). A name with a
    dot is a raw key first (no toggle name has one: ``triton.cudagraph`` is nearer ``triton.cudagraphs``
    than the toggle ``cudagraphs``)."""
    names, keys = available(), sorted(inductor_config.key_names())
    first, then = (keys, names) if "." in name else (names, keys)
    return f"unknown toggle {name!r}{did_you_mean(name, first) or did_you_mean(name, then)}"


def _check_type(name: str, value: Any, expected: type) -> None:
    ok = isinstance(value, expected) and not (expected is int and isinstance(value, bool))
    if expected is float and isinstance(value, int) and not isinstance(value, bool):
        ok = True
    if not ok:
        raise ToggleError(f"{name!r} takes a {expected.__name__}, got {value!r} ({type(value).__name__})")


def resolve(config: Mapping[str, Any] | None) -> dict[str, Any]:
    """Toggle names / raw keys -> Inductor key -> value, or ToggleError naming what is wrong."""
    if config is None:
        return {}
    if not isinstance(config, Mapping):
        raise ToggleError(f"config must be a dict of toggle names to values, got {type(config).__name__}")
    settings: dict[str, Any] = {}
    for name, value in config.items():
        if not isinstance(name, str):
            raise ToggleError(f"config keys must be strings, got {name!r}")
        toggle = TOGGLES.get(name)
        if toggle is not None:
            key = toggle.key
            if key is None:
                raise ToggleError(
                    f"toggle {name!r} is not supported by the installed torch (none of {list(toggle.keys)} exist); "
                    + valid_names()
                )
            _check_type(name, value, toggle.value_type)
        elif inductor_config.has_key(name):
            key = name
            current = inductor_config.default(key)
            if isinstance(current, (bool, int, float, str)):
                _check_type(name, value, type(current))
        else:
            raise ToggleError(f"{unknown_name(name)}; " + valid_names())
        settings[key] = value
    _check_conflicts(settings)
    return settings


def mode_settings(mode: str | None) -> dict[str, Any]:
    """The Inductor settings of torch.compile's ``mode`` ("reduce-overhead": ``triton.cudagraphs``), or
    ToggleError naming the modes there are; {} for None."""
    if mode is None:
        return {}
    if not isinstance(mode, str):
        raise ToggleError(f"mode must be a string such as 'reduce-overhead', got {mode!r} ({type(mode).__name__})")
    try:
        return inductor_config.mode_options(mode)
    except KeyError:
        modes = list(inductor_config.mode_options())
        raise ToggleError(f"unknown mode {mode!r}{did_you_mean(mode, modes)}; torch.compile's modes here: "
                          f"{', '.join(modes)}") from None


def _check_conflicts(settings: Mapping[str, Any]) -> None:
    for first, second, why in CONFLICTS:
        key1, key2 = TOGGLES[first].key, TOGGLES[second].key
        if key1 and key2 and settings.get(key1) and settings.get(key2):
            raise ToggleError(f"{first!r} and {second!r} cannot both be on: {why}")


def check_capturable(settings: Mapping[str, Any]) -> None:
    """A capture reads the Python wrapper Inductor writes; with ``fx_wrapper`` on Inductor writes none."""
    key = "fx_wrapper"
    if inductor_config.has_key(key) and settings.get(key, inductor_config.get(key)):
        raise ToggleError("explorer.compile captures the Python wrapper Inductor writes, and with 'fx_wrapper' on it "
                          "writes none: leave fx_wrapper off (the same wrapper as an FX graph is captured anyway, "
                          "as g.wrapper.fx); to run the FX wrapper through your own code, use "
                          "explorer.fx_wrapper_backend with torch.compile")


def without_effect(settings: Mapping[str, Any], device: str) -> list[str]:
    """Why a toggle turned on for ``device`` cannot change anything there on the installed torch."""
    notes = []
    for name, toggle in available().items():
        backend = dict(toggle.read_by).get(device.split(":")[0])
        if backend and settings.get(toggle.key) and not inductor_config.codegen_reads(backend, toggle.key):
            notes.append(f"{name!r} may do nothing on {device}: the installed torch's {backend!r} code generator "
                         "never reads it (later torch releases do), so its kernels can compute as with it off")
    return notes


def toggle_names_for(settings: Mapping[str, Any]) -> dict[str, Any]:
    """Inductor key -> value back to toggle names where one exists (raw keys stay as they are)."""
    by_key = {t.key: name for name, t in available().items()}
    return {by_key.get(key, key): value for key, value in settings.items()}
