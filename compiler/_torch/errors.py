"""Telling Dynamo's own errors apart and unwrapping the backend failure it reports."""

from __future__ import annotations

from torch._dynamo import exc as _exc


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
