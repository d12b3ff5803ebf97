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


def widget_bundle(kind: str, view: Callable[[], Any], include: Any, exclude: Any, mime: str,
                  text: Callable[[], str]) -> Any:
    """The mimebundle of the widget registered as ``kind`` for ``view()`` (made only when there is one),
    with ``text()`` under ``mime`` when the widget gave none; None when no widget is registered or it
    could not render (the caller then falls back to static HTML)."""
    widget = renderer(kind)
    if widget is None:
        return None
    try:
        bundle = widget(view())._repr_mimebundle_(include=include, exclude=exclude)
    except Exception:
        return None
    if bundle is not None:
        data = bundle[0] if isinstance(bundle, tuple) else bundle
        data.setdefault(mime, text())
    return bundle
