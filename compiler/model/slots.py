"""The model's registry: where the rooms above plug renderings and actions into the model.

The model's classes keep their convenience methods (``c.profile()``, ``c.save()``, ``k.bench()``,
rich/HTML display) but import nothing above the model to serve them: each method calls a slot here.
There are two kinds of slot, and only these two:

- renderings: the ``singledispatch`` functions ``rich_of`` / ``html_of``; ``compiler/render`` registers
  one implementation per class and is imported the first time an object without one is rendered;
- actions: typed ``Action`` slots, each naming the module that fills it (``@slots.<name>.fill``); an
  action imports that module the first time it is called, so no room has to be imported beforehand.
  The rooms' operations, the loaders of saved files io/ does not own (``loaders``) and explorer's
  views (``widget``, ``write_html``, ``show``, ...) are all actions.

Providers are named as strings and imported with importlib: the model keeps no import edge upwards.
"""

from __future__ import annotations

import html
import importlib
from functools import singledispatch
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, ContextManager, Generic, Mapping, Protocol, TypeVar

from .contract import SWEEP_SCHEMA

F = TypeVar("F", bound=Callable[..., Any])

_RENDERINGS = "compiler.render"  # the room that registers the renderings of the model's classes
_renderings_imported = False


def _import_renderings() -> bool:
    """Import compiler/render once; True when this call did (a second dispatch may now find a rendering)."""
    global _renderings_imported
    if _renderings_imported:
        return False
    _renderings_imported = True
    importlib.import_module(_RENDERINGS)
    return True


@singledispatch
def rich_of(obj: Any) -> Any:
    """The rich renderable of ``obj`` (``compiler/render`` registers one per class)."""
    if _import_renderings():
        return rich_of(obj)
    return repr(obj)


@singledispatch
def html_of(obj: Any) -> str:
    """The notebook HTML of ``obj`` (``compiler/render`` registers one per class)."""
    if _import_renderings():
        return html_of(obj)
    return f"<pre>{html.escape(repr(obj))}</pre>"


class Rendered:
    """Mixin: rich and HTML renderings come from the ``rich_of`` / ``html_of`` registry."""

    __slots__ = ()

    def __rich__(self) -> Any:
        return rich_of(self)

    def _repr_html_(self) -> str:
        return html_of(self)


class Action(Generic[F]):
    """One named operation the model offers but a module above implements: ``provider`` (a full module
    path) fills it with ``@slots.<name>.fill`` when imported, and the first call imports it. ``F`` is the
    operation's signature: type checkers see a call of the slot as a call of ``F``."""

    def __init__(self, name: str, provider: str) -> None:
        self.name = name
        self.provider = provider
        self._impl: F | None = None

    def fill(self, impl: F) -> F:
        self._impl = impl
        return impl

    @property
    def impl(self) -> F:
        """The implementation, importing its provider on first use."""
        if self._impl is None:
            importlib.import_module(self.provider)
        if self._impl is None:
            raise RuntimeError(f"{self.name} is not available: importing {self.provider} did not fill it")
        return self._impl

    if TYPE_CHECKING:
        __call__: F
    else:
        def __call__(self, *args: Any, **kwargs: Any) -> Any:
            return self.impl(*args, **kwargs)

    def __repr__(self) -> str:
        return f"Action({self.name} from {self.provider})"


# The signatures. A parameter typed Any is the model object whose method calls the slot (its name says
# which): the model's classes import this module, so naming them here would close an import circle.
# Where keyword arguments are passed, a Protocol keeps their names and defaults.

class ReproKernel(Protocol):
    def __call__(self, kernel: Any, path: Path, *, inputs: str = ..., source: str | None = ...,
                 overwrite: bool = ...) -> Path: ...


class ReproGraph(Protocol):
    def __call__(self, graph: Any, path: Path, *, overwrite: bool = ...) -> Path: ...


class ReproCompilation(Protocol):
    def __call__(self, c: Any, directory: Path, *, overwrite: bool = ...) -> list[Path]: ...


class EditKernel(Protocol):
    def __call__(self, kernel: Any, new_source: str, *, bench: bool = ...) -> Any: ...


class ProfileRun(Protocol):
    def __call__(self, c: Any, runs: int = ..., warmup: int = ...) -> Any: ...


class CountersRun(Protocol):
    def __call__(self, c: Any, kernels: Any = ..., top: int = ...) -> Any: ...


class TraceJson(Protocol):
    def __call__(self, c: Any, lazy: bool = ..., packed_parts: bool = ..., raw_irs: bool = ...) -> dict[str, Any]: ...


class CompleteKernelIRs(Protocol):
    def __call__(self, *compilations: Any) -> None: ...


class CudaGraphWhatIf(Protocol):
    def __call__(self, c: Any, *, fix: str | None = ..., input: int | None = ..., measure: bool = ...) -> Any: ...


class ShowView(Protocol):
    def __call__(self, c: Any, full: bool = ...) -> Any: ...


ToJson = Callable[[Any], dict[str, Any]]  # a report -> its JSON dict
WriteFile = Callable[[Any, Path], Path]  # a report, a path -> the path written
Widget = Callable[[Callable[[], Any]], Any]  # a thunk of what it shows -> the widget
WriteHtml = Callable[[Any, str | Path], Path]  # what it shows, a path -> the page written

