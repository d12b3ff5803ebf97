"""Where the interactive views plug in.

compiler/ sits below widgets/ and never imports it; explorer/ registers the widget renderers here at
import, so ``Compilation.to_html`` and notebook display use them whenever explorer is imported.
"""

from __future__ import annotations

from typing import Any, Callable

_renderers: dict[str, Callable[..., Any]] = {}


def register(kind: str, renderer: Callable[..., Any]) -> None:
    _renderers[kind] = renderer


def renderer(kind: str) -> Callable[..., Any] | None:
    return _renderers.get(kind)
