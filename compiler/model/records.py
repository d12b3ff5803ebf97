"""Plain-dict round trips for the report dataclasses that live in the trace (memory, wrapper FX, kernel IR).

Readers keep only the fields the class has, so a trace written by a newer version with extra keys still
loads, and a missing optional key takes the field's default.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, TypeVar

T = TypeVar("T")


def json_float(value: float | None) -> float | str | None:
    """Non-finite floats as strings ("inf", "nan"): the trace is strict JSON."""
    return value if value is None or math.isfinite(value) else str(value)


def to_dict(obj: Any, skip: tuple[str, ...] = ()) -> dict[str, Any]:
    """A dataclass's JSON fields (live handles named in ``skip`` are left out)."""
    return {f.name: _plain(getattr(obj, f.name)) for f in dataclasses.fields(obj) if f.name not in skip}


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return to_dict(value)
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return value


def from_dict(cls: type[T], data: Any, **nested: Any) -> T:
    """``cls`` from ``data``'s known keys; ``nested`` maps a field name to a converter for its value."""
    if not isinstance(data, dict):
        raise TypeError(f"{cls.__name__} should be an object, got {type(data).__name__}")
    names = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    values = {k: v for k, v in data.items() if k in names}
    for key, convert in nested.items():
        if values.get(key) is not None:
            values[key] = convert(values[key])
    return cls(**values)
