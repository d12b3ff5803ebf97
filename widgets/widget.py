"""ExplorerWidget: the explorer view as an anywidget.

The trace goes to the browser once, in the `payload` trait. The state a notebook
may read or drive stays small and synced both ways: which graph, which stage,
and the selection ({"kind": ..., "id": ..., "line": ...}).

A session (explorer.Session) drives more of it: the toggle panel (`toggles`),
the history picker (`history`, `current`), a status line (`status`: busy
while recompiling, or the error of a failed recompile) and the diff against
the previous compilation (`diff`). The browser asks for changes with custom
messages ({"type": "toggle", "name", "value"} / {"type": "select", "index"})
that `on_action` hands to Python; the widget itself never compiles.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anywidget
import traitlets

from ._bundle import BUNDLE_CSS, BUNDLE_JS
from .html import write_html
from .payload import SELECTION_KINDS, STAGES, graph_ids, payload_for


class ExplorerWidget(anywidget.AnyWidget):
    """Linked views of every stage of one compilation.

    >>> w = ExplorerWidget(trace)            # trace dict, payload, or Compilation
    >>> w.stage = "kernels"                   # switch the stage shown
    >>> w.select("fx", "matmul")              # what a click on that FX node does
    >>> w.selection
    {'kind': 'fx', 'id': 'matmul'}
    """

    _esm = BUNDLE_JS
    _css = BUNDLE_CSS

    payload = traitlets.Dict().tag(sync=True)
    graph = traitlets.Unicode("").tag(sync=True)
    stage = traitlets.Enum(STAGES, default_value="fx").tag(sync=True)
    selection = traitlets.Dict().tag(sync=True)
    toggles = traitlets.List().tag(sync=True)  # [{name, description, available, default, value}]
    history = traitlets.List().tag(sync=True)  # [{index, label}]
    current = traitlets.Int(-1).tag(sync=True)  # index (in history) of the compilation shown
    status = traitlets.Dict().tag(sync=True)  # {"state": "idle" | "busy" | "error", "message": str}
    diff = traitlets.Dict().tag(sync=True)  # explorer.Diff.to_json() against the previous compilation

    def __init__(self, payload: Any, *, graph: str | None = None, stage: str = "fx", **kwargs: Any) -> None:
        data = payload_for(payload)
        ids = graph_ids(data)
        if graph is not None and graph not in ids:
            raise ValueError(f"No graph {graph!r} in this trace; graphs are {ids}")
        super().__init__(payload=data, graph=graph or (ids[0] if ids else ""), stage=stage, **kwargs)

    @traitlets.validate("graph")
    def _check_graph(self, proposal: Any) -> str:
        ids = graph_ids(self.payload)
        if ids and proposal["value"] not in ids:
            raise traitlets.TraitError(f"No graph {proposal['value']!r} in this trace; graphs are {ids}")
        return proposal["value"]

    @traitlets.validate("selection")
    def _check_selection(self, proposal: Any) -> dict:
        sel = proposal["value"]
        if sel and sel.get("kind") not in SELECTION_KINDS:
            raise traitlets.TraitError(f"Selection kind must be one of {', '.join(SELECTION_KINDS)}; got {sel.get('kind')!r}")
        return sel

    def show_payload(self, payload: Any) -> None:
        """Replace the compilation shown, keeping the stage; the selection is dropped (ids are per trace)."""
        data = payload_for(payload)
        ids = graph_ids(data)
        graph = self.graph if self.graph in ids else (ids[0] if ids else "")
        with self.hold_trait_notifications():
            self.selection = {}
            self.payload = data
            self.graph = graph

    def on_action(self, callback: Any) -> None:
        """Call ``callback(action)`` for each request the browser sends (toggle changes, history picks)."""

        def handle(_widget: Any, content: Any, _buffers: Any) -> None:
            if isinstance(content, dict) and content.get("type") in ("toggle", "select"):
                callback(content)

        self.on_msg(handle)

    def select(self, kind: str, id: str, line: int | None = None) -> None:
        """Select an item of the current graph, as a click in the view would.

        kind: fx | post_grad | loop_ir | fused | kernel | kernel_line | wrapper_line | user_line;
        `line` is required for kernel_line (with the kernel id), wrapper_line and user_line (with the file).
        """
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
        return write_html(self.payload, path)

    def __repr__(self) -> str:
        meta = self.payload.get("meta", {})
        return (
            f"ExplorerWidget(function={meta.get('function')!r}, graphs={len(self.payload.get('graphs', []))}, "
            f"graph={self.graph!r}, stage={self.stage!r}, selection={self.selection or None})"
        )
