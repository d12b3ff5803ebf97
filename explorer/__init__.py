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
from typing import TYPE_CHECKING, Any, Callable

from compiler.api import lazy_names, provide_views

# public name -> (module, its name there), imported on first use (PEP 562): ``python -m explorer --help``
# and ``show`` of a saved trace must not pay for torch and Inductor, which compile() and the toggles need
_NAMES: dict[str, tuple[str, str]] = {
    **{name: ("compiler", name) for name in (
        "TOGGLES", "Compilation", "CompileError", "GraphCapture", "Kernel", "ToggleError", "ToggleWarning",
        "TraceFormatError", "TraceLoadError", "TraceSet", "fx_wrapper_backend", "load", "load_trace", "trace_env",
        "CountersUnavailable", "Sweep", "SweepError", "close_sweep_workers", "start_sweep_workers", "sweep",
        "Diff", "diff", "ExportError", "ExportStage", "watch", "load_watch", "WatchReport",
        "bisect", "BisectResult", "WhatIfError")},
    "compile": ("compiler", "capture"),
    "export": ("compiler", "capture_export"),
    "Session": ("explorer.session", "Session"),
}




if TYPE_CHECKING:  # what type checkers and IDEs see: the same names, imported eagerly
    from compiler import (TOGGLES, Compilation, CompileError, CountersUnavailable, Diff, ExportError, ExportStage,
                          GraphCapture, Kernel, Sweep, SweepError, ToggleError, ToggleWarning, TraceFormatError,
                          TraceLoadError, TraceSet, close_sweep_workers, diff, fx_wrapper_backend, load, load_trace,
                          start_sweep_workers, sweep, trace_env)
    from compiler import WatchReport, load_watch, watch
    from compiler import BisectResult, bisect
    from compiler import WhatIfError
    from compiler import capture as compile
    from compiler import capture_export as export

    from .session import Session

__version__ = "0.1.0"


# The model's views (compiler/model/slots.py): each widget takes a thunk of what it shows, called once
# its package imported, so a notebook without the widget package builds nothing before falling back.
def _widget(trace: Callable[[], Any]) -> Any:
    """``trace`` is a compilation's ``trace_view``: the widget's "unfuse" asks that compilation's ``what_if``
    when it can recompile (a live capture, not a loaded trace)."""
    from widgets import ExplorerWidget
    from widgets.widget import what_if_of

    owner = getattr(trace, "__self__", None)
    return ExplorerWidget(trace(), what_if=what_if_of(owner) if getattr(owner, "live", False) else None)


def _write_html(trace: Any, path: str | Path) -> Path:
    from widgets import write_html

    return Path(write_html(trace, path))


def _traceset_widget(traceset: Callable[[], TraceSet]) -> Any:
    from widgets import TraceSetWidget

    return TraceSetWidget(traceset())


def _write_traceset_html(traceset: Any, path: str | Path) -> Path:
    from widgets import write_traceset_html

    return Path(write_traceset_html(traceset, path))


def _point_diffs(sweep: Sweep) -> Any:
    """Diff.to_json() of two points of ``sweep`` (what the sweep views show for two rows picked)."""
    return lambda i, j: sweep.diff(i, j).to_json()


def _sweep_widget(view: Callable[[], Sweep]) -> Any:
    from widgets import SweepWidget

    sweep = view()
    return SweepWidget(sweep, diff_of=_point_diffs(sweep))


def _watch_widget(view: Callable[[], Any]) -> Any:
    """The live watch view: a widget showing ``view()``'s report (a live ``Watch``), handed a new payload
    each time the watch tells its listeners (a few times a second while the loop runs, once at its end)."""
    from compiler.api import watch_payload
    from widgets.watch_widget import WatchWidget

    watch = view()

    def follow(report: Any) -> None:
        widget.show(watch_payload(report))

    widget = WatchWidget(watch_payload(watch.report()), on_close=lambda: watch.remove_listener(follow))
    watch.add_listener(follow)
    return widget


def _write_sweep_html(sweep: Sweep, path: str | Path | None) -> Any:
    from widgets import render_sweep_html, write_sweep_html

    if path is None:
        return render_sweep_html(sweep, diff_of=_point_diffs(sweep))
    return Path(write_sweep_html(sweep, path, diff_of=_point_diffs(sweep)))



def show(c: Any, full: bool = False) -> Any:
    """The natural view of ``c``. In a notebook: the explorer widget (display it, or leave it as a cell's
    last expression); for a TraceSet, the rank and compile pickers over the explorer view of one
    compilation; for a Sweep, its table over the view of the point picked; for a BisectResult, the view of
    the compilation it blamed with the culprit's levels selectable; anything else as it renders itself. In a terminal: printed, a
    Compilation as its compact view (the whole tree with ``full=True``), anything else (a kernel, a
    graph, a report) as rich renders it; returns None."""
    from compiler import BisectResult, Compilation, TraceSet
    from compiler.api import compact_view

    if not progress.in_notebook():
        from rich.console import Console

        Console().print(compact_view(c) if isinstance(c, Compilation) and not full else c)
        return None
    from compiler import Sweep  # the sweeps room imports torch: a notebook's kernel has it, a terminal need not

    if isinstance(c, TraceSet):
        return _traceset_widget(lambda: c)
    if isinstance(c, Sweep):
        return _sweep_widget(lambda: c)
    if isinstance(c, Compilation):
        return _widget(c.trace_view)
    if isinstance(c, BisectResult) and c.compilation is not None:  # the blamed compilation, the culprit selectable
        return c.view()
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

provide_views(widget=_widget, write_html=_write_html, traceset_widget=_traceset_widget,
              write_traceset_html=_write_traceset_html, sweep_widget=_sweep_widget, write_sweep_html=_write_sweep_html,
              show=show, watch_widget=_watch_widget)  # c.show(), c.to_html(), a notebook's widgets: imported by the model on first use

progress.auto_on()  # compiles, autotuning and profiles show where they are (explorer/progress.py)

__all__ = ["compile", "export", "ExportError", "ExportStage", "sweep", "Sweep", "SweepError", "close_sweep_workers", "start_sweep_workers", "load", "load_trace",
           "watch", "load_watch", "WatchReport", "bisect", "BisectResult", "WhatIfError", "trace_env", "show", "to_html", "diff", "Diff", "Session", "load_ipython_extension",
           "Compilation", "TraceSet", "GraphCapture", "Kernel", "CompileError", "ToggleError", "ToggleWarning",
           "TraceFormatError", "TraceLoadError", "CountersUnavailable", "TOGGLES", "fx_wrapper_backend", "__version__"]
__getattr__, __dir__ = lazy_names("explorer", _NAMES, globals(), __all__)
