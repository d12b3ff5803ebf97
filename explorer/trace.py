"""``%%compile --trace``: run a cell as ordinary Python and capture each torch.compile'd call it makes.

For code that already wraps its model in torch.compile. While the cell runs, every torch.compile
wrapper in the notebook namespace, and every one the cell creates, is a ``_Traced`` stand-in: the
first call with new input shapes is captured by ``compiler.capture`` (same function, same inputs,
the cell's toggles) and recorded in the session; later calls with those shapes run the captured
compiled function. After the cell, the namespace holds real torch.compile wrappers again.
"""

from __future__ import annotations

import time
from typing import Any

from compiler import CompileError, capture
from compiler.api import compile_redirected, original_of, tensor_specs

from .cell_status import CellFailed, StatusLine, error_summary, quiet_capture_warnings
from .session import Entry

_MODES_WITH_AUTOTUNE = ("max-autotune", "max-autotune-no-cudagraphs")


class _Traced:
    """Stands in for one torch.compile wrapper during a traced cell."""

    def __init__(self, tracer: "_Tracer", original: Any, options: dict[str, Any], wrapper: Any = None) -> None:
        self._tracer = tracer
        self._original = original
        self._options = options
        self._wrapper = wrapper  # the real torch.compile wrapper, made on demand
        self._compiled: dict[str, Any] = {}

    def real(self) -> Any:
        if self._wrapper is None:
            self._wrapper = self._tracer.torch_compile(self._original, **self._options)
        return self._wrapper

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        key = repr(tensor_specs((args, kwargs)))
        if key in self._compiled:
            return self._compiled[key].recompile(*args, **kwargs)
        compilation = self._tracer.capture(self._original, self._options, args, kwargs)
        self._compiled[key] = compilation
        return compilation.outputs

    def __getattr__(self, name: str) -> Any:
        return getattr(self._original, name)


class _Tracer:
    def __init__(self, magics: Any, name: str, config: dict[str, Any], dynamic: bool) -> None:
        self.magics = magics
        self.name = name
        self.config = config
        self.dynamic = dynamic
        self.entries: list[Entry] = []
        self.redirect: Any = None  # compile_redirected's Redirect while the cell runs

    def torch_compile(self, fn: Any, **options: Any) -> Any:
        return self.redirect.original(fn, **options)

    def config_for(self, options: dict[str, Any]) -> dict[str, Any]:
        config = dict(options.get("options") or {})
        if options.get("mode") in _MODES_WITH_AUTOTUNE:
            config["max_autotune"] = True
        config.update(self.config)  # the magic's flags win
        return config

    def capture(self, original: Any, options: dict[str, Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        config = self.config_for(options)
        dynamic = True if self.dynamic else options.get("dynamic", False)
        label = getattr(original, "__qualname__", type(original).__name__)

        def recompile(new_config: dict[str, Any]) -> Any:
            with quiet_capture_warnings(), self.redirect.paused():
                return capture(original, *args, config=new_config, dynamic=dynamic, kwargs=kwargs)

        started = time.perf_counter()
        compilation = recompile(config)
        session = self.magics.session
        code = f"{self.name}:{label}:{id(original):#x}"
        self.entries.append(session.add(compilation, code=code, config=config, dynamic=dynamic, recompile=recompile,
                                        name=f"{self.name}.{label}", origin="trace",
                                        seconds=time.perf_counter() - started))
        return compilation


def run_traced(magics: Any, source: str, name: str, config: dict[str, Any], args: Any) -> list[Entry]:
    """Run ``source`` in the notebook with torch.compile'd calls captured; the entries recorded."""
    ns = magics.shell.user_ns
    tracer = _Tracer(magics, name, config, args.dynamic)
    progress = StatusLine(f"running {name}, capturing its torch.compile'd calls…", args.quiet)
    swapped = {}
    for key, value in list(ns.items()):
        if key.startswith("_") or isinstance(value, type):
            continue
        original = original_of(value)
        if original is not None:
            swapped[key] = value
            ns[key] = _Traced(tracer, original, {}, wrapper=value)
    try:
        code = compile(source, f"<%%compile --trace {name}>", "exec")
    except SyntaxError as error:
        ns.update(swapped)
        raise CellFailed("parse", f"SyntaxError at line {error.lineno}: {error.msg}") from None
    try:
        with compile_redirected(lambda fn, options: _Traced(tracer, fn, options)) as redirect:
            tracer.redirect = redirect
            exec(code, ns)  # noqa: S102 - the user's own cell, as IPython would run it
    except CompileError as error:
        raise CellFailed(error.stage, error_summary(error)) from None
    finally:
        for key, value in list(ns.items()):
            if isinstance(value, _Traced):
                ns[key] = swapped[key] if key in swapped else value.real()
    if not tracer.entries:
        progress.update(f"{name}: the cell made no torch.compile'd call")
        return []
    if not args.quiet:
        views = [magics.session.view(e.index) for e in tracer.entries]
        magics.views.extend(views)
        progress.done(views[0].widget)
        for view in views[1:]:
            from IPython.display import display

            display(view.widget)
    return tracer.entries

