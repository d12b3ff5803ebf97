"""inductor-explorer: every stage of torch.compile / TorchInductor as live, inspectable objects.

    import explorer
    c = explorer.compile(fn_or_module, *example_inputs, config={"deterministic": True})
    c.graphs[0].kernels[0].source
    c            # in a notebook: the linked explorer view
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from compiler import (TOGGLES, Compilation, CompileError, GraphCapture, Kernel, ToggleError, TraceFormatError,
                      fx_wrapper_backend, load, views)
from compiler import capture as compile

__version__ = "0.1.0"


def _widget(payload: dict[str, Any]) -> Any:
    from widgets import ExplorerWidget

    return ExplorerWidget(payload)


def _write_html(payload: dict[str, Any], path: str | Path) -> Path:
    from widgets import write_html

    return Path(write_html(payload, path))


views.register("widget", _widget)
views.register("html", _write_html)


def show(c: Compilation) -> Any:
    """The explorer widget for ``c`` (display it, or leave it as a cell's last expression)."""
    return _widget(c.to_json())


def to_html(c: Compilation, path: str | Path) -> Path:
    """Write ``c`` as one self-contained HTML file (no kernel, no network needed to open it)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    return c.to_html(path)


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext explorer``: registers %%compile and %explorer (see explorer/magic.py)."""
    from .magic import load_ipython_extension as load

    load(ipython)


from .diff import Diff, diff  # noqa: E402 - after the view registration above
from .session import Session  # noqa: E402

__all__ = ["compile", "load", "show", "to_html", "diff", "Diff", "Session", "load_ipython_extension", "Compilation",
           "GraphCapture", "Kernel", "CompileError", "ToggleError", "TraceFormatError", "TOGGLES", "fx_wrapper_backend",
           "__version__"]
