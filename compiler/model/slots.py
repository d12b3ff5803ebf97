"""The model's registry: where the rooms above plug renderings, views and actions into the model.

The model's classes keep their convenience methods (``c.profile()``, ``c.save()``, ``k.bench()``,
rich/HTML display) but import nothing above the model to serve them: each method calls a slot here.
``compiler/render`` registers renderings with the two ``singledispatch`` functions, ``compiler/runs``
and ``compiler/io`` fill the action slots, and ``explorer`` registers the widget views; the top of the
package (``compiler/__init__.py``) imports those rooms once, so every slot is filled whenever
``compiler`` is imported.
"""

from __future__ import annotations

import html
from functools import singledispatch
from typing import Any, Callable, Generic, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


@singledispatch
def rich_of(obj: Any) -> Any:
    """The rich renderable of ``obj`` (``compiler/render`` registers one per class)."""
    return repr(obj)


@singledispatch
def html_of(obj: Any) -> str:
    """The notebook HTML of ``obj`` (``compiler/render`` registers one per class)."""
    return f"<pre>{html.escape(repr(obj))}</pre>"


class Rendered:
    """Mixin: rich and HTML renderings come from the ``rich_of`` / ``html_of`` registry."""

    __slots__ = ()

    def __rich__(self) -> Any:
        return rich_of(self)

    def _repr_html_(self) -> str:
        return html_of(self)


class Action(Generic[F]):
    """One named operation the model offers but a room above implements (``fill`` registers it)."""

    def __init__(self, name: str, room: str) -> None:
        self.name = name
        self.room = room
        self._impl: F | None = None

    def fill(self, impl: F) -> F:
        self._impl = impl
        return impl

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self._impl is None:
            raise RuntimeError(f"{self.name} is not available: compiler.{self.room} was not imported "
                               f"(import compiler, which imports every room)")
        return self._impl(*args, **kwargs)

    def __repr__(self) -> str:
        return f"Action({self.name} from compiler.{self.room})"


# runs/: what runs the live program
run_compiled: Action[Callable[..., Any]] = Action("c.run()", "runs")
bench_kernel: Action[Callable[..., Any]] = Action("k.bench()", "runs")
edit_kernel: Action[Callable[..., Any]] = Action("k.edit()", "runs")
repro_kernel: Action[Callable[..., Any]] = Action("k.repro()", "runs")
repro_graph: Action[Callable[..., Any]] = Action("g.repro()", "runs")
repro_compilation: Action[Callable[..., Any]] = Action("c.repro()", "runs")
with_edits: Action[Callable[..., Any]] = Action("c.with_edits()", "runs")
bench_compilation: Action[Callable[..., Any]] = Action("c.bench()", "runs")
profile: Action[Callable[..., Any]] = Action("c.profile()", "runs")
check_numerics: Action[Callable[..., Any]] = Action("c.check_numerics()", "runs")
check_determinism: Action[Callable[..., Any]] = Action("c.check_determinism()", "runs")
measure_memory: Action[Callable[..., Any]] = Action("g.memory.measure()", "runs")
counters: Action[Callable[..., Any]] = Action("c.counters()", "runs")
# pipeline/: what a capture left for first use
build_kernel_ir: Action[Callable[..., Any]] = Action("k.ir (disassembly and line maps)", "build")
# io/: JSON and files
trace_json: Action[Callable[..., Any]] = Action("c.to_json()", "io")
write_json: Action[Callable[..., Any]] = Action("save()", "io")
complete_kernel_irs: Action[Callable[..., Any]] = Action("building every kernel's IR", "io")
traceset_json: Action[Callable[..., Any]] = Action("ts.to_json()", "io")
rank_summary_json: Action[Callable[..., Any]] = Action("RankSummary.to_json()", "io")
chrome_trace: Action[Callable[..., Any]] = Action("Profile.chrome_trace()", "io")
counters_json: Action[Callable[..., Any]] = Action("CountersReport.to_json()", "io")
compile_time_json: Action[Callable[..., Any]] = Action("CompileTimeReport.to_json()", "io")
compile_time_chrome_trace: Action[Callable[..., Any]] = Action("CompileTimeReport.to_chrome_trace()", "io")
# render/: summaries that are not one object's rendering
html_summary: Action[Callable[..., str]] = Action("the compilation summary", "render")

# widgets: explorer registers the interactive views ("widget", "html", "traceset_widget", "traceset_html")
_renderers: dict[str, Callable[..., Any]] = {}


def register(kind: str, view: Callable[..., Any]) -> None:
    _renderers[kind] = view


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
