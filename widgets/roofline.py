"""A graph's kernels as roofline points, from what the trace records (part ``g0/roofline``, made when the
Kernels stage opens).

A point needs a kernel's time, the bytes it moves and the FLOPs it computes, per launch:

- time: Nsight Compute's ``duration_ns`` (the newest counters report that measured the kernel), else the
  newest profile's ``ms / calls``;
- bytes: DRAM bytes measured by Nsight Compute (``dram_bytes``, or its DRAM bandwidth times its duration),
  else the estimate the compiler wrote as the kernel's ``cost`` (compiler/model/cost.py: Inductor's
  ``kernel_num_gb`` or its harness's ``num_gb``; an extern call's inputs read once, its output written once);
- FLOPs: the kernel's ``cost`` too (Inductor's ``kernel_flop``, else 2*M*N*K per matmul node and one
  operation per output element of every other node).

A trace saved before kernels carried a ``cost`` has its costs derived here from the JSON, by the same
rule, in one place (``legacy_cost``); traces the compiler writes never take that path.

Roofs are drawn only where the trace records them. The DRAM bandwidth roof is Nsight Compute's where
counters ran (a kernel's DRAM bandwidth over its DRAM throughput as a share of peak, the median over the
kernels measured), else the datasheet's; the compute roof is the datasheet's peak FLOP/s for the dtype
most of the placed kernels compute in (``meta.device_peaks``, written for GPUs the explorer knows: see
compiler/SCHEMA.md). float32 matmuls are drawn against the float32 peak: the trace does not say whether
TF32 was allowed.
"""

from __future__ import annotations

import math
import re
import statistics
from typing import Any, Mapping

from compiler.model.contract import RooflinePart, RooflinePoint

HOW_TO = ("No kernel of this graph has a time on record. Run c.profile() for kernel times, or c.counters() "
          "on a GPU (Nsight Compute: times, DRAM bytes and the bandwidth roof), then show the compilation "
          "again; k.bench() prints one kernel's roofline point but does not keep it in the trace.")
MIN_DRAM_PERCENT = 5.0  # a kernel that barely touches DRAM gives a noisy peak (bandwidth / share of peak)


def _num(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) else None


def _newest_counters(trace: Mapping[str, Any], gid: str) -> dict[str, Mapping[str, Any]]:
    rows: dict[str, Mapping[str, Any]] = {}
    for report in trace.get("counters") or []:
        rows.update({str(k.get("kernel")): k for k in report.get("kernels") or [] if str(k.get("graph")) == gid})
    return rows


def _profile_times(trace: Mapping[str, Any], gid: str) -> dict[str, float]:
    """Kernel id -> seconds per launch, from the newest profile."""
    profiles = trace.get("profiles") or []
    out: dict[str, float] = {}
    for row in (profiles[-1].get("kernels") or []) if profiles else []:
        ms, calls = _num(row.get("ms")), _num(row.get("calls")) or 1.0
        if str(row.get("graph")) == gid and ms and calls > 0:
            out[str(row.get("kernel"))] = ms / calls / 1e3
    return out


def bandwidth_roof(counters: Mapping[str, Mapping[str, Any]]) -> float | None:
    """Peak DRAM bytes/s as Nsight Compute sees it: the median of each kernel's bandwidth / its share of peak."""
    peaks = [bw / (pct / 100) for row in counters.values()
             if (bw := _num(row.get("dram_bandwidth"))) and (pct := _num(row.get("dram_percent"))) and pct >= MIN_DRAM_PERCENT]
    return statistics.median(peaks) if peaks else None


def kernel_dtype(kernel: Mapping[str, Any], nodes: Mapping[str, Mapping[str, Any]]) -> str | None:
    """The dtype a kernel computes in: that of its last node's output (its first node for an extern call)."""
    names = [n for n in kernel.get("post_grad_nodes") or [] if n in nodes]
    if not names:
        return None
    dtype = nodes[names[0] if kernel.get("language") == "extern" else names[-1]].get("dtype")
    return str(dtype).replace("torch.", "") if dtype else None


def compute_roof(peaks: Mapping[str, Any], points: list[dict[str, Any]]) -> tuple[float | None, str | None]:
    """The datasheet's peak FLOP/s for the dtype most points compute in, with where it comes from."""
    dtypes = [p["dtype"] for p in points if p.get("dtype")]
    if not dtypes:
        return None, None
    dtype = statistics.mode(dtypes)
    flops = _num((peaks.get("flops") or {}).get(dtype))
    return (flops, f"{dtype} peak, {peaks.get('source')}") if flops else (None, None)


def _point(kernel: Mapping[str, Any], nodes: Mapping[str, Any], counters: Mapping[str, Any] | None,
           profile_s: float | None) -> RooflinePoint | None:
    duration = _num((counters or {}).get("duration_ns"))
    seconds, time_source = (duration / 1e9, "Nsight Compute") if duration else (profile_s, "profile")
    if not seconds:
        return None
    measured = _num((counters or {}).get("dram_bytes"))
    if measured is None and duration and _num((counters or {}).get("dram_bandwidth")):
        measured = counters["dram_bandwidth"] * duration / 1e9  # type: ignore[index]
    estimate, flops = kernel_cost(kernel, nodes)
    nbytes, bytes_source = (measured, "DRAM, Nsight Compute") if measured else (estimate, "Inductor's estimate")
    if not nbytes or not flops:
        return None
    return {"kernel": str(kernel.get("id")), "language": kernel.get("language"), "seconds": seconds,
            "bytes": nbytes, "flops": flops, "intensity": flops / nbytes, "flops_per_s": flops / seconds,
            "bytes_per_s": nbytes / seconds, "time_source": time_source, "bytes_source": bytes_source,
            "dtype": kernel_dtype(kernel, nodes)}


