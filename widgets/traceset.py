"""A TraceSet (a multi-rank job, compiler/model/traceset.py) cut into parts, one compilation at a time.

The first view needs only the TraceSet's summary: every rank's compiles (as the log index sees them,
no graph parsed) and where the ranks diverge. Each compilation gets a short key (``c0``, ``c1``...)
and is served through its own TraceParts under that prefix: ``c3`` is its summary, ``c3/g0/fx`` one
of its parts. So the live widget builds and sends a compilation only when its rank and compile id
are picked, and the static export decodes only the compilation on screen.

Accepts a TraceSet object (duck-typed: ``ranks``, ``divergence``, ``problems``, ``path``; nothing here
imports torch) or the dict ``TraceSet.save`` writes.
"""

from __future__ import annotations

import dataclasses
import json
from collections import OrderedDict
from typing import Any, Callable, Iterator, Mapping

from compiler.model.contract import TRACESET_SCHEMA, TRACESET_VERSION, ContractError, TraceSetSummary, check

from .parts import PartError, TraceParts


KEEP_PARTS = 2  # compilations whose parts stay made: the one on screen and the one before it


class TraceSetError(ContractError):
    """The object given is not a TraceSet these views can show."""


def _plain(value: Any) -> Any:
    return dataclasses.asdict(value) if dataclasses.is_dataclass(value) else dict(value)


def _from_object(ts: Any) -> tuple[dict[str, Any], list[tuple[dict[str, Any], Callable[[str], Any]]]]:
    header = {"path": str(ts.path), "problems": [str(p) for p in ts.problems],
              "divergence": [_plain(d) for d in ts.divergence]}
    ranks = [(rank.summary.to_json(), (lambda cid, rank=rank: rank[cid].trace_view())) for rank in ts.ranks.values()]
    return header, ranks


def _from_saved(data: Mapping[str, Any]) -> tuple[dict[str, Any], list[tuple[dict[str, Any], Callable[[str], Any]]]]:
    check(data, TRACESET_SCHEMA, "the TraceSet given", TraceSetError)
    header = {"path": str(data.get("path", "")), "problems": [str(p) for p in data.get("problems") or []],
              "divergence": list(data.get("divergence") or [])}
    ranks = []
    for entry in data.get("ranks") or []:
        compilations = entry.get("compilations") or {}
        ranks.append((dict(entry["summary"]), (lambda cid, c=compilations: c[cid])))
    return header, ranks


class TraceSetParts:
    """The summary of a TraceSet and, under one key per compilation, that compilation's parts."""

    def __init__(self, traceset: Any) -> None:
        if isinstance(traceset, Mapping):
            header, ranks = _from_saved(traceset)
        elif all(hasattr(traceset, a) for a in ("ranks", "divergence", "problems", "path")):
            header, ranks = _from_object(traceset)
        else:
            raise TraceSetError(f"A TraceSet (explorer.load_trace(dir)) or its saved dict is required, not {type(traceset).__name__}")
        self._trace: dict[str, Callable[[], Any]] = {}  # key -> makes that compilation's trace
        self._where: dict[tuple[str, str], str] = {}  # (rank, compile id) -> key
        self._parts: OrderedDict[str, TraceParts] = OrderedDict()  # the last KEEP_PARTS made
        rank_entries = []
        for summary, get in ranks:
            rank = str(summary.get("rank"))
            compiles = []
            for compile_summary in summary.get("compiles") or []:
                cid = str(compile_summary.get("compile_id"))
                key = f"c{len(self._trace)}"
                self._trace[key] = (lambda get=get, cid=cid: get(cid))
                self._where[(rank, cid)] = key
                compiles.append({**compile_summary, "key": key})
            rank_entries.append({**summary, "rank": rank, "compiles": compiles})
        self._summary = {"schema": TRACESET_SCHEMA, "version": TRACESET_VERSION, **header, "ranks": rank_entries}

    def summary(self) -> TraceSetSummary:
        """The ``traceset`` trait (compiler/model/contract.py ``TraceSetSummary``), what the first view reads:
        ranks, their compiles (each with its part key), divergence, problems."""
        return self._summary

    def key(self, rank: Any, compile_id: str) -> str:
        """The part key of (rank, compile id); KeyError naming what exists when there is no such compile."""
        try:
            return self._where[(str(rank), str(compile_id))]
        except KeyError:
            known = ", ".join(f"rank {r} {c}" for r, c in self._where) or "none"
            raise KeyError(f"no compile {compile_id!r} on rank {rank!r}; compiles: {known}") from None

    def first(self) -> tuple[str, str] | None:
        """The (rank, compile id) shown first: the first compile of the first rank."""
        return next(iter(self._where), None)

    def trace_parts(self, key: str) -> TraceParts:
        """The parts of one compilation, built (and its compilation read from the log) on first use; only
        the last few are kept, so browsing a job's compilations holds a few of them, not all."""
        if key not in self._parts:
            if key not in self._trace:
                raise PartError(f"no compilation {key!r} in this TraceSet")
            self._parts[key] = TraceParts(self._trace[key]())
            while len(self._parts) > KEEP_PARTS:
                self._parts.popitem(last=False)
        self._parts.move_to_end(key)
        return self._parts[key]

    def get(self, key: str) -> Any:
        head, sep, rest = key.partition("/")
        parts = self.trace_parts(head)
        return parts.get(rest) if sep else parts.summary()

    def keys(self) -> Iterator[str]:
        """Every part key of every compilation (the static export embeds them all)."""
        for key in self._trace:
            yield key
            yield from (f"{key}/{inner}" for inner in self.trace_parts(key).keys())

    def encoded(self, key: str) -> bytes:
        return json.dumps(self.get(key), ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")
