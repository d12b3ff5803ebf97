"""Versions and the device a compilation ran on."""

from __future__ import annotations

import platform
from typing import Any

import torch


def triton_version() -> str | None:
    try:
        import triton

        return triton.__version__
    except Exception:
        return None


def device_name(device: str) -> str:
    if device.startswith("cuda") and torch.cuda.is_available():
        return torch.cuda.get_device_name(torch.device(device))
    return f"{platform.machine()} CPU"


def describe(device: str) -> dict[str, Any]:
    return {
        "device": device.split(":")[0],
        "device_name": device_name(device),
        "torch": torch.__version__,
        "triton": triton_version(),
        "python": platform.python_version(),
    }
