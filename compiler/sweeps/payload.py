"""What travels to a worker: the function (or module) and the input sets, as one byte string.

The rule: with ``cloudpickle`` installed (``inductor-explorer[lab]`` and ``[ray]`` bring it), anything
goes, functions and modules defined in a notebook cell included, and the tensors they close over
travel with them. Without it, the standard pickle is used: the function must be importable by its
module path in a fresh process (defined at the top level of a module, not in ``__main__`` or a notebook,
not a lambda or a nested function), and ``pack`` says so before any worker starts.

Tensors travel through ``torch.save``, so a worker maps them onto its own device: a worker pinned to one
GPU sees it as ``cuda:0``, and an input made on ``cuda:1`` in the notebook runs there.
"""

from __future__ import annotations

import io
import pickle
from types import ModuleType
from typing import Any

import torch

from .points import SweepError


def pickler() -> ModuleType:
    """cloudpickle, Ray's copy of it, or the standard pickle."""
    try:
        import cloudpickle

        return cloudpickle
    except ImportError:
        pass
    try:
        from ray import cloudpickle as ray_cloudpickle

        return ray_cloudpickle
    except ImportError:
        return pickle


def pack(target: Any, input_sets: list[tuple[Any, ...]]) -> bytes:
    """``(target, input_sets)`` as bytes a fresh Python process can load; SweepError when it cannot."""
    module = pickler()
    buffer = io.BytesIO()
    try:
        torch.save((target, input_sets), buffer, pickle_module=module)
    except (pickle.PicklingError, AttributeError, TypeError) as exc:
        hint = ("install cloudpickle (pip install cloudpickle) so functions defined in a notebook or a script can "
                "travel, or define the function at the top level of an importable module"
                if module is pickle else "make the function and its inputs picklable (no open files, locks or "
                "live processes in what it refers to)")
        raise SweepError(f"the function and its inputs cannot be sent to the sweep's workers: {exc}; {hint}") from exc
    if module is pickle:
        _check_importable(target)
    return buffer.getvalue()


def _check_importable(target: Any) -> None:
    """The standard pickle stores a function by name: the worker must be able to import it."""
    fn = target.forward if isinstance(target, torch.nn.Module) else target
    owner = type(target) if isinstance(target, torch.nn.Module) else fn
    module = getattr(owner, "__module__", None)
    qualname = getattr(owner, "__qualname__", "")
    if module in (None, "__main__") or "<lambda>" in qualname or "<locals>" in qualname:
        raise SweepError(f"{qualname or owner!r} is defined in {module or 'no module'}, and without cloudpickle a sweep "
                         "worker can only import functions and nn.Module classes defined at the top level of a module "
                         "on its path; install cloudpickle (pip install cloudpickle), or move it into a module")


def _placer(device: str) -> Any:
    """torch.load's map_location: every GPU's storages onto this worker's GPU, the rest where they were;
    on a worker without a GPU, an error naming the device a tensor was on."""
    if device.startswith("cuda"):
        return {"cuda": device, **{f"cuda:{i}": device for i in range(64)}}

    def refuse(storage: Any, location: str) -> Any:
        if location.startswith("cuda"):
            raise RuntimeError(f"an input or parameter lives on {location}, and this sweep worker has no GPU; "
                               "sweep CPU tensors, or run the sweep on a machine with a GPU")
        return storage

    return refuse


def unpack(data: bytes, device: str) -> tuple[Any, list[tuple[Any, ...]]]:
    """The target and input sets again, tensors on ``device`` where they were on a GPU."""
    return torch.load(io.BytesIO(data), map_location=_placer(device), weights_only=False)