# runs/: what runs the live program
run_compiled: Action[Callable[[Any, tuple[Any, ...], dict[str, Any]], Any]] = Action("c.run()", "compiler.runs.replay")
bench_kernel: Action[Callable[[Any, Any], Any]] = Action("k.bench()", "compiler.runs.bench")
edit_kernel: Action[EditKernel] = Action("k.edit()", "compiler.runs.edit")
repro_kernel: Action[ReproKernel] = Action("k.repro()", "compiler.runs.repro")
repro_graph: Action[ReproGraph] = Action("g.repro()", "compiler.runs.graph_repro")
repro_compilation: Action[ReproCompilation] = Action("c.repro()", "compiler.runs.graph_repro")
with_edits: Action[Callable[[Any, Mapping[Any, str]], ContextManager[list[str]]]] = Action(
    "c.with_edits()", "compiler.runs.substitution")
bench_compilation: Action[Callable[[Any], Any]] = Action("c.bench()", "compiler.runs.bench")
profile: Action[ProfileRun] = Action("c.profile()", "compiler.runs.profile")
check_numerics: Action[Callable[[Any, str, float | None, float | None, Mapping[Any, str] | None], Any]] = Action(
    "c.check_numerics()", "compiler.runs.numerics")
check_determinism: Action[Callable[[Any, int], Any]] = Action("c.check_determinism()", "compiler.runs.determinism")
measure_memory: Action[Callable[[Any], Any]] = Action("g.memory.measure()", "compiler.runs.memory_measure")
counters: Action[CountersRun] = Action("c.counters()", "compiler.runs.counters")
what_if: Action[Callable[..., Any]] = Action("c.what_if()", "compiler.pipeline.what_if")  # keywords: the edit
measure_cudagraphs: Action[Callable[[Any, int, int], Any]] = Action("c.cudagraphs.measure()",
                                                                  "compiler.runs.cudagraph_time")
cudagraph_what_if: Action[CudaGraphWhatIf] = Action("c.cudagraphs.what_if()", "compiler.pipeline.cudagraph_what_if")
fusion_report: Action[Callable[..., Any]] = Action("c.fusion_report()", "compiler.sweeps.fusion_report")
compare_outputs: Action[Callable[[Any, Any], Any]] = Action("comparing two live compilations' outputs",
                                                            "compiler.runs.diff")
# pipeline/: what a capture left for first use
build_kernel_ir: Action[Callable[[Any], Any]] = Action("k.ir (disassembly and line maps)", "compiler.pipeline.assemble")
# io/: JSON and files
trace_json: Action[TraceJson] = Action("c.to_json()", "compiler.io.trace")
write_json: Action[Callable[[Any, str | Path], Path]] = Action("save()", "compiler.io.files")
complete_kernel_irs: Action[CompleteKernelIRs] = Action("building every kernel's IR", "compiler.io.trace")
stored_graph_json: Action[Callable[[Any], dict[str, Any]]] = Action("storing a graph for warm captures",
                                                                    "compiler.io.trace")
stored_graph: Action[Callable[[dict[str, Any]], Any]] = Action("serving a graph to a warm capture", "compiler.io.trace")
traceset_json: Action[ToJson] = Action("ts.to_json()", "compiler.io.traceset")
rank_summary_json: Action[ToJson] = Action("RankSummary.to_json()", "compiler.io.traceset")
chrome_trace: Action[WriteFile] = Action("Profile.chrome_trace()", "compiler.io.chrome_trace")
counters_json: Action[ToJson] = Action("CountersReport.to_json()", "compiler.io.reports")
compile_time_json: Action[ToJson] = Action("CompileTimeReport.to_json()", "compiler.io.compile_time")
compile_time_chrome_trace: Action[WriteFile] = Action("CompileTimeReport.to_chrome_trace()", "compiler.io.compile_time")
diff_json: Action[ToJson] = Action("Diff.to_json()", "compiler.io.diff")
# saved files of a schema io/ does not own (``files.load`` opens them): schema -> the action that loads one
loaders: dict[str, Action[Callable[[Any, str], Any]]] = {
    SWEEP_SCHEMA: Action("loading a saved Sweep", "compiler.sweeps.result"),
}
# render/: summaries that are not one object's rendering
html_summary: Action[Callable[[Any], str]] = Action("the compilation summary", "compiler.render.core")
plain_text: Action[Callable[[Any], str]] = Action("str() of a report: its terminal rendering as text",
                                                  "compiler.render.text")

# explorer/: the interactive views, filled by the explorer package (imported on first use, so a model
# object shows its widget or writes its page whether or not the user imported explorer)
widget: Action[Widget] = Action("the explorer widget", "explorer")
write_html: Action[WriteHtml] = Action("c.to_html()", "explorer")
traceset_widget: Action[Widget] = Action("the TraceSet widget", "explorer")
write_traceset_html: Action[WriteHtml] = Action("ts.to_html()", "explorer")
sweep_widget: Action[Widget] = Action("the Sweep widget", "explorer")
write_sweep_html: Action[Callable[[Any, str | Path | None], Any]] = Action("sweep.to_html()", "explorer")
show: Action[ShowView] = Action("c.show()", "explorer")
watch_widget: Action[Widget] = Action("the live watch widget", "explorer")  # a thunk of the live Watch

def widget_bundle(widget: Action[Widget], view: Callable[[], Any], include: Any,
                  exclude: Any, mime: str, text: Callable[[], str]) -> Any:
    """The mimebundle of ``widget`` over ``view()`` (built by the widget, only once its package imported),
    with ``text()`` under ``mime`` when the widget gave none; None when the widget could not render (no
    widget package installed, say: the caller then falls back to static HTML)."""
    try:
        bundle = widget(view)._repr_mimebundle_(include=include, exclude=exclude)
    except Exception:
        return None
    if bundle is not None:
        data = bundle[0] if isinstance(bundle, tuple) else bundle
        data.setdefault(mime, text())
    return bundle
