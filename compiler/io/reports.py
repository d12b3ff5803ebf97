"""JSON of the run reports kept in a trace: ``profiles`` (c.profile()), ``numerics``
(c.check_numerics()) and ``counters`` (c.counters()); see SCHEMA.md."""

from __future__ import annotations

from typing import Any

from ..model import slots
from ..model.counters import CountersReport, KernelCounters, LineCounters
from ..model.numerics import BufferCheck, KernelNumerics, NumericsReport
from ..model.profile import KernelRef, Profile
from ..model.records import json_float


def profile_to_json(p: Profile) -> dict[str, Any]:
    return {
        "device": p.device, "runs": p.runs, "warmup": p.warmup, "created": p.created,
        "total_ms": p.total_ms, "wall_ms": p.wall_ms, "unattributed_ms": p.unattributed_ms,
        "unattributed": p.unattributed,
        "kernels": [{"key": key, "graph": ref.graph, "kernel": ref.kernel, "language": ref.language,
                     "ms": p.kernel_ms.get(key, 0.0), "calls": p.kernel_calls.get(key, 0.0),
                     "fraction": p.fraction.get(key, 0.0)} for key, ref in p.kernels.items()],
        "post_grad_ms": p.post_grad_ms, "fx_node_ms": p.fx_node_ms,
        "line_ms": [[file, line, ms] for (file, line), ms in p.line_ms.items()],
        # what each line called included (a model's call site holds all of it): the views' totals
        "line_total_ms": [[file, line, ms] for (file, line), ms in
                          (p.line_total_ms.items() if p.compilation is not None else ())],
        "timeline": p.timeline, "notes": list(p.notes),
    }


def profile_from_json(data: dict[str, Any]) -> Profile:
    rows = data.get("kernels", [])
    return Profile(
        device=str(data.get("device", "?")), runs=int(data.get("runs", 0)), warmup=int(data.get("warmup", 0)),
        total_ms=float(data.get("total_ms", 0.0)), wall_ms=float(data.get("wall_ms", 0.0)),
        kernel_ms={r["key"]: float(r["ms"]) for r in rows},
        kernel_calls={r["key"]: float(r.get("calls", 0.0)) for r in rows},
        kernels={r["key"]: KernelRef(r["graph"], r["kernel"], r.get("language", "")) for r in rows},
        post_grad_ms={g: {n: float(v) for n, v in m.items()} for g, m in (data.get("post_grad_ms") or {}).items()},
        fx_node_ms={g: {n: float(v) for n, v in m.items()} for g, m in (data.get("fx_node_ms") or {}).items()},
        line_ms={(str(f), int(line)): float(ms) for f, line, ms in data.get("line_ms", [])},
        unattributed_ms=float(data.get("unattributed_ms", 0.0)),
        unattributed={str(k): float(v) for k, v in (data.get("unattributed") or {}).items()},
        timeline=[list(row) for row in data.get("timeline", [])], created=str(data.get("created", "")),
        notes=[str(n) for n in data.get("notes", [])],
    )


def _float(value: Any) -> float | None:
    return None if value is None else float(value)


_BUFFER_FLOATS = ("max_abs", "max_rel", "mismatched", "rtol", "atol", "compiled_vs_float64", "eager_vs_float64",
                  "local_max_abs", "local_max_rel", "local_mismatched")
_ROW_FLOATS = ("max_abs", "max_rel", "mismatched", "compiled_vs_float64", "eager_vs_float64", "local_max_abs",
               "local_max_rel", "local_mismatched")


def numerics_to_json(r: NumericsReport) -> dict[str, Any]:
    def buffer(b: BufferCheck) -> dict[str, Any]:
        return {"buffer": b.buffer, "node": b.node, "call": b.call, "dtype": b.dtype, "shape": b.shape,
                "compared": b.compared, "ok": b.ok, "nan": list(b.nan), "inf": list(b.inf), "note": b.note,
                "local_ok": b.local_ok, **{name: json_float(getattr(b, name)) for name in _BUFFER_FLOATS}}

    return {
        "reference": r.reference, "device": r.device, "rtol": r.rtol, "atol": r.atol,
        "first_divergent": r.first_divergent, "first_divergent_nodes": r.first_divergent_nodes,
        "post_grad_error": {g: {n: json_float(v) for n, v in m.items()} for g, m in r.post_grad_error.items()},
        "fx_error": {g: {n: json_float(v) for n, v in m.items()} for g, m in r.fx_error.items()},
        "notes": r.notes, "edited": r.edited,
        "kernels": [{"key": row.key, "graph": row.graph, "kernel": row.kernel, "language": row.language,
                     "calls": row.calls, "ok": row.ok, "local_ok": row.local_ok,
                     "divergence": row.divergence.value if row.divergence else None,
                     **{name: json_float(getattr(row, name)) for name in _ROW_FLOATS},
                     "buffers": [buffer(b) for b in row.buffers]} for row in r.kernels.values()],
    }


