"""SessionView: binds one ExplorerWidget to a Session (toggle panel, history picker, live diff).

The widget only asks ("switch deterministic on", "show entry 3"); this controller answers: it finds
the configuration in the session's cache or recompiles the same code on the same inputs, then pushes
the new payload, the diff against what was shown before and a status line. A recompile that fails
puts the error in the status line and leaves the last good view in place.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from compiler import CompileError, ToggleError, diff
from compiler.api import TRACE_SCHEMA, TRACE_VERSION

from . import settings


REPRO_DIR = Path("repros")  # where the view's "reproducer" button writes, under the working directory


class SessionView:
    def __init__(self, session: Any, entry: Any = None, *, follow: bool = False) -> None:
        from widgets import ExplorerWidget

        self.session = session
        self.entry = entry
        self.last_seconds = 0.0  # wall time of the last toggle/select, request to updated view
        self.last_from_cache = False
        self._requesting = False  # a toggle change of this view is compiling (its entry is shown by _switch)
        empty = {"schema": TRACE_SCHEMA, "version": TRACE_VERSION, "meta": {}, "graphs": []}
        self.widget = ExplorerWidget(entry.compilation.trace_view() if entry else empty)
        self.widget.on_action(self.handle)
        self._refresh_bar()
        self.follow = follow
        if follow:
            session.on_new_entry(self._on_new_entry)

    # --- requests from the browser ---------------------------------------------------------
    def handle(self, action: dict[str, Any]) -> None:
        if action.get("type") == "toggle":
            self.set_toggle(str(action.get("name")), action.get("value"))
        elif action.get("type") == "select":
            self.show(int(action.get("index", -1)))
        elif action.get("type") == "repro":
            self.write_repro()

    def write_repro(self) -> Path | None:
        """The "reproducer" button: a standalone script of the selected kernel (``k.repro``), or of the
        graph shown when no kernel is selected (``g.repro``), under ``repros/<compilation>/``; the
        status line says where it went, or why there is none (an extern kernel, a loaded trace)."""
        if self.entry is None:
            return None
        c = self.entry.compilation
        selection = self.widget.selection or {}
        try:
            graph = c.graph(self.widget.graph) if self.widget.graph else c.graphs[0]
            folder = REPRO_DIR / self.entry.name
            if selection.get("kind") in ("kernel", "kernel_line"):
                kernel = next((k for k in graph.kernels if k.id == selection.get("id")), None)
                if kernel is None:
                    raise KeyError(f"kernel {selection.get('id')!r} is not in graph {graph.id}")
                path = kernel.repro(folder / f"{graph.id}_{kernel.id}.py", overwrite=True)
            else:
                path = graph.repro(folder / f"{graph.id}.py", overwrite=True)
        except (ValueError, RuntimeError, KeyError, IndexError) as error:
            message = error.args[0] if isinstance(error, KeyError) and error.args else error
            self.widget.status = {"state": "error", "message": f"no reproducer: {message}"}
            return None
        self.widget.status = {"state": "idle", "message": f"wrote {path} and its inputs (run: python {path})"}
        return path

    def set_toggle(self, name: str, value: Any) -> Any:
        """Switch one toggle: served from the session when compiled before, else recompiled."""
        if self.entry is None:
            return None
        started = time.perf_counter()
        config = dict(self.entry.config)
        config[name] = value
        self.widget.status = {"state": "busy", "message": f"compiling {self.entry.name} with {name}={value}…"}
        self._requesting = True
        try:
            new, cached = self.session.with_config(self.entry, config)
        except (CompileError, ToggleError, RuntimeError) as error:
            stage = getattr(error, "stage", None)
            where = f" (failed during {stage})" if stage else ""
            self.widget.status = {"state": "error", "message": f"{name}={value} did not compile{where}: {error}"}
            self._refresh_bar(keep_status=True)
            return None
        finally:
            self._requesting = False
        self._switch(new, cached=cached, started=started)
        return new

    def show(self, index: int) -> None:
        """Show entry ``index`` of the session (the history picker), with the diff from the one shown before."""
        started = time.perf_counter()
        self._switch(self.session[index], cached=True, started=started)

    # --- pushing ---------------------------------------------------------------------------
    def _switch(self, new: Any, *, cached: bool, started: float) -> None:
        previous, self.entry = self.entry, new
        d = diff(previous.compilation, new.compilation) if previous is not None and previous is not new else None
        # one message to the browser: sent trait by trait, a redraw between them showed the new status
        # beside the old toggles (a box just unticked, ticked again until its own message came)
        with self.widget.hold_sync(), self.widget.hold_trait_notifications():
            self.widget.show_payload(new.compilation.trace_view())
            self.widget.diff = d.to_json() if d is not None else {}
            source = "from the session cache" if cached else f"recompiled in {new.seconds:.2f} s"
            self.last_seconds = time.perf_counter() - started
            self.last_from_cache = cached
            self.widget.status = {"state": "idle", "message": f"{new.label}: {source} ({self.last_seconds:.3f} s to this view)"}
            self._refresh_bar(keep_status=True)

    def _refresh_bar(self, keep_status: bool = False) -> None:
        self.widget.toggles = settings.toggle_states(self.entry.config if self.entry else {})
        self.widget.history = [{"index": e.index, "label": e.label} for e in self.session.entries]
        self.widget.current = self.entry.index if self.entry else -1
        if not keep_status:
            self.widget.status = {"state": "idle", "message": self.entry.label if self.entry else "no compilation yet"}

    def _on_new_entry(self, entry: Any) -> None:
        if self._requesting:
            return  # our own recompile: set_toggle shows it
        self._switch(entry, cached=True, started=time.perf_counter())

    def close(self) -> None:
        if self.follow:
            self.session.on_new_entry(self._on_new_entry, remove=True)
        self.widget.close()

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> Any:
        return self.widget._repr_mimebundle_(include=include, exclude=exclude)

    def __repr__(self) -> str:
        return f"SessionView({self.entry.label if self.entry else 'empty'}, {self.session!r})"
