"""What a front end (explorer/) needs of compiler/ beyond the public names of ``compiler``.

``compiler`` itself keeps the short list people call in a notebook (capture, load, Compilation, ...).
A front end also needs helpers nobody calls by hand: progress steps to show, the toggles' settings,
the terminal's tables, the trace contract's header, and a way to give the model its interactive views.
Kept here, apart, so the package's namespace does not become a grab-bag; explorer/ imports only
``compiler`` and ``compiler.api``, never a room (import-linter checks it, pyproject.toml).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from ._torch.compile_calls import compile_redirected, original_of
from ._torch.inductor_config import default as inductor_default
from ._torch.inductor_config import has_key as inductor_has_key
from .model import slots
from .model.contract import TRACE_SCHEMA, TRACE_VERSION
from .model.formatting import did_you_mean
from .model.progress import COMPILE_STAGES, Cancelled, Display, Step, set_display
from .pipeline.specs import tensor_specs
from .pipeline.toggles import resolve as resolve_toggles
from .pipeline.toggles import toggle_names_for
from .render.summary import compact_view
from .render.table_rows import KERNEL_SORTS, autotune_groups, kernel_rows
from .render.table_rows import select as select_rows
from .render.tables import autotune_table, kernels_table


def provide_views(*, widget: slots.Widget, write_html: slots.WriteHtml, traceset_widget: slots.Widget,
                  write_traceset_html: slots.WriteHtml, sweep_widget: slots.Widget,
                  write_sweep_html: Callable[[Any, str | Path | None], Any], show: slots.ShowView) -> None:
    """Fill the model's view slots (compiler/model/slots.py, provider ``explorer``): a widget takes a
    thunk of what it shows, so nothing is built when its package is missing."""
    slots.widget.fill(widget)
    slots.write_html.fill(write_html)
    slots.traceset_widget.fill(traceset_widget)
    slots.write_traceset_html.fill(write_traceset_html)
    slots.sweep_widget.fill(sweep_widget)
    slots.write_sweep_html.fill(write_sweep_html)
    slots.show.fill(show)


__all__ = [
    "provide_views", "COMPILE_STAGES", "Cancelled", "Display", "Step", "set_display", "did_you_mean",
    "tensor_specs", "resolve_toggles", "toggle_names_for", "inductor_default", "inductor_has_key",
    "compile_redirected", "original_of", "compact_view", "KERNEL_SORTS", "autotune_groups", "kernel_rows",
    "select_rows", "autotune_table", "kernels_table", "TRACE_SCHEMA", "TRACE_VERSION",
]
