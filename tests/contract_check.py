"""A payload walked against its declaration in compiler/model/contract.py (a TypedDict, and the types its
fields name): every key declared is there, no key is not, and every value has its declared type, all the
way down. Returns what is wrong, one line per mismatch, each with its path (``events[2].step``)."""

from __future__ import annotations

import types
import typing
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints


def mismatches(value: Any, declared: Any, path: str = "payload") -> list[str]:
    """What in ``value`` does not match ``declared``; [] when it all does."""
    if typing.is_typeddict(declared):
        return _typed_dict(value, declared, path)
    origin, args = get_origin(declared), get_args(declared)
    if declared is Any:
        return []
    if declared is None or declared is type(None):
        return [] if value is None else [f"{path}: expected None, got {value!r}"]
    if origin is Literal:
        return [] if value in args else [f"{path}: expected one of {args}, got {value!r}"]
    if origin in (Union, types.UnionType):
        tried = [mismatches(value, arm, path) for arm in args]
        return [] if any(not found for found in tried) else min(tried, key=len)
    if origin is list:
        if not isinstance(value, list):
            return [f"{path}: expected a list, got {type(value).__name__}"]
        return [m for i, item in enumerate(value) for m in mismatches(item, args[0], f"{path}[{i}]")]
    if origin is dict:
        if not isinstance(value, dict):
            return [f"{path}: expected a dict, got {type(value).__name__}"]
        return [m for k, item in value.items()
                for m in mismatches(k, args[0], f"{path} key") + mismatches(item, args[1], f"{path}[{k!r}]")]
    if declared is float:  # JSON does not tell 1 from 1.0
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    elif declared is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    else:
        ok = isinstance(value, declared)
    return [] if ok else [f"{path}: expected {getattr(declared, '__name__', declared)}, got {value!r}"]


def _typed_dict(value: Any, declared: Any, path: str) -> list[str]:
    if not isinstance(value, dict):
        return [f"{path}: expected a {declared.__name__} (a dict), got {type(value).__name__}"]
    fields = get_type_hints(declared)
    found = [f"{path}: {declared.__name__} has no key {key!r}" for key in value if key not in fields]
    found += [f"{path}: {declared.__name__}'s key {key!r} is missing" for key in fields
              if key not in value and key in declared.__required_keys__]
    for key, hint in fields.items():
        if key in value:
            found += mismatches(value[key], hint, f"{path}.{key}")
    return found
