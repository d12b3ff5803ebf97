"""A sweep (explorer.sweep, compiler/sweeps/) cut into parts: the table first, each point on demand.

The first view needs only the table: every row's settings and measures, the best point and each
row's ratio to it. Each point with a trace gets a key (``p0``, ``p1``...) and is served through its own
TraceParts under that prefix (``p3`` its summary, ``p3/g0/fx`` a part), so a point is decoded only when
someone opens it. The diff of two points is part ``d{i}-{j}`` (a to b), made by the ``diff_of(i, j)``
the caller gives (explorer.diff lives above this package); the static export embeds the diffs of every
pair when there are at most ``ALL_PAIRS_UP_TO`` points with a trace, else of every point with the best.

Accepts a Sweep (duck-typed: ``rows``, ``traces``, ``trace_view(i)``, ``best``, ``ratio``, ``function``;
nothing here imports torch) or the dict ``Sweep.save`` writes.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any, Callable, Iterator, Mapping

from compiler.model.contract import SWEEP_SCHEMA, SWEEP_VERSION, ContractError, SweepMeta, SweepSummary, check

from .parts import PartError, TraceParts

ALL_PAIRS_UP_TO = 8

DiffOf = Callable[[int, int], Any]


class SweepError(ContractError):
    """The object given is not a sweep these views can show."""


def _best(rows: list[dict[str, Any]]) -> int | None:
    ran = [r for r in rows if r.get("status") == "ok" and isinstance(r.get("run_ms"), (int, float)) and r.get("ok") is not False]
    return min(ran, key=lambda r: r["run_ms"])["index"] if ran else None


def _from_object(sweep: Any) -> tuple[SweepMeta, list[dict[str, Any]], list[Any]]:
    meta: SweepMeta = {"function": sweep.function, "device": sweep.device, "engine": sweep.engine,
                       "options": dict(sweep.options), "workers": list(sweep.workers), "wall_s": sweep.wall_s,
                       "created": sweep.created, "cancelled": sweep.cancelled}
    rows = [dataclasses.asdict(r) for r in sweep.rows]
    traces = [(lambda i=i: sweep.trace_view(i)) if t is not None else None for i, t in enumerate(sweep.traces)]
    return meta, rows, traces


def _from_saved(data: Mapping[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]], list[Any]]:
    check(data, SWEEP_SCHEMA, "the sweep given", SweepError)
    rows = [dict(r) for r in data.get("rows") or []]
    traces = [(lambda t=t: t) if t is not None else None for t in data.get("traces") or []]
    return dict(data.get("meta") or {}), rows, traces


class SweepParts:
    """The table of a sweep and, under one key per point, that point's parts."""

    def __init__(self, sweep: Any, diff_of: DiffOf | None = None) -> None:
        if isinstance(sweep, Mapping):
            meta, rows, traces = _from_saved(sweep)
        elif all(hasattr(sweep, a) for a in ("rows", "traces", "function", "engine")):
            meta, rows, traces = _from_object(sweep)
        else:
            raise SweepError(f"a Sweep (explorer.sweep(...)) or its saved dict is required, not {type(sweep).__name__}")
        if len(traces) != len(rows):
            raise SweepError(f"{len(rows)} rows but {len(traces)} traces")
        self._source = sweep
        self._diff_of = diff_of
        self._trace = {f"p{i}": get for i, get in enumerate(traces) if get is not None}
        self._parts: dict[str, TraceParts] = {}
        best = _best(rows)
        top = rows[best]["run_ms"] if best is not None else None
        table = []
        for i, row in enumerate(rows):
            run_ms = row.get("run_ms")
            ratio = run_ms / top if top and isinstance(run_ms, (int, float)) else None
            table.append({**row, "key": f"p{i}" if f"p{i}" in self._trace else None, "ratio": ratio})
        self._summary = {"schema": SWEEP_SCHEMA, "version": SWEEP_VERSION, "meta": meta, "best": best, "rows": table,
                         "diffs": diff_of is not None}

    def summary(self) -> SweepSummary:
        """The ``sweep`` trait (compiler/model/contract.py ``SweepSummary``), what the first view reads: the
        meta, every row (with its part key and ratio), the best point."""
        return self._summary

    def first(self) -> int | None:
        """The point shown first: the best, else the first with a trace."""
        best = self._summary["best"]
        if best is not None and f"p{best}" in self._trace:
            return best
        return next((int(key[1:]) for key in self._trace), None)

    def trace_parts(self, key: str) -> TraceParts:
        if key not in self._parts:
            if key not in self._trace:
                raise PartError(f"no point {key!r} with a trace in this sweep")
            self._parts[key] = TraceParts(self._trace[key]())
        return self._parts[key]

    def diff(self, i: int, j: int) -> Any:
        """Diff.to_json() of point i against point j (PartError when no diff maker was given)."""
        if self._diff_of is None:
            raise PartError("this sweep view has no diff maker: give diff_of (explorer registers one)")
        for index in (i, j):
            if f"p{index}" not in self._trace:
                raise PartError(f"point {index} has no trace to diff")
        return self._diff_of(i, j)

    def get(self, key: str) -> Any:
        if key.startswith("d") and "-" in key:
            first, _, second = key[1:].partition("-")
            return self.diff(int(first), int(second))
        head, sep, rest = key.partition("/")
        parts = self.trace_parts(head)
        return parts.get(rest) if sep else parts.summary()

    def pairs(self) -> list[tuple[int, int]]:
        """The diffs a static page embeds: every pair of points with traces, or each with the best."""
        if self._diff_of is None:
            return []
        traced = sorted(int(key[1:]) for key in self._trace)
        if len(traced) <= ALL_PAIRS_UP_TO:
            return [(i, j) for n, i in enumerate(traced) for j in traced[n + 1:]]
        best = self.first()
        return [(min(best, i), max(best, i)) for i in traced if i != best]

    def keys(self) -> Iterator[str]:
        """Every part key of every point, and the embedded diffs (the static export embeds them all)."""
        for key in self._trace:
            yield key
            yield from (f"{key}/{inner}" for inner in self.trace_parts(key).keys())
        for i, j in self.pairs():
            yield f"d{i}-{j}"

    def encoded(self, key: str) -> bytes:
        return json.dumps(self.get(key), ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")
