"""CompileTimeReport <-> JSON (the trace's optional ``compile_time`` key, compiler/SCHEMA.md), and the report
as a Chrome / Perfetto trace.

The JSON is what the widget draws (an icicle of ``root``) and links from: phases carry graph ids, kernel
ids and compile ids; charges carry FX node keys (``g0/linear``), ``[file, line]`` and module paths.
"""

from __future__ import annotations

import json
from pathlib import Path
from collections.abc import Mapping
from typing import Any, Iterator

from ..model import slots
from ..model.compilation import Compilation
from ..model.compile_time import (Charge, CompileTimeReport, KernelCompileTime, Phase, RecompileCost,
                                  Suggestion)


def _phase(p: Phase) -> dict[str, Any]:
    out: dict[str, Any] = {"id": p.id, "name": p.name, "seconds": p.seconds, "start_s": p.start_s}
    for key in ("category", "compile_id", "graph", "kernel"):
        value = getattr(p, key)
        if value:
            out[key] = value
    if p.args:
        out["args"] = p.args
    if p.children:
        out["children"] = [_phase(c) for c in p.children]
    return out


def _load_phase(d: dict[str, Any]) -> Phase:
    return Phase(str(d["id"]), str(d["name"]), float(d["seconds"]), float(d.get("start_s", 0.0)),
                 str(d.get("category", "")), d.get("compile_id"), d.get("graph"), d.get("kernel"),
                 dict(d.get("args") or {}), [_load_phase(c) for c in d.get("children") or []])


def _charge(c: Charge) -> dict[str, Any]:
    out: dict[str, Any] = {"key": c.key, "seconds": c.seconds, "kernel_s": c.kernel_s, "spread_s": c.spread_s,
                           "graphs": c.graphs}
    if c.file is not None:
        out["line"] = [c.file, c.line]
    return out


def _load_charge(d: dict[str, Any]) -> Charge:
    file, line = d.get("line") or (None, None)
    return Charge(str(d["key"]), float(d["seconds"]), float(d.get("kernel_s", 0.0)), float(d.get("spread_s", 0.0)),
                  file, line, list(d.get("graphs") or []))


def _kernel(k: KernelCompileTime) -> dict[str, Any]:
    return {"kernel": k.kernel, "graph": k.graph, "seconds": k.seconds, "autotune_s": k.autotune_s,
            "compile_s": k.compile_s, "candidates": k.candidates, "fx_nodes": k.fx_nodes,
            "user_lines": [list(line) for line in k.user_lines], "module": k.module, "build_s": k.build_s}


def _load_kernel(d: dict[str, Any]) -> KernelCompileTime:
    return KernelCompileTime(str(d["kernel"]), str(d["graph"]), float(d.get("autotune_s", 0.0)),
                             float(d.get("compile_s", 0.0)), int(d.get("candidates", 0)), list(d.get("fx_nodes") or []),
                             [(str(f), int(n)) for f, n in d.get("user_lines") or []], d.get("module"),
                             float(d.get("build_s", 0.0)))


@slots.compile_time_json.fill
def to_json(report: CompileTimeReport) -> dict[str, Any]:
    return {
        "source": report.source, "seconds": report.seconds, "explorer_s": report.explorer_s,
        "categories": report.categories(), "root": _phase(report.root),
        "kernels": [_kernel(k) for k in report.kernels],
        "lines": [_charge(c) for c in report.lines], "modules": [_charge(c) for c in report.modules],
        "nodes": [_charge(c) for c in report.nodes],
        "recompiles": [{"compile_id": r.compile_id, "function": r.function, "reasons": r.reasons,
                        "seconds": r.seconds, "graphs": r.graphs} for r in report.recompiles],
        "suggestions": [{"kind": s.kind, "message": s.message, "seconds": s.seconds, "evidence": s.evidence}
                        for s in report.suggestions],
        "notes": report.notes, **({"rank": report.rank} if report.rank is not None else {}),
    }


def from_json(data: Any) -> CompileTimeReport | None:
    """The report a trace holds under ``compile_time`` (None when it has none: traces saved before it)."""
    if not data:
        return None
    return CompileTimeReport(
        source=str(data.get("source", "capture")), root=_load_phase(data["root"]),
        kernels=[_load_kernel(k) for k in data.get("kernels") or []],
        lines=[_load_charge(c) for c in data.get("lines") or []],
        modules=[_load_charge(c) for c in data.get("modules") or []],
        nodes=[_load_charge(c) for c in data.get("nodes") or []],
        recompiles=[RecompileCost(str(r["compile_id"]), str(r.get("function", "")), list(r.get("reasons") or []),
                                  float(r.get("seconds", 0.0)), list(r.get("graphs") or []))
                    for r in data.get("recompiles") or []],
        suggestions=[Suggestion(str(s["kind"]), str(s["message"]), float(s.get("seconds", 0.0)),
                                list(s.get("evidence") or [])) for s in data.get("suggestions") or []],
        notes=list(data.get("notes") or []), rank=data.get("rank"))


def of(c: Compilation, lazy: bool = False) -> Mapping[str, Any] | None:
    """The compilation's report as JSON, built now from a live capture's events (``lazy``: when a view
    first reads more than its total); None when it has none."""
    if not c.compile_calls and c.compile_time_report is None:
        return None
    return LazyReport(c) if lazy else to_json(c.compile_time)


class LazyReport(Mapping):
    """A compilation's report JSON for views: its total (``seconds``, the Compile time tab's count) is known
    without building the report, from the calls' wall times it adds up to; any other key builds it."""

    def __init__(self, c: Compilation) -> None:
        self._c = c
        self._json: dict[str, Any] | None = None

    def _built(self) -> dict[str, Any]:
        if self._json is None:
            self._json = to_json(self._c.compile_time)
        return self._json

    def __getitem__(self, key: str) -> Any:
        if key == "seconds" and self._json is None:
            report = self._c.compile_time_report
            if report is not None and not self._c.compile_calls:
                return report.seconds
            return round(sum((call.end_ns - call.start_ns) / 1e9 for call in self._c.compile_calls), 6)
        return self._built()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._built())

    def __len__(self) -> int:
        return len(self._built())


def chrome_events(report: CompileTimeReport) -> list[dict[str, Any]]:
    """Complete ("X") events, one per phase, nested as in the tree; ids and links in ``args``."""
    events: list[dict[str, Any]] = []
    pid = f"compile time ({report.source}{f', rank {report.rank}' if report.rank is not None else ''})"

    def add(phase: Phase) -> None:
        args = {"id": phase.id, "category": phase.category, **{k: v for k, v in (("graph", phase.graph),
                ("kernel", phase.kernel), ("compile_id", phase.compile_id)) if v}, **phase.args}
        events.append({"name": phase.name, "ph": "X", "ts": round(phase.start_s * 1e6, 3),
                       "dur": round(phase.seconds * 1e6, 3), "pid": pid, "tid": "compile", "args": args})
        for child in phase.children:
            add(child)

    add(report.root)
    return events


@slots.compile_time_chrome_trace.fill
def write_chrome_trace(report: CompileTimeReport, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"traceEvents": chrome_events(report), "displayTimeUnit": "ms"}))
    return path
