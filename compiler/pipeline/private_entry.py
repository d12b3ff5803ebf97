"""A private entry function for whatever the user compiles, so Dynamo's cache for it is the caller's alone.

Dynamo keys its cache on the code object: compiling the user's own function would share (and evict) the
entries of their own ``torch.compile`` of it. The capture and each bisect trial compile a clone instead.
"""

from __future__ import annotations

import types
from typing import Any, Callable

import torch


def clone_function(fn: types.FunctionType) -> types.FunctionType:
    """The same function with its own code object (its name, qualname and module kept for Dynamo's records)."""
    clone = types.FunctionType(fn.__code__.replace(), fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)
    clone.__kwdefaults__ = fn.__kwdefaults__
    clone.__qualname__ = fn.__qualname__
    clone.__module__ = fn.__module__
    return clone


def private_entry(target: Any) -> tuple[Callable[..., Any], str]:
    """A private entry function for ``target`` (a function, a bound method, an nn.Module or any callable;
    what a ``torch.compile`` wrapper wraps) and the name to show for it."""
    original = getattr(target, "_orig_mod", None) or getattr(target, "_torchdynamo_orig_callable", None)
    if original is not None:  # already wrapped by torch.compile: explore what it wraps
        target = original
    if isinstance(target, types.FunctionType):
        return clone_function(target), target.__qualname__
    if isinstance(target, types.MethodType) and isinstance(target.__func__, types.FunctionType):
        return types.MethodType(clone_function(target.__func__), target.__self__), target.__qualname__
    if not callable(target):
        raise TypeError(f"explorer.compile needs a function or nn.Module, got {type(target).__name__}")

    self = target  # Dynamo names graph inputs after this variable: l_self_modules_fc_parameters_weight_

    def entry(*args: Any, **kwargs: Any) -> Any:
        return self(*args, **kwargs)

    name = type(target).__name__ if isinstance(target, torch.nn.Module) else getattr(target, "__qualname__", repr(target))
    return clone_function(entry), name
