"""Sweep: the table of a sweep, one row per point, with each point's trace to open it again.

``sweep[i]`` is point i as a Compilation (loaded from the trace its worker sent back); ``sweep.best``
is the fastest point that ran and whose numerics held; ``sweep.diff(i, j)`` compares two points with
``compiler.diff``. Saved as one JSON file (schema ``inductor-explorer/sweep``, SCHEMA.md) that
``explorer.load`` opens again.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, Iterator

from ..model import progress
from ..model import slots as views
from ..model.compilation import Compilation
from ..model.contract import SWEEP_SCHEMA, SWEEP_VERSION, check
from ..model.diff import Diff
from ..model.errors import TraceFormatError
from ..io.trace import complete_kernel_irs, with_raw_irs_built
from ..io.trace import from_json as trace_from_json
from ..model.slots import Rendered
from ..model.diff_pairing import diff as compilation_diff


@dataclass
class SweepRow:
    """One point: its settings, where it ran, and what it measured (None where it did not get that far)."""

    index: int
    config: dict[str, Any]  # toggle names / raw Inductor keys as asked
    input_set: int = 0
    shapes: list[list[int]] = field(default_factory=list)  # tensor input shapes (when the sweep has several)
    status: str = "pending"  # ok | failed | cancelled | pending
    stage: str | None = None  # where a failed point stopped: toggles, tracing, lowering, ..., profile, worker
    error: str | None = None
    compile_s: float | None = None
    compile_phases: dict[str, float] = field(default_factory=dict)  # compile_s split by phase (c.compile_time)
    run_ms: float | None = None  # wall time of one call in a loop of back-to-back calls (runs/call_time.py)
    device_ms: float | None = None  # time in the compiled graphs' kernels per run (c.profile().total_ms)
    threads: int | None = None  # CPU threads the point ran with (None on the GPU)
    timed: list[float] = field(default_factory=list)  # [start, end] (epoch s) of run_ms and the profile
    timed_alone: bool | None = None  # CPU workers: no other worker of the sweep ran during that window
    peak_bytes: int | None = None  # measured peak of one run on the GPU
    planned_peak_bytes: int | None = None  # the largest planned peak of a graph (g.memory)
    max_error: float | None = None  # the largest max relative error of a kernel against eager
    ok: bool | None = None  # numerics within tolerance (None: not checked, or no kernel output compared)
    kernels: int | None = None
    graphs: int | None = None
    graph_breaks: int | None = None
    recompiles: int | None = None
    worker: str = ""
    gpu: str = ""
    wall_s: float | None = None  # the point's time in its worker, everything included
    stage_s: dict[str, float] = field(default_factory=dict)  # where that time went: load, compile, profile, ...
    traceback: str = ""

    @property
    def settings(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in self.config.items()) or "defaults"

    @property
    def shape(self) -> str:
        return " × ".join("x".join(map(str, s)) for s in self.shapes)

    @property
    def memory_bytes(self) -> int | None:
        """The measured peak where there is one (GPU), else the planned one."""
        return self.peak_bytes if self.peak_bytes is not None else self.planned_peak_bytes

    def __repr__(self) -> str:
        where = f" @ {self.shape}" if self.shapes else ""
        if self.status != "ok":
            return f"SweepRow(#{self.index} {self.settings}{where}: {self.status} in {self.stage}: {self.error})"
        return (f"SweepRow(#{self.index} {self.settings}{where}: {self.run_ms:.3f} ms, compile {self.compile_s:.2f} s, "
                f"{self.kernels} kernels, numerics {'ok' if self.ok else 'not ok' if self.ok is False else 'not checked'})")


@dataclass(repr=False)
class Sweep(Rendered):
    function: str
    device: str  # cpu | cuda
    engine: str  # local | ray
    rows: list[SweepRow]
    traces: list[str | None]  # each row's trace as JSON text (None: the point produced none)
    options: dict[str, Any] = field(default_factory=dict)  # backward, runs, warmup, check
    workers: list[str] = field(default_factory=list)
    wall_s: float = 0.0
    created: str = ""
    cancelled: bool = False
    _opened: dict[int, Compilation] = field(default_factory=dict, repr=False)

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Iterator[SweepRow]:
        return iter(self.rows)

    @property
    def best(self) -> int | None:
        """The index of the fastest point that ran with numerics that held (or were not checked)."""
        ran = [r for r in self.rows if r.status == "ok" and r.run_ms is not None and r.ok is not False]
        return min(ran, key=lambda r: r.run_ms).index if ran else None

    def ratio(self, i: int) -> float | None:
        """Point i's run time over the best point's."""
        best, run_ms = self.best, self.rows[i].run_ms
        if best is None or run_ms is None or not self.rows[best].run_ms:
            return None
        return run_ms / self.rows[best].run_ms

    @property
    def failed(self) -> list[SweepRow]:
        return [r for r in self.rows if r.status == "failed"]

    def __getitem__(self, i: int) -> Compilation:
        """Point i as a Compilation, loaded from the trace its worker sent back."""
        row = self.rows[i]
        if i not in self._opened:
            if self.traces[i] is None:
                raise KeyError(f"point {i} has no trace: it {row.status} in {row.stage}: {row.error}")
            self._opened[i] = trace_from_json(json.loads(self.traces[i]), origin=f"sweep point {i}")
        return self._opened[i]

    def trace_view(self, i: int) -> Any:
        """Point i's trace as views read it: each stage, and each kernel's IR, serialized when first read."""
        return self[i].trace_view()

    def diff(self, i: int, j: int) -> Diff:
        """``compiler.diff`` of points i and j (what the second changed against the first)."""
        return compilation_diff(self[i], self[j])

    # ------------------------------------------------------------------------------------ saving
    def to_json(self) -> dict[str, Any]:
        return {
            "schema": SWEEP_SCHEMA, "version": SWEEP_VERSION,
            "meta": {"function": self.function, "device": self.device, "engine": self.engine, "options": self.options,
                     "workers": self.workers, "wall_s": self.wall_s, "created": self.created, "cancelled": self.cancelled},
            "rows": [{k: v for k, v in asdict(r).items()} for r in self.rows],
            "traces": [with_raw_irs_built(json.loads(t)) if t is not None else None for t in self.traces],
        }

    def save(self, path: str | Path) -> Path:
        """One JSON file (gzip-compressed when ``path`` ends with ``.gz``) that ``explorer.load`` opens.
        Each point's kernel IR, which the workers left unbuilt, is built now (SASS and line maps: the file
        opens anywhere with all of it), shown as a progress step."""
        with progress.task(f"save sweep of {self.function}"):
            return views.write_json(self.to_json(), path)

    def to_html(self, path: str | Path | None = None) -> Any:
        """The sweep as one self-contained HTML page (the table, heat and every point's view); written to
        ``path`` when given (returns the path), else returned as a string."""
        # the page embeds every point's kernel IR: build what the workers left raw in one pool
        complete_kernel_irs(*(self[i] for i, trace in enumerate(self.traces) if trace is not None))
        return views.write_sweep_html(self, path)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> Any:
        bundle = views.widget_bundle(views.sweep_widget, lambda: self, include, exclude, "text/html", lambda: repr(self))
        if bundle is not None:
            return bundle
        return {"text/plain": repr(self), "text/html": views.html_of(self)}

    def __repr__(self) -> str:
        ok = sum(1 for r in self.rows if r.status == "ok")
        best = f", best #{self.best}" if self.best is not None else ""
        cut = ", cancelled" if self.cancelled else ""
        return (f"Sweep({self.function} on {self.device}, {self.engine}: {len(self.rows)} points, {ok} ran, "
                f"{len(self.failed)} failed{best}, {self.wall_s:.1f} s{cut})")


_ROW_FIELDS = {f.name for f in fields(SweepRow)}


@views.loaders[SWEEP_SCHEMA].fill  # compiler.load / explorer.load open saved sweeps
def from_json(data: Any, origin: str = "sweep") -> Sweep:
    check(data, SWEEP_SCHEMA, origin, TraceFormatError)
    try:
        meta = data["meta"]
        rows = [SweepRow(**{k: v for k, v in r.items() if k in _ROW_FIELDS}) for r in data["rows"]]
        traces = [json.dumps(t) if t is not None else None for t in data["traces"]]
        if len(traces) != len(rows):
            raise ValueError(f"{len(rows)} rows but {len(traces)} traces")
        return Sweep(function=str(meta["function"]), device=str(meta["device"]), engine=str(meta["engine"]), rows=rows,
                     traces=traces, options=dict(meta.get("options") or {}), workers=list(meta.get("workers") or []),
                     wall_s=float(meta.get("wall_s") or 0.0), created=str(meta.get("created", "")),
                     cancelled=bool(meta.get("cancelled", False)))
    except (KeyError, TypeError, ValueError) as exc:
        raise TraceFormatError(f"malformed sweep {origin}: {type(exc).__name__}: {exc}") from exc
