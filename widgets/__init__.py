"""Views of an inductor-explorer trace: an anywidget for notebooks and a static HTML export.

Everything here reads the trace JSON (compiler/SCHEMA.md) and nothing imports
torch, so a trace recorded on a GPU machine renders anywhere. ExplorerWidget is
imported on first use: render_html/write_html work without anywidget installed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from compiler.model.contract import SELECTION_KINDS, STAGES
from compiler.model.contract import TRACE_VERSION as SCHEMA_VERSION

from .html import embed_json, render_html, write_html
from .parts import TraceParts
from .payload import TraceError
from .sweep import SweepParts
from .sweep_html import render_sweep_html, write_sweep_html
from .traceset import TraceSetError, TraceSetParts
from .traceset_html import render_traceset_html, write_traceset_html

if TYPE_CHECKING:
    from .sweep_widget import SweepWidget
    from .traceset_widget import TraceSetWidget
    from .watch_widget import WatchWidget
    from .widget import ExplorerWidget

__all__ = [
    "ExplorerWidget",
    "SCHEMA_VERSION",
    "SELECTION_KINDS",
    "STAGES",
    "SweepParts",
    "SweepWidget",
    "TraceError",
    "TraceParts",
    "TraceSetError",
    "TraceSetParts",
    "TraceSetWidget",
    "WatchWidget",
    "embed_json",
    "render_html",
    "render_sweep_html",
    "render_traceset_html",
    "write_html",
    "write_sweep_html",
    "write_traceset_html",
]


def __getattr__(name: str) -> Any:
    if name == "ExplorerWidget":
        from .widget import ExplorerWidget

        return ExplorerWidget
    if name == "SweepWidget":
        from .sweep_widget import SweepWidget

        return SweepWidget
    if name == "TraceSetWidget":
        from .traceset_widget import TraceSetWidget

        return TraceSetWidget
    if name == "WatchWidget":
        from .watch_widget import WatchWidget

        return WatchWidget
    raise AttributeError(f"module 'widgets' has no attribute {name!r}")
