"""What a front end (explorer/) needs of compiler/ beyond the public names of ``compiler``.

``compiler`` itself keeps the short list people call in a notebook (capture, load, Compilation, ...).
A front end also needs helpers nobody calls by hand: progress steps to show, the toggles' settings,
the terminal's tables, the trace contract's header, the watch view's payload, whether it runs in a
notebook, and a way to give the model its interactive views.
Kept here, apart, so the package's namespace does not become a grab-bag; explorer/ imports only
``compiler`` and ``compiler.api``, never a room (import-linter checks it, pyproject.toml).

Like ``compiler``, each name is imported from its room on first use (PEP 562): ``import explorer`` needs
``provide_views`` and the progress steps, which are torch-free, and must not pay for torch and Inductor
(``python -m explorer --help``, ``show`` of a saved trace); the toggles and the compile redirect do.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from .model import slots
from .model.lazy_names import lazy_names

# public name -> (the module that defines it, its name there)
_NAMES: dict[str, tuple[str, str]] = {
    "compile_redirected": ("compiler._torch.compile_calls", "compile_redirected"),
    "original_of": ("compiler._torch.compile_calls", "original_of"),
    "inductor_default": ("compiler._torch.inductor_config", "default"),
    "inductor_has_key": ("compiler._torch.inductor_config", "has_key"),
    "TRACE_SCHEMA": ("compiler.model.contract", "TRACE_SCHEMA"),
    "TRACE_VERSION": ("compiler.model.contract", "TRACE_VERSION"),
    "did_you_mean": ("compiler.model.formatting", "did_you_mean"),
    "in_notebook": ("compiler.model.notebook", "in_notebook"),
    "watch_payload": ("compiler.io.watch", "watch_payload"),
    **{name: ("compiler.model.progress", name) for name in ("COMPILE_STAGES", "Cancelled", "Display", "Step",
                                                              "set_display")},
    "tensor_specs": ("compiler.pipeline.specs", "tensor_specs"),
    "resolve_toggles": ("compiler.pipeline.toggles", "resolve"),
    "mode_settings": ("compiler.pipeline.toggles", "mode_settings"),
    "toggle_names_for": ("compiler.pipeline.toggles", "toggle_names_for"),
    "compact_view": ("compiler.render.summary", "compact_view"),
    "KERNEL_SORTS": ("compiler.render.table_rows", "KERNEL_SORTS"),
    "autotune_groups": ("compiler.render.table_rows", "autotune_groups"),
    "kernel_rows": ("compiler.render.table_rows", "kernel_rows"),
    "select_rows": ("compiler.render.table_rows", "select"),
    "autotune_table": ("compiler.render.tables", "autotune_table"),
    "kernels_table": ("compiler.render.tables", "kernels_table"),
}




def provide_views(*, widget: slots.Widget, write_html: slots.WriteHtml, traceset_widget: slots.Widget,
                  write_traceset_html: slots.WriteHtml, sweep_widget: slots.Widget,
                  write_sweep_html: Callable[[Any, str | Path | None], Any], show: slots.ShowView,
                  watch_widget: slots.Widget) -> None:
    """Fill the model's view slots (compiler/model/slots.py, provider ``explorer``): a widget takes a
    thunk of what it shows, so nothing is built when its package is missing."""
    slots.widget.fill(widget)
    slots.write_html.fill(write_html)
    slots.traceset_widget.fill(traceset_widget)
    slots.write_traceset_html.fill(write_traceset_html)
    slots.sweep_widget.fill(sweep_widget)
    slots.write_sweep_html.fill(write_sweep_html)
    slots.show.fill(show)
    slots.watch_widget.fill(watch_widget)


__all__ = [  # provide_views and every key of _NAMES
    "provide_views", "COMPILE_STAGES", "Cancelled", "Display", "Step", "set_display", "did_you_mean",
    "in_notebook", "watch_payload",
    "tensor_specs", "resolve_toggles", "mode_settings", "toggle_names_for", "inductor_default", "inductor_has_key",
    "compile_redirected", "original_of", "compact_view", "KERNEL_SORTS", "autotune_groups", "kernel_rows",
    "select_rows", "autotune_table", "kernels_table", "TRACE_SCHEMA", "TRACE_VERSION",
]
__getattr__, __dir__ = lazy_names("compiler.api", _NAMES, globals(), __all__)

if TYPE_CHECKING:  # what type checkers and IDEs see: the same names, imported eagerly
    from ._torch.compile_calls import compile_redirected, original_of
    from ._torch.inductor_config import default as inductor_default
    from ._torch.inductor_config import has_key as inductor_has_key
    from .model.contract import TRACE_SCHEMA, TRACE_VERSION
    from .io.watch import watch_payload
    from .model.formatting import did_you_mean
    from .model.notebook import in_notebook
    from .model.progress import COMPILE_STAGES, Cancelled, Display, Step, set_display
    from .pipeline.specs import tensor_specs
    from .pipeline.toggles import mode_settings
    from .pipeline.toggles import resolve as resolve_toggles
    from .pipeline.toggles import toggle_names_for
    from .render.summary import compact_view
    from .render.table_rows import KERNEL_SORTS, autotune_groups, kernel_rows
    from .render.table_rows import select as select_rows
    from .render.tables import autotune_table, kernels_table