def numerics_from_json(data: dict[str, Any]) -> NumericsReport:
    def buffer(b: dict[str, Any]) -> BufferCheck:
        return BufferCheck(buffer=str(b["buffer"]), node=b.get("node"), call=int(b.get("call", 0)),
                           dtype=str(b.get("dtype", "")), shape=list(b.get("shape", [])),
                           compared=bool(b.get("compared")), ok=b.get("ok"), nan=tuple(b.get("nan", (0, 0))),
                           inf=tuple(b.get("inf", (0, 0))), note=str(b.get("note", "")), local_ok=b.get("local_ok"),
                           **{name: _float(b.get(name)) for name in _BUFFER_FLOATS})

    rows = {k["key"]: KernelNumerics(k["key"], k["graph"], k["kernel"], k.get("language", ""), int(k.get("calls", 0)),
                                     [buffer(b) for b in k.get("buffers", [])]) for k in data.get("kernels", [])}
    return NumericsReport(
        reference=str(data.get("reference", "eager")), device=str(data.get("device", "?")),
        rtol=_float(data.get("rtol")), atol=_float(data.get("atol")), kernels=rows,
        first_divergent=data.get("first_divergent"), first_divergent_nodes=dict(data.get("first_divergent_nodes") or {}),
        post_grad_error={g: {n: float(v) for n, v in m.items()} for g, m in (data.get("post_grad_error") or {}).items()},
        fx_error={g: {n: float(v) for n, v in m.items()} for g, m in (data.get("fx_error") or {}).items()},
        notes=list(data.get("notes", [])), edited=list(data.get("edited", [])),
    )


_KERNEL_FIGURES = ("duration_ns", "dram_bytes", "memory_sol", "compute_sol", "dram_percent", "l2_percent",
                   "l1_percent", "dram_bandwidth", "l2_bandwidth", "l1_bandwidth", "achieved_occupancy",
                   "theoretical_occupancy")
_KERNEL_COUNTS = ("registers", "shared_memory", "grid", "block", "samples", "instructions")


@slots.counters_json.fill
def counters_to_json(r: CountersReport) -> dict[str, Any]:
    def kernel(k: KernelCounters) -> dict[str, Any]:
        return {"kernel": k.kernel, "graph": k.graph, "name": k.name, "device": k.device, "bound_by": k.bound_by,
                "language": k.language, "device_kernels": list(k.device_kernels),
                **{name: getattr(k, name) for name in _KERNEL_FIGURES + _KERNEL_COUNTS},
                "stalls": k.stalls,
                "lines": [{"line": ln.line, "file": ln.file, "samples": ln.samples, "not_issued": ln.not_issued,
                           "instructions": ln.instructions, "stalls": ln.stalls, "text": ln.text} for ln in k.lines]}

    return {
        "device": r.device, "tool": r.tool, "command": r.command, "created": r.created, "wall_s": r.wall_s,
        "kernels": [kernel(k) for k in r.kernels], "failed": r.failed,
        "post_grad_samples": r.post_grad_samples, "fx_node_samples": r.fx_node_samples,
        "line_samples": [[file, line, samples] for (file, line), samples in r.line_samples.items()],
    }


def counters_from_json(data: dict[str, Any]) -> CountersReport:
    def line(d: dict[str, Any]) -> LineCounters:
        return LineCounters(line=int(d["line"]), file=d.get("file"), samples=int(d.get("samples", 0)),
                            not_issued=int(d.get("not_issued", 0)), instructions=int(d.get("instructions", 0)),
                            stalls={str(k): int(v) for k, v in (d.get("stalls") or {}).items()},
                            text=str(d.get("text", "")))

    def kernel(d: dict[str, Any]) -> KernelCounters:
        return KernelCounters(kernel=str(d["kernel"]), name=str(d.get("name", d["kernel"])), graph=d.get("graph"),
                              device=str(d.get("device", "")), lines=[line(x) for x in d.get("lines", [])],
                              language=str(d.get("language", "triton")),
                              device_kernels=[str(n) for n in d.get("device_kernels") or []],
                              **{name: float(d.get(name, 0.0)) for name in _KERNEL_FIGURES},
                              **{name: int(d.get(name, 0)) for name in _KERNEL_COUNTS})

    def per_graph(value: Any) -> dict[str, dict[str, float]]:
        return {g: {n: float(v) for n, v in m.items()} for g, m in (value or {}).items()}

    return CountersReport(
        kernels=[kernel(k) for k in data.get("kernels", [])], failed=dict(data.get("failed") or {}),
        device=str(data.get("device", "")), tool=str(data.get("tool", "")), command=str(data.get("command", "")),
        created=str(data.get("created", "")), wall_s=float(data.get("wall_s", 0.0)),
        post_grad_samples=per_graph(data.get("post_grad_samples")), fx_node_samples=per_graph(data.get("fx_node_samples")),
        line_samples={(str(f), int(n)): float(v) for f, n, v in data.get("line_samples", [])},
    )
