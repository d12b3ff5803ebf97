"""inductor-explorer: every stage of torch.compile / TorchInductor as live, inspectable objects.

```python
import explorer
c = explorer.compile(fn_or_module, *example_inputs, config={"deterministic": True})
c.graphs[0].kernels[0].source
c            # in a notebook: the linked explorer view
s = explorer.sweep(fn_or_module, *example_inputs, grid={"max_autotune": [False, True]})  # one table
ts = explorer.load_trace("/tmp/trace_dir")   # a TORCH_TRACE directory: ts[rank][compile_id]
```
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from compiler import (TOGGLES, Compilation, CompileError, GraphCapture, Kernel, ToggleError, ToggleWarning,
                      TraceFormatError, TraceLoadError, TraceSet, fx_wrapper_backend, load, load_trace, trace_env)
from compiler import CountersUnavailable, Sweep, SweepError, close_sweep_workers, start_sweep_workers, sweep
from compiler.model import slots as views
from compiler import capture as compile
from compiler import ExportError, ExportStage
from compiler import capture_export as export

__version__ = "0.1.0"


def _widget(trace: Any) -> Any:
    from widgets import ExplorerWidget

    return ExplorerWidget(trace)


def _write_html(trace: Any, path: str | Path) -> Path:
    from widgets import write_html

    return Path(write_html(trace, path))


def _traceset_widget(traceset: Any) -> Any:
    from widgets import TraceSetWidget

    return TraceSetWidget(traceset)


def _write_traceset_html(traceset: Any, path: str | Path) -> Path:
    from widgets import write_traceset_html

    return Path(write_traceset_html(traceset, path))


def _point_diffs(sweep: Sweep) -> Any:
    """Diff.to_json() of two points of ``sweep`` (what the sweep views show for two rows picked)."""
    return lambda i, j: diff(sweep[i], sweep[j]).to_json()


def _sweep_widget(sweep: Sweep) -> Any:
    from widgets import SweepWidget

    return SweepWidget(sweep, diff_of=_point_diffs(sweep))


def _write_sweep_html(sweep: Sweep, path: str | Path | None) -> Any:
    from widgets import render_sweep_html, write_sweep_html

    if path is None:
        return render_sweep_html(sweep, diff_of=_point_diffs(sweep))
    return Path(write_sweep_html(sweep, path, diff_of=_point_diffs(sweep)))


views.register("widget", _widget)
views.register("html", _write_html)
views.register("traceset_widget", _traceset_widget)
views.register("traceset_html", _write_traceset_html)
views.register("sweep_widget", _sweep_widget)
views.register("sweep_html", _write_sweep_html)


def show(c: Any, full: bool = False) -> Any:
    """The natural view of ``c``. In a notebook: the explorer widget (display it, or leave it as a cell's
    last expression); for a TraceSet, the rank and compile pickers over the explorer view of one
    compilation; for a Sweep, its table over the view of the point picked; anything else as it renders
    itself. In a terminal: printed, a
    Compilation as its compact view (the whole tree with ``full=True``), anything else (a kernel, a
    graph, a report) as rich renders it; returns None."""
    if not progress.in_notebook():
        from rich.console import Console

        from compiler.render.summary import compact_view

        Console().print(compact_view(c) if isinstance(c, Compilation) and not full else c)
        return None
    if isinstance(c, TraceSet):
        return _traceset_widget(c)
    if isinstance(c, Sweep):
        return _sweep_widget(c)
    if isinstance(c, Compilation):
        return _widget(c.trace_view())
    return c  # a kernel, a graph, a report: Jupyter shows its own HTML


def to_html(c: Compilation, path: str | Path) -> Path:
    """Write ``c`` as one self-contained HTML file (no kernel, no network needed to open it)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    return c.to_html(path)


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext explorer``: registers %%compile and %explorer (see explorer/magic.py)."""
    from .magic import load_ipython_extension as load

    load(ipython)


from . import progress  # noqa: E402
from .diff import Diff, diff  # noqa: E402 - after the view registration above
from .session import Session  # noqa: E402

views.register("diff", diff)  # Sweep.diff(i, j)
views.register("show", show)  # c.show()

progress.auto_on()  # compiles, autotuning and profiles show where they are (explorer/progress.py)

__all__ = ["compile", "export", "ExportError", "ExportStage", "sweep", "Sweep", "SweepError", "close_sweep_workers", "start_sweep_workers", "load", "load_trace",
           "trace_env", "show", "to_html", "diff", "Diff", "Session", "load_ipython_extension",
           "Compilation", "TraceSet", "GraphCapture", "Kernel", "CompileError", "ToggleError", "ToggleWarning",
           "TraceFormatError", "TraceLoadError", "CountersUnavailable", "TOGGLES", "fx_wrapper_backend", "__version__"]
