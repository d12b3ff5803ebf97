"""SweepWidget: a sweep's table above the explorer view of the point picked.

The synced ``sweep`` trait is only the table (SweepParts.summary()). A click on a row sets ``pick``; the
widget then shows that point's trace through the ordinary ExplorerWidget machinery (a new revision whose
parts the browser fetches as it needs them). Two rows ticked set ``pair``; the widget fills the ``diff``
trait (what the second changed against the first; the session bar shows it) and shows the second point.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import traitlets

from .sweep import DiffOf, SweepParts
from .sweep_html import write_sweep_html
from .widget import ExplorerWidget


class SweepWidget(ExplorerWidget):
    """The sortable sweep table (heat on time, memory and error) over the view of one point.

    >>> w = SweepWidget(result, diff_of=lambda i, j: explorer.diff(result[i], result[j]).to_json())
    >>> w.show_point(2)                       # what a click on row 2 does
    >>> w.compare(0, 2)                       # what ticking rows 0 and 2 does
    """

    sweep = traitlets.Dict().tag(sync=True)  # SweepParts.summary()
    pick = traitlets.Dict().tag(sync=True)  # {"point": i} shown below the table
    pair = traitlets.List().tag(sync=True)  # [i, j]: the two points diffed, or []

    def __init__(self, sweep: Any, *, diff_of: DiffOf | None = None, point: int | None = None, **kwargs: Any) -> None:
        self._sweep_parts = SweepParts(sweep, diff_of)
        first = self._sweep_parts.first() if point is None else point
        if first is None:
            raise ValueError("no point of this sweep left a trace to show (every point failed before compiling)")
        self._source, self._diff_of, self._shown = sweep, diff_of, first
        super().__init__(self._sweep_parts.trace_parts(f"p{first}").trace, sweep=self._sweep_parts.summary(),
                         pick={"point": first}, **kwargs)

    @traitlets.observe("pick")
    def _on_pick(self, change: Any) -> None:
        point = (change["new"] or {}).get("point")
        if point is None or point == self._shown:
            return
        try:
            trace = self._sweep_parts.trace_parts(f"p{int(point)}").trace
        except Exception as error:  # a point without a trace: say so, keep the last good view
            self.status = {"state": "error", "message": f"point {point}: {error}"}
            return
        self._shown = int(point)
        with self.hold_trait_notifications():
            self.show_payload(trace)
            self.status = {}

    @traitlets.observe("pair")
    def _on_pair(self, change: Any) -> None:
        pair = list(change["new"] or [])
        if len(pair) != 2:
            self.diff = {}
            return
        first, second = int(pair[0]), int(pair[1])
        try:
            self.diff = self._sweep_parts.diff(first, second)
        except Exception as error:
            self.status = {"state": "error", "message": f"diff of points {first} and {second}: {error}"}
            return
        self.pick = {"point": second}

    def show_point(self, i: int) -> None:
        self.pick = {"point": int(i)}

    def compare(self, i: int, j: int) -> None:
        self.pair = [int(i), int(j)]

    def to_html(self, path: str | Path) -> Path:
        """The whole sweep as one self-contained HTML file (every point and the diffs embedded)."""
        return write_sweep_html(self._source, path, diff_of=self._diff_of)

    def __repr__(self) -> str:
        return f"SweepWidget({len(self.sweep.get('rows', []))} points, point {self.pick.get('point')!r}, stage={self.stage!r})"
