"""TraceSetWidget: the explorer view of a multi-rank TraceSet, one compilation at a time.

The synced ``traceset`` trait is only the TraceSet's summary (ranks, their compiles, where they
diverge; see traceset.py). Picking a rank and compile id in the browser sets ``pick``; the widget
then builds that one compilation (read from its rank's log on first use) and shows it through the
ordinary ExplorerWidget machinery: a new revision whose parts the browser fetches as it needs them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import traitlets

from .traceset import TraceSetParts
from .traceset_html import write_traceset_html
from .widget import ExplorerWidget


class TraceSetWidget(ExplorerWidget):
    """A rank picker and the cross-rank divergence above the explorer view of the picked compilation.

    >>> w = TraceSetWidget(explorer.load_trace("/tmp/trace_dir"))
    >>> w.show_compile(1, "0/1")              # what picking rank 1, compile 0/1 does
    >>> w.pick
    {'rank': '1', 'compile_id': '0/1'}
    """

    traceset = traitlets.Dict().tag(sync=True)  # TraceSetParts.summary()
    pick = traitlets.Dict().tag(sync=True)  # {"rank", "compile_id"} of the compilation shown

    def __init__(self, traceset: Any, *, rank: Any = None, compile_id: str | None = None, **kwargs: Any) -> None:
        self._set_parts = TraceSetParts(traceset)
        first = self._set_parts.first()
        if first is None:
            raise ValueError(f"No rank of {self._set_parts.summary().get('path') or 'this TraceSet'} compiled anything")
        if rank is not None or compile_id is not None:
            first = (str(rank if rank is not None else first[0]), str(compile_id if compile_id is not None else first[1]))
        key = self._set_parts.key(*first)
        self._source = traceset
        self._shown = key  # the part key of the compilation on screen
        super().__init__(self._set_parts.trace_parts(key).trace, traceset=self._set_parts.summary(),
                         pick={"rank": first[0], "compile_id": first[1]}, **kwargs)

    @traitlets.observe("pick")
    def _on_pick(self, change: Any) -> None:
        pick = change["new"] or {}
        key = self._set_parts.key(pick.get("rank"), pick.get("compile_id"))
        if key == self._shown:
            return
        where = f"rank {pick.get('rank')} compile {pick.get('compile_id')}"
        try:
            trace = self._set_parts.trace_parts(key).trace
        except Exception as error:  # a log that cannot be built: say so, keep the last good view
            self.status = {"state": "error", "message": f"could not read {where}: {type(error).__name__}: {error}"}
            return
        self._shown = key
        with self.hold_trait_notifications():
            self.show_payload(trace)
            self.status = {}

    def show_compile(self, rank: Any, compile_id: str) -> None:
        """Show the compilation ``compile_id`` of ``rank`` (KeyError naming the compiles there are)."""
        self._set_parts.key(rank, compile_id)
        self.pick = {"rank": str(rank), "compile_id": str(compile_id)}

    def to_html(self, path: str | Path) -> Path:
        """Write the whole TraceSet as one self-contained HTML file (every compilation embedded)."""
        return write_traceset_html(self._source, path)

    def __repr__(self) -> str:
        return (f"TraceSetWidget({len(self.traceset.get('ranks', []))} ranks, rank {self.pick.get('rank')!r}, "
                f"compile {self.pick.get('compile_id')!r}, stage={self.stage!r})")
