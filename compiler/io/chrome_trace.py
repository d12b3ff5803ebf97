"""Profile.export_chrome_trace: a Chrome / Perfetto trace whose kernels carry the explorer's ids.

Live profiles write torch.profiler's own trace, with every GPU kernel that was launched inside one of
the explorer's kernel marks renamed to that kernel's key (its CUDA name kept in ``args``): a CUDA
kernel's launch (the ``cuda_runtime`` event of the same ``correlation``) happens on a CPU thread
inside the mark. Loaded profiles write the recorded run's kernel slices.
"""

from __future__ import annotations

import bisect
import json
import tempfile
from pathlib import Path
from typing import Any

from ..model import slots

_MARK_PREFIX = "explorer:"


def _key_of_label(profile: Any, label: str) -> str:
    ref = label[len(_MARK_PREFIX):]
    for key, kernel in profile.kernels.items():
        if f"{kernel.graph}/{kernel.kernel}" == ref:
            return key
    return ref


def rename_gpu_kernels(trace: dict[str, Any], profile: Any) -> int:
    """Name GPU kernel events after the explorer kernel whose mark launched them; returns how many."""
    events = trace.get("traceEvents", [])
    marks: dict[Any, list[tuple[float, float, str]]] = {}
    launches: dict[Any, tuple[Any, float]] = {}
    for e in events:
        name = str(e.get("name", ""))
        if name.startswith(_MARK_PREFIX) and e.get("ph") == "X":
            marks.setdefault(e.get("tid"), []).append((float(e["ts"]), float(e["ts"]) + float(e.get("dur", 0)), name))
        elif e.get("cat") == "cuda_runtime" and "correlation" in e.get("args", {}):
            launches[e["args"]["correlation"]] = (e.get("tid"), float(e["ts"]))
    starts = {tid: sorted(items) for tid, items in marks.items()}
    renamed = 0
    for e in events:
        if e.get("cat") != "kernel":
            continue
        launch = launches.get(e.get("args", {}).get("correlation"))
        if launch is None or launch[0] not in starts:
            continue
        spans = starts[launch[0]]
        i = bisect.bisect_right(spans, (launch[1], float("inf"), "")) - 1
        if i >= 0 and spans[i][0] <= launch[1] <= spans[i][1]:
            e.setdefault("args", {})["cuda_name"] = e.get("name")
            e["name"] = _key_of_label(profile, spans[i][2])
            renamed += 1
    return renamed


def _from_timeline(profile: Any) -> dict[str, Any]:
    events = []
    for key, start, duration in profile.timeline:
        ref = profile.kernels.get(key)
        events.append({"name": key, "ph": "X", "ts": start, "dur": duration, "pid": f"inductor-explorer ({profile.device})",
                       "tid": ref.graph if ref else "kernels", "args": {"language": ref.language if ref else ""}})
    return {"traceEvents": events, "displayTimeUnit": "ms"}


@slots.chrome_trace.fill
def write_chrome_trace(profile: Any, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if profile._trace is None:
        path.write_text(json.dumps(_from_timeline(profile)))
        return path
    with tempfile.TemporaryDirectory() as tmp:
        raw = Path(tmp) / "trace.json"
        profile._trace.export_chrome_trace(str(raw))
        trace = json.loads(raw.read_text())
    rename_gpu_kernels(trace, profile)
    for e in trace.get("traceEvents", []):
        name = str(e.get("name", ""))
        if name.startswith(_MARK_PREFIX):
            e["name"] = _key_of_label(profile, name)
    path.write_text(json.dumps(trace))
    return path
