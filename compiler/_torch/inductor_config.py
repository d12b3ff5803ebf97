"""Reading and patching Inductor's config module (``torch._inductor.config``).

Keys are dotted names as Inductor spells them (``triton.native_matmul``). Patching goes through the
config module's own ``patch`` context manager, which restores every value on exit.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
from pathlib import Path
from typing import Any, Iterator

from torch._inductor import config as _config

from ..model.formatting import did_you_mean


def has_key(key: str) -> bool:
    return key in key_names()


@functools.cache
def key_names() -> frozenset[str]:
    """Every key Inductor declares. The set is fixed once the config module is imported, so it is read
    once per process: a config copy deep-copies every value (milliseconds each, and a toggle switch
    asks about dozens of keys)."""
    return frozenset(_config.get_config_copy())


def _all_keys() -> dict[str, Any]:
    return _config.get_config_copy()


def get(key: str) -> Any:
    """The current value of ``key``, read through the config module (sub-configs are attributes)."""
    if key not in key_names():
        raise KeyError(f"Inductor has no config key {key!r}{did_you_mean(key, sorted(key_names()))}")
    return functools.reduce(getattr, key.split("."), _config)


def mode_options(mode: str | None = None) -> dict[str, Any]:
    """The Inductor settings torch.compile's ``mode`` turns on (``torch._inductor.list_mode_options``); every
    mode's with ``mode=None``. Raises KeyError for a mode this torch does not know."""
    from torch._inductor import list_mode_options

    modes = list_mode_options()
    if mode is None:
        return dict(modes)
    if mode not in modes:
        raise KeyError(mode)
    return dict(modes[mode])


def default(key: str) -> Any:
    """The value Inductor ships with (before env vars and user overrides)."""
    entries = getattr(_config, "_config", None)
    if entries is not None and key in entries and hasattr(entries[key], "default"):
        return entries[key].default
    return get(key)


@functools.cache
def codegen_reads(backend: str, key: str) -> bool:
    """Whether Inductor's ``codegen/<backend>.py`` mentions config ``key`` at all.

    A key the backend's code generator never reads cannot change what it generates: the C++ backend
    ignored ``emulate_precision_casts`` before it learnt to round intermediates like eager does.
    """
    spec = importlib.util.find_spec(f"torch._inductor.codegen.{backend}")
    if spec is None or not spec.origin:
        return False
    leaf = key.rpartition(".")[2]
    return leaf in Path(spec.origin).read_text(encoding="utf-8", errors="replace")


def snapshot() -> dict[str, Any]:
    """Every key's current value: compared before and after a capture to prove nothing leaked."""
    return _all_keys()


def overrides(ignore_prefixes: tuple[str, ...] = ()) -> dict[str, Any]:
    """Keys whose current value differs from the shipped default (only JSON-friendly values)."""
    out: dict[str, Any] = {}
    for key, value in _all_keys().items():
        if key.startswith(ignore_prefixes) or callable(value):
            continue
        if not isinstance(value, (bool, int, float, str, type(None))):
            continue
        try:
            if value != default(key):
                out[key] = value
        except Exception:  # exotic defaults that refuse comparison are not interesting here
            continue
    return out


@contextlib.contextmanager
def patched(values: dict[str, Any]) -> Iterator[None]:
    with _config.patch(values):
        yield
