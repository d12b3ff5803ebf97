"""Toggle values as the session and the toggle panel see them.

A configuration is normalized before it is used as a cache key: values equal to Inductor's default are
dropped and toggle names replace the Inductor keys they map to. So ``{}``, ``{"deterministic": False}``
and switching deterministic on and off again are one configuration, served from the session's cache.
"""

from __future__ import annotations

import json
from typing import Any, Mapping

from compiler import TOGGLES
from compiler.api import inductor_default, inductor_has_key, resolve_toggles, toggle_names_for


def default_of(name: str) -> Any:
    """Inductor's shipped value for a toggle name or a raw key (None when the installed torch lacks it)."""
    toggle = TOGGLES.get(name)
    key = toggle.key if toggle else name
    if key is None or not inductor_has_key(key):
        return None
    return inductor_default(key)


def normalize(config: Mapping[str, Any] | None) -> dict[str, Any]:
    """Toggle names (or raw keys) -> values, defaults dropped, sorted; raises ToggleError when invalid."""
    settings = resolve_toggles(config)
    kept = {key: value for key, value in settings.items() if value != inductor_default(key)}
    return dict(sorted(toggle_names_for(kept).items()))


def config_key(config: Mapping[str, Any]) -> str:
    return json.dumps(normalize(config), sort_keys=True, default=str)


def toggle_states(config: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """Every registered toggle with its value under ``config`` (what the toggle panel lists)."""
    config = dict(config or {})
    states = []
    for name, toggle in TOGGLES.items():
        default = default_of(name)
        states.append({
            "name": name,
            "description": toggle.description,
            "available": toggle.key is not None,
            "default": default,
            "value": config.get(name, default),
        })
    return states
