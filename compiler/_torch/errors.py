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
