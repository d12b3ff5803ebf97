"""A TraceSet as one self-contained HTML file: the rank picker and divergence summary on top, and
the explorer view of the compilation picked below, decoded from its embedded parts when picked."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .html import compressed_parts, document
from .traceset import TraceSetParts


def render_traceset_html(traceset: Any, title: str | None = None) -> str:
    """One HTML document showing `traceset` (a TraceSet or the dict TraceSet.save writes)."""
    parts = TraceSetParts(traceset)
    summary = parts.summary()
    if title is None:
        title = f"{len(summary['ranks'])} ranks · {summary.get('path') or 'TraceSet'} · inductor-explorer"
    return document(title, summary, compressed_parts(parts), mount="data-inductor-traceset")


def write_traceset_html(traceset: Any, path: str | Path, title: str | None = None) -> Path:
    """Write render_traceset_html(traceset) to `path` (parents created); returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_traceset_html(traceset, title), encoding="utf-8")
    return path
