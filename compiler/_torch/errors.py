"""Telling Dynamo's own errors apart and unwrapping the backend failure it reports."""

from __future__ import annotations

import os
import re
import traceback
from functools import lru_cache
from pathlib import Path

import torch
from torch._dynamo import exc as _exc

# Where Dynamo splits a function at a graph break, the rest runs as a function of its own named after it
_RESUME_NAME = re.compile(r"torch_dynamo_resume_in_(?P<function>.+)_at_\d+")
# torch's compiler itself: a frame of these below the user's means the compiler raised, not the user's code
_COMPILER_PACKAGES = ("_dynamo", "_functorch", "_inductor")


def is_dynamo_error(error: BaseException) -> bool:
    return isinstance(error, getattr(_exc, "TorchDynamoException", ()))


def backend_cause(error: BaseException) -> BaseException | None:
    """The exception the compiler backend raised, when Dynamo wrapped one."""
    if isinstance(error, getattr(_exc, "BackendCompilerFailed", ())):
        return getattr(error, "inner_exception", None) or error.__cause__
    return None


def root_cause(error: BaseException) -> BaseException:
    """What torch (or the user's code) raised inside the user's call, which Dynamo wrapped in its own
    errors: following Dynamo's wrappers (chained as cause or, where Dynamo raised ``from None``, as
    context), the first exception that Dynamo did not raise; ``error`` itself when there is none."""
    current: BaseException | None = error
    seen: set[int] = set()
    while current is not None and id(current) not in seen and _raised_by_dynamo(current):
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return current if current is not None and id(current) not in seen else error


def _raised_by_dynamo(error: BaseException) -> bool:
    """One of Dynamo's exception types, or a plain one that only wraps another and quotes it (torch 2.14
    raises ``RuntimeError("Dynamo failed to run FX node ...: got RuntimeError('...')") from`` the
    original)."""
    cause = error.__cause__
    return is_dynamo_error(error) or (cause is not None and bool(str(cause)) and str(cause) in str(error))


def user_stack(error: BaseException) -> list[tuple[str, int, str]]:
    """The frames of the user's code Dynamo was tracing when it failed (its ``real_stack``), outermost
    first; [] when no error of the chain recorded them."""
    current: BaseException | None = error
    seen: set[int] = set()
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        stack = getattr(current, "real_stack", None)
        if stack:
            return [(f.filename, int(f.lineno or 0), f.name) for f in stack]
        current = current.__cause__ or current.__context__
    return []


def raised_through(error: BaseException) -> list[tuple[str, int, str]]:
    """The frames ``error`` passed through on its way out (its traceback), outermost first, each function
    named as the user wrote it (Dynamo's resume function of ``f`` as ``f``)."""
    return [(frame.filename, int(frame.lineno or 0), _written_name(frame.name))
            for frame in traceback.extract_tb(error.__traceback__)]


def _written_name(function: str) -> str:
    match = _RESUME_NAME.fullmatch(function)
    return match.group("function") if match else function


def in_compiler(file: str) -> bool:
    """A file of torch's compiler (Dynamo, AOTAutograd, Inductor)."""
    return any(_normal(file).startswith(os.path.join(_torch_dir(), package, "")) for package in _COMPILER_PACKAGES)


def generated_by_torch(file: str) -> bool:
    """Code torch wrote while compiling: an FX graph's (``<eval_with_key>.3``) or a module Inductor generated
    in its cache directory. (Other ``<...>`` names are the user's: an IPython cell, ``python -c``.)"""
    if file.startswith("<"):
        return file.startswith("<eval_with_key>")
    cache = _inductor_cache_dir()
    return cache is not None and _normal(file).startswith(cache)


@lru_cache(maxsize=1)
def _torch_dir() -> str:
    return _normal(str(Path(torch.__file__).parent))


def _inductor_cache_dir() -> str | None:
    """Where Inductor writes the modules it generates, read the way Inductor reads it, without its
    ``cache_dir()`` (which also sets the environment variable and makes the directory); None where this
    torch does not say."""
    try:
        from torch._inductor.runtime import cache_dir_utils
    except ImportError:
        return None
    default = getattr(cache_dir_utils, "default_cache_dir", None)
    directory = os.environ.get("TORCHINDUCTOR_CACHE_DIR") or (default() if callable(default) else None)
    return os.path.join(_normal(directory), "") if directory else None


def _normal(file: str) -> str:
    return os.path.normcase(os.path.realpath(file))
