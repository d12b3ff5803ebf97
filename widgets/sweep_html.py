"""A sweep as one self-contained HTML file: the sortable table on top, the explorer view of the point
clicked below (decoded from its embedded parts when clicked), and the embedded diffs of point pairs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .html import compressed_parts, document
from .sweep import DiffOf, SweepParts


def render_sweep_html(sweep: Any, title: str | None = None, diff_of: DiffOf | None = None) -> str:
    """One HTML document showing `sweep` (a Sweep or the dict Sweep.save writes)."""
    parts = SweepParts(sweep, diff_of)
    summary = parts.summary()
    if title is None:
        title = f"sweep of {summary['meta'].get('function') or '?'} · {len(summary['rows'])} points · inductor-explorer"
    return document(title, summary, compressed_parts(parts), mount="data-inductor-sweep")


def write_sweep_html(sweep: Any, path: str | Path, title: str | None = None, diff_of: DiffOf | None = None) -> Path:
    """Write render_sweep_html(sweep) to `path` (parents created); returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_sweep_html(sweep, title, diff_of), encoding="utf-8")
    return path
