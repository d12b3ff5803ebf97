"""Peak figures of the device, with where each number comes from.

Datasheet numbers (dense, no sparsity) keyed by a substring of the device name; for a device not in
the table, bandwidth is measured (a large device-to-device copy, bytes read + written) and compute
peaks are unknown (None), so no fraction is claimed for them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import torch

# name substring -> (memory bandwidth B/s, {dtype: dense FLOP/s}); NVIDIA datasheets, SXM parts.
_DATASHEET: tuple[tuple[str, float, dict[str, float]], ...] = (
    ("H200", 4.8e12, {"float32": 66.9e12, "tf32": 494.7e12, "bfloat16": 989.4e12, "float16": 989.4e12}),
    ("H100 80GB HBM3", 3.35e12, {"float32": 66.9e12, "tf32": 494.7e12, "bfloat16": 989.4e12, "float16": 989.4e12}),
    ("H100 PCIe", 2.0e12, {"float32": 51.2e12, "tf32": 378e12, "bfloat16": 756e12, "float16": 756e12}),
    ("A100", 2.039e12, {"float32": 19.5e12, "tf32": 156e12, "bfloat16": 312e12, "float16": 312e12}),
    ("L4", 0.3e12, {"float32": 30.3e12, "tf32": 60e12, "bfloat16": 121e12, "float16": 121e12}),
)


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
    for key, bandwidth, flops in _DATASHEET:
        if key in props.name:
            return DevicePeaks(props.name, props.multi_processor_count, bandwidth, f"datasheet ({key})",
                               dict(flops), f"datasheet ({key}, dense)")
    return DevicePeaks(props.name, props.multi_processor_count, measured_bandwidth(device),
                       "measured (device-to-device copy)")
