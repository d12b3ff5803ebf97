"""Peak figures of the device, with where each number comes from.

Datasheet numbers (compiler/model/datasheet.py, also what a trace records as its roofs); for a device not in
the table, bandwidth is measured (a large device-to-device copy, bytes read + written) and compute
peaks are unknown (None), so no fraction is claimed for them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import torch

from ..model.datasheet import lookup


@dataclass(frozen=True)
class DevicePeaks:
    name: str
    sm_count: int
    bandwidth: float  # bytes/s
    bandwidth_source: str
    flops: dict[str, float] = field(default_factory=dict)  # dtype -> FLOP/s
    flops_source: str = "unknown"

    def flops_for(self, dtype: str) -> float | None:
        return self.flops.get(dtype.replace("torch.", ""))


def measured_bandwidth(device: int = 0, nbytes: int = 1 << 30) -> float:
    """Device-to-device copy bandwidth (bytes read + written per second), median of 10 copies."""
    src = torch.empty(nbytes // 4, dtype=torch.float32, device=f"cuda:{device}")
    dst = torch.empty_like(src)
    times = []
    for _ in range(12):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        dst.copy_(src)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 1e3)
    median = sorted(times[2:])[len(times[2:]) // 2]
    return 2 * nbytes / median


@lru_cache(maxsize=None)
def peaks(device: int = 0) -> DevicePeaks:
    if not torch.cuda.is_available():
        raise RuntimeError("no CUDA device: kernel benchmarks need a GPU")
    props = torch.cuda.get_device_properties(device)
    row = lookup(props.name)
    if row is not None:
        key, bandwidth, flops = row
        return DevicePeaks(props.name, props.multi_processor_count, bandwidth, f"datasheet ({key})",
                           dict(flops), f"datasheet ({key}, dense)")
    return DevicePeaks(props.name, props.multi_processor_count, measured_bandwidth(device),
                       "measured (device-to-device copy)")
