"""Peak figures of known GPUs from their datasheets (dense, no sparsity; SXM parts unless named).

Plain data, so that a trace can say what its device's roofs are wherever it is read (the roofline of
the Kernels view draws them): ``compiler/runs/devices.py`` uses the same table for ``k.bench()``, and
measures bandwidth for a device that is not listed here.
"""

from __future__ import annotations

from typing import Any

# name substring -> (memory bandwidth B/s, {dtype: dense FLOP/s}); the first substring found in the
# device's name wins, so the more specific names come first.
DATASHEET: tuple[tuple[str, float, dict[str, float]], ...] = (
    ("H200", 4.8e12, {"float32": 66.9e12, "tf32": 494.7e12, "bfloat16": 989.4e12, "float16": 989.4e12}),
    ("H100 80GB HBM3", 3.35e12, {"float32": 66.9e12, "tf32": 494.7e12, "bfloat16": 989.4e12, "float16": 989.4e12}),
    ("H100 PCIe", 2.0e12, {"float32": 51.2e12, "tf32": 378e12, "bfloat16": 756e12, "float16": 756e12}),
    ("A100", 2.039e12, {"float32": 19.5e12, "tf32": 156e12, "bfloat16": 312e12, "float16": 312e12}),
    ("L4", 0.3e12, {"float32": 30.3e12, "tf32": 60e12, "bfloat16": 121e12, "float16": 121e12}),
)


def lookup(device_name: str) -> tuple[str, float, dict[str, float]] | None:
    """The datasheet row of ``device_name`` (key, bandwidth, FLOP/s by dtype), or None for a device not listed."""
    return next((row for row in DATASHEET if row[0] in device_name), None)


def peaks_json(device_name: str) -> dict[str, Any] | None:
    """The ``device_peaks`` record of a trace (compiler/SCHEMA.md), or None for a device not listed."""
    row = lookup(device_name)
    if row is None:
        return None
    key, bandwidth, flops = row
    return {"bandwidth": bandwidth, "flops": dict(flops), "source": f"datasheet ({key}, dense)"}