def roofline(trace: Mapping[str, Any], graph: Mapping[str, Any]) -> RooflinePart:
    """The roofline part of one graph: points, roofs (null when not recorded), and what to run when empty."""
    gid = str(graph.get("id"))
    nodes = {str(n.get("name")): n for n in (graph.get("post_grad") or {}).get("nodes") or [] if isinstance(n, Mapping)}
    counters = _newest_counters(trace, gid)
    times = _profile_times(trace, gid)
    points, skipped = [], []
    for kernel in graph.get("kernels") or []:
        kid = str(kernel.get("id"))
        if kid not in counters and kid not in times:
            continue
        point = _point(kernel, nodes, counters.get(kid), times.get(kid))
        (points.append(point) if point else skipped.append(kid))
    meta = trace.get("meta") or {}
    peaks = meta.get("device_peaks") or {}
    bandwidth, bandwidth_source = bandwidth_roof(counters), "Nsight Compute (DRAM)"
    if bandwidth is None and _num(peaks.get("bandwidth")):
        bandwidth, bandwidth_source = float(peaks["bandwidth"]), str(peaks.get("source"))
    compute, compute_source = compute_roof(peaks, points)
    return {"graph": gid, "device": meta.get("device_name"), "points": points,
            "skipped": skipped,  # timed, but with no bytes or FLOPs to place them
            "roofs": {"bandwidth": bandwidth, "bandwidth_source": bandwidth_source if bandwidth else None,
                      "compute": compute, "compute_source": compute_source},
            "how_to": None if points else HOW_TO}


def kernel_cost(kernel: Mapping[str, Any], nodes: Mapping[str, Mapping[str, Any]]) -> tuple[float | None, float | None]:
    """A kernel's (bytes, FLOPs) as the compiler wrote them (its ``cost``); derived from the JSON only for
    a trace saved before kernels carried one."""
    cost = kernel.get("cost")
    if isinstance(cost, Mapping):
        return _num(cost.get("bytes")), _num(cost.get("flops"))
    return legacy_cost(kernel, nodes)


# ------------------------------------------------------------------ traces saved before kernels' "cost"
# compiler/model/cost.py's rule over the JSON, kept for those traces only (widgets cannot import it).

_MATMULS = {"aten.mm.default": "mm", "aten.addmm.default": "addmm", "aten.bmm.default": "bmm",
            "aten.baddbmm.default": "baddbmm"}
_DTYPE_BYTES = {"torch.float32": 4, "torch.float16": 2, "torch.bfloat16": 2, "torch.float64": 8,
                "torch.int64": 8, "torch.int32": 4, "torch.int8": 1, "torch.uint8": 1, "torch.bool": 1}


def legacy_cost(kernel: Mapping[str, Any], nodes: Mapping[str, Mapping[str, Any]]) -> tuple[float | None, float | None]:
    """(bytes, FLOPs) of a kernel of a trace without ``cost``, by compiler/model/cost.py's rule."""
    return _legacy_bytes(kernel, nodes), _legacy_flops(kernel, nodes)


def _numel(shape: Any) -> int:
    try:
        return math.prod(int(s) for s in shape) if isinstance(shape, list) else 0
    except (TypeError, ValueError):  # a symbolic size
        return 0


def _nbytes(node: Mapping[str, Any]) -> int:
    return _numel(node.get("shape")) * _DTYPE_BYTES.get(node.get("dtype") or "", 4)


def _node_flops(node: Mapping[str, Any], nodes: Mapping[str, Mapping[str, Any]]) -> float:
    kind = _MATMULS.get(str(node.get("target")))
    shape = node.get("shape") or []
    if kind and isinstance(shape, list) and len(shape) >= 2:
        inputs = [nodes[i] for i in node.get("inputs") or [] if i in nodes]
        mat = inputs[-2] if kind in ("addmm", "baddbmm") and len(inputs) >= 2 else inputs[0] if inputs else {}
        k = _numel((mat.get("shape") or [0])[-1:])
        return 2.0 * _numel(shape) * k
    return float(_numel(shape))


def _legacy_bytes(kernel: Mapping[str, Any], nodes: Mapping[str, Mapping[str, Any]]) -> float | None:
    meta = (kernel.get("meta") or {}).get("inductor_meta") or {}
    if _num(meta.get("kernel_num_gb")) is not None:
        return float(meta["kernel_num_gb"]) * 1e9
    match = re.search(r"^\s*num_gb = ([0-9.eE+-]+)\s*$", str(kernel.get("source") or ""), re.MULTILINE)
    if match:
        return float(match.group(1)) * 1e9
    if kernel.get("language") == "extern":
        first = [nodes[n] for n in (kernel.get("post_grad_nodes") or [])[:1] if n in nodes]
        total = sum(_nbytes(n) + sum(_nbytes(nodes[i]) for i in n.get("inputs") or [] if i in nodes) for n in first)
        return float(total) or None
    return None


def _legacy_flops(kernel: Mapping[str, Any], nodes: Mapping[str, Mapping[str, Any]]) -> float | None:
    meta = (kernel.get("meta") or {}).get("inductor_meta") or {}
    if (_num(meta.get("kernel_flop")) or 0) > 0:
        return float(meta["kernel_flop"])
    names = list(kernel.get("post_grad_nodes") or [])
    names = names[:1] if kernel.get("language") == "extern" else names
    total = sum(_node_flops(nodes[n], nodes) for n in names if n in nodes)
    return total or None
