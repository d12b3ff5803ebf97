"""Scheduler nodes before and after fusion, through Inductor's custom scheduler-pass config hooks.

``_pre_fusion_custom_pass`` / ``_post_fusion_custom_pass`` are called by ``Scheduler._init`` with the
node list (and must return it). They are plain config values, so ``inductor_config.patched`` installs
and removes them; a pass the user already set keeps running after ours.
"""

from __future__ import annotations

from typing import Any, Callable

from torch._inductor import config as _config

from . import guard

# What Inductor's FX graph cache accepts as a scheduler pass it can key on: a CustomSchedulerPass (torch 2.13
# on), a CustomGraphPass before that (2.11 asks for one for the pre-fusion pass); none: captures stay cold.
try:
    from torch._inductor.custom_graph_pass import CustomSchedulerPass as KeyedPass
except ImportError:
    try:
        from torch._inductor.custom_graph_pass import CustomGraphPass as KeyedPass
    except ImportError:
        KeyedPass = None  # type: ignore[assignment,misc]

PRE_FUSION_KEY = "_pre_fusion_custom_pass"
POST_FUSION_KEY = "_post_fusion_custom_pass"


def available() -> bool:
    return hasattr(_config, PRE_FUSION_KEY) and hasattr(_config, POST_FUSION_KEY)


def config_values(on_pre: Callable[[list[Any]], None], on_post: Callable[[list[Any]], None]) -> dict[str, Any]:
    """Config patch entries that call ``on_pre`` / ``on_post`` with the scheduler's node list."""
    return {
        PRE_FUSION_KEY: _chained(on_pre, getattr(_config, PRE_FUSION_KEY), "pre-fusion"),
        POST_FUSION_KEY: _chained(on_post, getattr(_config, POST_FUSION_KEY), "post-fusion"),
    }


def _chained(observer: Callable[[list[Any]], None], existing: Any, where: str) -> Callable[[list[Any]], list[Any]]:
    """A pass that shows the nodes to ``observer`` and then runs ``existing``.

    It changes nothing, so where Inductor can key its FX graph cache on the passes (a ``KeyedPass`` with a
    ``uuid``) it is one, with a uuid of its own and the existing pass's: a warm capture
    (``fx_graph_cache.py``) can then hit. A plain callable already set stays visible as one, so Inductor
    still bypasses its cache for it (it cannot tell what that pass does)."""

    def scheduler_pass(nodes: list[Any]) -> list[Any]:
        with guard.never_breaking(__name__):
            observer(list(nodes))
        return existing(nodes) if existing is not None else nodes

    keyed = _uuid_of(existing)
    if KeyedPass is None or (existing is not None and keyed is None):
        return scheduler_pass
    return _ObservingPass(scheduler_pass, f"inductor-explorer {where} observer; then {keyed}")


def _uuid_of(existing: Any) -> Any:
    if existing is None:
        return "nothing"
    if KeyedPass is not None and isinstance(existing, KeyedPass):
        return existing.uuid()
    return None


if KeyedPass is not None:
    class _ObservingPass(KeyedPass):
        """The observing pass with a uuid that says what it is (stable across processes)."""

        def __init__(self, run: Callable[[list[Any]], list[Any]], uuid: str) -> None:
            self._run, self._uuid = run, uuid

        def __call__(self, nodes: list[Any]) -> list[Any]:
            return self._run(nodes)

        def uuid(self) -> str:
            return self._uuid

        def __reduce__(self) -> tuple[Any, tuple[str]]:
            """Pickled as its uuid: some torch versions pickle ``_post_fusion_custom_pass`` with the rest of
            the config into the FX graph cache key, and a closure cannot be pickled (the lookup is bypassed)."""
            return str, (self._uuid,)
