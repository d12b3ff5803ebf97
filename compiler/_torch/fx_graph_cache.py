"""Inductor's caches as a warm capture uses them, the FX graph cache's lookups decided by the explorer's
own store.

A cold capture bypasses every cache (``force_disable_caches``), because a hit skips codegen and so every
hook that sees a stage. A warm capture keeps the FX graph cache on, and autotuning's local cache as the
user has it unless the capture asks for autotuning (``settings``). AOTAutograd's cache stays off
(``other_caches_off``) except around the capture's own compiles (``aot_cache_on``): a hit there serves a
graph (a training graph's forward and backward) without tracing it, its FX graph cache lookups still
decided by the store, and the post-grad graphs are traced again only when read
(``post_grad_replay.retraced``). Dynamo's profile-guided dynamism stays off: it could make a static
capture dynamic.
Each lookup is answered by Inductor only when the explorer stored what a capture built for that key
(``Store.has_stored``); otherwise the lookup is a miss, so Inductor compiles with every hook firing and
saves its entry. The key and the lookup's outcome are told to ``Store.on_lookup`` either way.

A compile that is not captured but must compile every graph anew (a bisect trial) turns the graph caches off
(``graphs_anew`` and ``other_caches_off``) and keeps Inductor's build cache of C++ kernels, keyed by their source.
"""

from __future__ import annotations

import contextlib
import time
from pathlib import Path
from typing import Any, Iterator, Protocol

import torch
from torch._inductor import config as _config

from . import method_patch

try:
    from torch._inductor.codecache import FxGraphCache
except ImportError:  # pragma: no cover - every supported torch has it; a later one may move it
    FxGraphCache = None  # type: ignore[assignment,misc]

# Inductor settings of a warm capture's compile: the FX graph cache on (locally), the remote caches off.
_INDUCTOR_SETTINGS = {"force_disable_caches": False, "fx_graph_cache": True, "fx_graph_remote_cache": False,
                      "autotune_remote_cache": False, "bundled_autotune_remote_cache": False}
# Settings that ask for autotuning: a capture with any of them on times every choice, its local cache off.
_AUTOTUNING = ("max_autotune", "max_autotune_gemm", "max_autotune_pointwise", "coordinate_descent_tuning")
_FUNCTORCH_SETTINGS = {"enable_autograd_cache": False, "enable_remote_autograd_cache": False,
                       "bundled_autograd_cache": False}
_DYNAMO_SETTINGS = {"automatic_dynamic_local_pgo": False, "automatic_dynamic_remote_pgo": False}
# A compile whose graphs are all compiled anew, though nothing of it is captured (a bisect trial, whose edits are
# not in the caches' keys): no graph served from the FX graph cache (``other_caches_off`` for AOTAutograd's),
# while a C++ kernel whose source and flags an earlier compile built is loaded, not built by g++ again, which
# ``force_disable_caches`` (a throwaway cache folder per compile) would do.
_GRAPHS_ANEW = {"fx_graph_cache": False, "fx_graph_remote_cache": False}


class Store(Protocol):
    """What decides a warm capture's lookups: the explorer's store of what earlier captures built."""

    def has_stored(self, key: str) -> bool:
        """Whether a capture of the graph with this FX graph cache key was stored."""

    def on_lookup(self, key: str, state: str, compiled: Any) -> None:
        """A lookup of ``key`` was made: ``state`` is "hit" (Inductor served ``compiled``) or "miss" (it
        compiles; ``compiled`` is None)."""


def available() -> bool:
    """Whether a warm capture can use the FX graph cache: this torch has the lookup it decides, and the user
    has not turned the cache off (``force_disable_caches``, ``fx_graph_cache=False``), which it respects."""
    return (FxGraphCache is not None and callable(getattr(FxGraphCache, "load_with_key", None))
            and not _config.force_disable_caches and bool(_config.fx_graph_cache))


def settings(asked: dict[str, Any]) -> dict[str, Any]:
    """The Inductor config values of a warm capture asked for ``asked`` (those this torch has;
    ``force_disable_caches`` is an alias of torch.compiler's, so it is probed as an attribute).

    Autotuning's local cache stays on, as Inductor ships it: the Triton kernels a capture generates carry
    the setting, and a served graph's kernels then read their tuned configs instead of timing every config
    again at their first run (about 2 s of an 8-block training step on an H200). A capture that asks for
    autotuning (max-autotune, coordinate descent) turns it off, so its autotuning table is timed whole."""
    values = dict(_INDUCTOR_SETTINGS)
    if any(asked.get(key) for key in _AUTOTUNING):
        values["autotune_local_cache"] = False
    return {key: value for key, value in values.items() if hasattr(_config, key)}


def store_dir() -> Path:
    """Where the explorer keeps what warm captures serve: beside Inductor's FX graph cache, under the same
    cache directory (``TORCHINDUCTOR_CACHE_DIR``)."""
    from torch._inductor.runtime.cache_dir_utils import cache_dir

    return Path(cache_dir()) / "explorer"


def graphs_anew() -> dict[str, Any]:
    """The Inductor config values of a compile whose every graph is compiled anew (with ``other_caches_off``),
    its kernels' builds still cached (those this torch has)."""
    return {key: value for key, value in _GRAPHS_ANEW.items() if hasattr(_config, key)}


@contextlib.contextmanager
def other_caches_off() -> Iterator[None]:
    """AOTAutograd's cache and Dynamo's profile-guided dynamism off for the block (their keys as this torch
    spells them)."""
    import torch._functorch.config as functorch_config

    with contextlib.ExitStack() as stack:
        for module, values in ((functorch_config, _FUNCTORCH_SETTINGS), (torch._dynamo.config, _DYNAMO_SETTINGS)):
            present = {key: value for key, value in values.items() if hasattr(module, key)}
            stack.enter_context(module.patch(present))
        yield


@contextlib.contextmanager
def aot_cache_on() -> Iterator[None]:
    """AOTAutograd's cache on for the block (a warm capture's compiles): a hit there serves the whole graph
    (both halves of a training graph), its FX graph cache lookups still decided by the store, and skips
    AOTAutograd's tracing and partitioning."""
    import torch._functorch.config as functorch_config

    with functorch_config.patch({"enable_autograd_cache": True}):
        yield


@contextlib.contextmanager
def lookups_decided(store: Store) -> Iterator[None]:
    """Inside the block, an FX graph cache lookup of a key the explorer has not stored is a miss without
    looking (Inductor then compiles and saves); others are Inductor's own lookups."""
    original = FxGraphCache.load_with_key

    def load_with_key(key: str, debug_lines: list[str], *args: Any, **kwargs: Any) -> Any:
        if not store.has_stored(key):
            store.on_lookup(key, "miss", None)
            return None, {"key": key, "components": debug_lines, "cache_event_time": time.time_ns(),
                          "cache_state": "miss"}
        compiled, info = original(key, debug_lines, *args, **kwargs)
        store.on_lookup(key, "hit" if compiled is not None else "miss", compiled)
        return compiled, info

    with method_patch.replaced(FxGraphCache, "load_with_key", staticmethod(load_with_key)):
        yield
