"""Profile.export_chrome_trace: a Chrome / Perfetto trace whose kernels carry the explorer's ids.

Live profiles write torch.profiler's own trace: on CPU the explorer's kernel marks take their kernel's
key, on a GPU every CUDA kernel the profile attributed takes the key of its kernel (found by its CUPTI
``correlation``; its CUDA name kept in ``args``). Loaded profiles write the recorded run's kernel slices.
"""

from __future__ import annotations

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
    """Name GPU kernel events after the explorer kernel they were attributed to (by their CUPTI
    ``correlation``); returns how many."""
    renamed = 0
    for e in trace.get("traceEvents", []):
        key = profile._gpu_kernel_keys.get(e.get("args", {}).get("correlation")) if e.get("cat") == "kernel" else None
        if key is not None:
            e["args"]["cuda_name"] = e.get("name")
            e["name"] = key
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
