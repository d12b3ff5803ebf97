"""Scheduler nodes before and after fusion, through Inductor's custom scheduler-pass config hooks.

``_pre_fusion_custom_pass`` / ``_post_fusion_custom_pass`` are called by ``Scheduler._init`` with the
node list (and must return it). They are plain config values, so ``inductor_config.patched`` installs
and removes them; a pass the user already set keeps running after ours.
"""

from __future__ import annotations

from typing import Any, Callable

from torch._inductor import config as _config

from . import guard

PRE_FUSION_KEY = "_pre_fusion_custom_pass"
POST_FUSION_KEY = "_post_fusion_custom_pass"


def available() -> bool:
    return hasattr(_config, PRE_FUSION_KEY) and hasattr(_config, POST_FUSION_KEY)


def config_values(on_pre: Callable[[list[Any]], None], on_post: Callable[[list[Any]], None]) -> dict[str, Any]:
    """Config patch entries that call ``on_pre`` / ``on_post`` with the scheduler's node list."""

    def chain(observer: Callable[[list[Any]], None], existing: Any) -> Callable[[list[Any]], list[Any]]:
        def scheduler_pass(nodes: list[Any]) -> list[Any]:
            with guard.never_breaking(__name__):
                observer(list(nodes))
            return existing(nodes) if existing is not None else nodes

        return scheduler_pass

    return {
        PRE_FUSION_KEY: chain(on_pre, getattr(_config, PRE_FUSION_KEY)),
        POST_FUSION_KEY: chain(on_post, getattr(_config, POST_FUSION_KEY)),
    }
