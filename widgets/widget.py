"""ExplorerWidget: the explorer view as an anywidget.

Only a summary of the trace is a synced trait (header, graph list, stage counts: a few kB for any
size of model). The browser asks for everything else when a view needs it (``{"type": "part", "key",
"id"}``) and gets it back as one binary buffer of UTF-8 JSON: no nested trait to diff, copy and
re-serialize, and a stage nobody opens is never sent (see parts.py).

The state a notebook may read or drive stays small and synced both ways: which graph, which stage,
and the selection ({"kind": ..., "id": ..., "line": ...}).

A session (explorer.Session) drives more of it: the toggle panel (`toggles`), the history picker
(`history`, `current`), a status line (`status`: busy while recompiling, or the error of a failed
recompile) and the diff against the previous compilation (`diff`). The browser asks for changes with
custom messages ({"type": "toggle", "name", "value"} / {"type": "select", "index"} / {"type": "repro"}) that `on_action`
hands to Python; the widget itself never compiles.

The one exception is a "what if" asked in the fused view: given the live compilation (or a ``what_if``
callable), the widget sets ``what_if_ready`` and answers ``{"type": "what_if", "group", "graph", "measure", "id"}``
with ``c.what_if(unfuse=group, graph=graph, measure=measure)`` cut down to JSON (what_if_payload.py), or the refusal's message. The
compilation shown is never changed: the comparison is drawn beside the group.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import anywidget
import traitlets

from compiler.model.contract import (SELECTION_KINDS, STAGES, WIDGET_ACTIONS, PartReply, PartRequest, ReproAction,
                                     SelectAction, ToggleAction, WhatIfRequest)

from ._bundle import BUNDLE_CSS, BUNDLE_JS
from .html import write_html
from .parts import PartError, TraceParts
from .what_if_payload import what_if_error, what_if_payload

WhatIfOf = Callable[[str, str, bool], Any]  # (group, graph id, measure) -> c.what_if(unfuse=group, graph=, measure=)


def what_if_of(payload: Any) -> WhatIfOf | None:
    """``c.what_if`` of a live compilation given as the payload; None for a trace dict (nothing to recompile)."""
    method = getattr(payload, "what_if", None)
    if not callable(method):
        return None
    return lambda group, graph, measure: method(unfuse=group, graph=graph, measure=measure)


class ExplorerWidget(anywidget.AnyWidget):
    """Linked views of every stage of one compilation.

    >>> w = ExplorerWidget(trace)            # trace dict, or a Compilation
    >>> w.stage = "kernels"                   # switch the stage shown
    >>> w.select("fx", "matmul")              # what a click on that FX node does
    >>> w.selection
    {'kind': 'fx', 'id': 'matmul'}
    """

    _esm = BUNDLE_JS
    _css = BUNDLE_CSS

    summary = traitlets.Dict().tag(sync=True)  # parts.TraceParts.summary(): what the first view needs
    revision = traitlets.Int(0).tag(sync=True)  # bumped when another trace is shown: parts are fetched anew
    graph = traitlets.Unicode("").tag(sync=True)
    stage = traitlets.Enum(STAGES, default_value="fx").tag(sync=True)
    selection = traitlets.Dict().tag(sync=True)
    toggles = traitlets.List().tag(sync=True)  # [{name, description, available, default, value}]
    history = traitlets.List().tag(sync=True)  # [{index, label}]
    current = traitlets.Int(-1).tag(sync=True)  # index (in history) of the compilation shown
    status = traitlets.Dict().tag(sync=True)  # {"state": "idle" | "busy" | "error", "message": str}
    diff = traitlets.Dict().tag(sync=True)  # explorer.Diff.to_json() against the previous compilation
    what_if_ready = traitlets.Bool(False).tag(sync=True)  # the fused view offers "unfuse" (Python can recompile)

    def __init__(self, payload: Any, *, graph: str | None = None, stage: str = "fx", what_if: WhatIfOf | None = None,
                 **kwargs: Any) -> None:
        self._what_if = what_if or what_if_of(payload)
        self._parts = TraceParts(payload)
        summary = self._parts.summary()
        ids = [g["id"] for g in summary["graphs"]]
        if graph is not None and graph not in ids:
            raise ValueError(f"No graph {graph!r} in this trace; graphs are {ids}")
        self._actions: list[Any] = []
        super().__init__(summary=summary, graph=graph or (ids[0] if ids else ""), stage=stage,
                         what_if_ready=self._what_if is not None, **kwargs)
        self.on_msg(self._on_message)

    @property
    def trace(self) -> Any:
        """The trace shown (a dict, or a mapping that serializes graphs as they are read)."""
        return self._parts.trace

    def _graph_ids(self) -> list[str]:
        return [g["id"] for g in self.summary.get("graphs", [])]

    @traitlets.validate("graph")
    def _check_graph(self, proposal: Any) -> str:
        ids = self._graph_ids()
        if ids and proposal["value"] not in ids:
            raise traitlets.TraitError(f"No graph {proposal['value']!r} in this trace; graphs are {ids}")
        return proposal["value"]

    @traitlets.validate("selection")
    def _check_selection(self, proposal: Any) -> dict:
        sel = proposal["value"]
        if sel and sel.get("kind") not in SELECTION_KINDS:
            raise traitlets.TraitError(f"Selection kind must be one of {', '.join(SELECTION_KINDS)}; got {sel.get('kind')!r}")
        return sel

    # --- the browser's requests ---------------------------------------------------------------
    def _on_message(self, _widget: Any, content: Any, _buffers: Any) -> None:
        """A browser request, by its ``type`` (compiler/model/contract.py declares each); others are ignored."""
        handler = self._HANDLERS.get(content.get("type")) if isinstance(content, dict) else None
        if handler is not None:
            handler(self, content)

    def _on_part(self, request: PartRequest) -> None:
        self.send_part(str(request.get("key", "")), request.get("id"), request.get("revision"))

    def _on_what_if(self, request: WhatIfRequest) -> None:
        self.send_what_if(str(request.get("group", "")), str(request.get("graph", "")), bool(request.get("measure")),
                          request.get("id"))

    def _on_action(self, action: ToggleAction | SelectAction | ReproAction) -> None:
        for callback in list(self._actions):
            callback(action)

    _HANDLERS: dict[str, Callable[[Any, Any], None]] = {
        "part": _on_part, "what_if": _on_what_if, **dict.fromkeys(WIDGET_ACTIONS, _on_action)}

    def send_part(self, key: str, request: Any = None, revision: Any = None) -> None:
        """Answer a part request: the part as one buffer of UTF-8 JSON, or an error saying what is missing."""
        reply: PartReply = {"type": "part", "key": key, "id": request, "revision": self.revision}
        if revision is not None and revision != self.revision:
            reply["error"] = "the widget shows another compilation now"
            self.send(reply)
            return
        try:
            data = self._parts.encoded(key)
        except PartError as error:
            reply["error"] = str(error)
            self.send(reply)
            return
        self.send(reply, buffers=[data])

    def send_what_if(self, group: str, graph: str, measure: bool = False, request: Any = None) -> None:
        """Answer an "unfuse" press: recompile with ``group`` unfused and send the comparison, or the message
        of the refusal (WhatIfError) or failure; the compilation shown stays as it is either way."""
        reply: dict[str, Any] = {"type": "what_if", "id": request, "graph": graph}  # a WhatIfReply once answered
        if self._what_if is None:
            reply.update(what_if_error(ValueError("this view shows a trace, not a live compilation: what_if "
                                                  "needs the live function and inputs"), group))
        else:
            try:
                reply.update(what_if_payload(self._what_if(group, graph, measure), group))
            except Exception as error:  # a refusal or a failed recompile: said beside the group
                reply.update(what_if_error(error, group))
        self.send(reply)

    def show_payload(self, payload: Any, what_if: WhatIfOf | None = None) -> None:
        """Replace the compilation shown, keeping the stage where it has one (the Export stage goes back to
        the FX graph for a JIT compilation); the selection is dropped (ids are per trace). "What if" follows
        the new payload (a live compilation, or ``what_if``)."""
        self._what_if = what_if or what_if_of(payload)
        self._parts = TraceParts(payload)
        summary = self._parts.summary()
        ids = [g["id"] for g in summary["graphs"]]
        graph = self.graph if self.graph in ids else (ids[0] if ids else "")
        with self.hold_trait_notifications():
            self.selection = {}
            self.summary = summary
            self.what_if_ready = self._what_if is not None
            self.graph = graph
            if self.stage == "export" and "export" not in summary:
                self.stage = "fx"
            self.revision += 1

    def on_action(self, callback: Any) -> None:
        """Call ``callback(action)`` for each request the browser sends (toggle changes, history picks)."""
        self._actions.append(callback)

    def select(self, kind: str, id: str, line: int | None = None) -> None:
        """Select an item of the current graph, as a click in the view would.

        kind: fx | post_grad | loop_ir | fused | kernel | kernel_line | wrapper_line | user_line | culprit;
        `line` is required for kernel_line (with the kernel id), wrapper_line and user_line (with the file);
        a culprit's id is the index of a level of the bisect's culprit (``BisectResult.view()``)."""
        if kind == "culprit":
            levels = self.summary.get("culprits") or []
            if not str(id).isdigit() or int(id) >= len(levels):
                raise ValueError(f"this view has {len(levels)} culprit levels (0 to {len(levels) - 1}); got {id!r}"
                                 if levels else "this view shows no bisect's culprit: open it with r.view()")
        if kind in ("kernel_line", "wrapper_line", "user_line") and line is None:
            raise ValueError(f"Selecting a {kind} needs line=")
        sel: dict[str, Any] = {"kind": kind, "id": str(id)}
        if line is not None:
            sel["line"] = int(line)
        self.selection = sel

    def clear_selection(self) -> None:
        self.selection = {}

    def to_html(self, path: str | Path) -> Path:
        """Write the same view as one self-contained HTML file."""
        return write_html(self._parts.trace, path)

    def __repr__(self) -> str:
        meta = self.summary.get("meta", {})
        return (
            f"ExplorerWidget(function={meta.get('function')!r}, graphs={len(self.summary.get('graphs', []))}, "
            f"graph={self.graph!r}, stage={self.stage!r}, selection={self.selection or None})"
        )
