"""Torch's warnings during a capture (or a watch), kept on the compilation (the watch) instead of printed.

Dynamo and Inductor speak through two channels: their loggers (``torch._dynamo``, ``torch._inductor``...,
each with torch's own stderr handler; a ``.item()`` graph break logs a 14-line warning there) and
Python's ``warnings``. A capture is a look at the compile, so what torch says belongs to the compilation
(``c.notes``), not to the notebook's output. While a capture runs:

- every record of WARNING or above that a torch logger emits goes to the capture, and the handlers it
  would have reached skip it (records below WARNING, such as ``TORCH_LOGS`` output, still print);
- Python warnings raised from torch's files go to the capture; every other warning (the user's code's,
  other libraries') is shown as it would have been, after the block, through the filters already applied.

Handlers, their filters and the warning filters are the user's again when the block ends.
"""

from __future__ import annotations

import contextlib
import logging
import warnings
from pathlib import Path
from typing import Any, Callable, Iterator

import torch

# (kind, where, message): a logged record's level name ("warning", "error") and logger name, or "warning"
# and a Python warning's category with the torch file and line it came from
Noted = Callable[[str, str, str], None]

_TORCH_DIR = str(Path(torch.__file__).resolve().parent)


def _torch_loggers() -> list[logging.Logger]:
    """The loggers torch gives a handler of its own (``torch``, ``torch._dynamo``, ``torch._inductor``...):
    torch's log registry where this torch has one, else every configured ``torch.*`` logger with a handler."""
    internal = getattr(getattr(torch, "_logging", None), "_internal", None)
    registry = getattr(internal, "log_registry", None)
    names = getattr(registry, "get_log_qnames", None)
    if callable(names):
        qnames = set(names()) | {"torch"}
    else:
        qnames = {"torch"} | {name for name, logger in logging.Logger.manager.loggerDict.items()
                              if name.startswith("torch.") and getattr(logger, "handlers", None)}
    return [logging.getLogger(name) for name in sorted(qnames)]


def _reached_handlers(logger: logging.Logger) -> list[logging.Handler]:
    """The handlers a record logged to ``logger`` reaches (its own, then its parents' while it propagates)."""
    handlers: list[logging.Handler] = []
    current: logging.Logger | None = logger
    while current is not None:
        handlers += current.handlers
        current = current.parent if current.propagate else None
    return handlers


def _is_torchs(record: logging.LogRecord) -> bool:
    return record.levelno >= logging.WARNING and (record.name == "torch" or record.name.startswith("torch."))


class _Keep(logging.Handler):
    """Hands each warning record of torch's to the capture once (one record can reach several torch loggers
    when a user made them propagate)."""

    def __init__(self, noted: Noted) -> None:
        super().__init__(logging.WARNING)
        self.noted = noted
        self.last: logging.LogRecord | None = None

    def emit(self, record: logging.LogRecord) -> None:
        if record is self.last or not _is_torchs(record):
            return
        self.last = record
        try:
            message = record.getMessage()
        except Exception:  # arguments that do not format: the template as it is
            message = str(record.msg)
        self.noted(record.levelname.lower(), record.name, message.strip())


class _SkipTorchWarnings(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not _is_torchs(record)


@contextlib.contextmanager
def _logged_warnings_kept(noted: Noted) -> Iterator[None]:
    keep, skip = _Keep(noted), _SkipTorchWarnings()
    loggers = _torch_loggers()
    quieted = list({id(h): h for logger in loggers for h in _reached_handlers(logger)}.values())
    for handler in quieted:
        handler.addFilter(skip)
    for logger in loggers:
        logger.addHandler(keep)
    try:
        yield
    finally:
        for logger in loggers:
            logger.removeHandler(keep)
        for handler in quieted:
            handler.removeFilter(skip)


def _from_torch(filename: str) -> bool:
    try:
        return str(Path(filename).resolve()).startswith(_TORCH_DIR)
    except (OSError, ValueError):
        return False


@contextlib.contextmanager
def _python_warnings_kept(noted: Noted) -> Iterator[None]:
    caught: list[warnings.WarningMessage] = []
    try:
        with warnings.catch_warnings(record=True) as caught:  # type: ignore[assignment]
            yield
    finally:  # the user's filters and display are back: the others are shown as they would have been
        for warning in caught:
            if _from_torch(warning.filename):
                where = f"{warning.category.__name__} at {_torch_relative(warning.filename)}:{warning.lineno}"
                noted("warning", where, str(warning.message).strip())
            else:
                warnings.showwarning(warning.message, warning.category, warning.filename, warning.lineno,
                                     warning.file, warning.line)


def _torch_relative(filename: str) -> str:
    """torch/_inductor/utils.py rather than the absolute path."""
    path = str(Path(filename).resolve())
    return "torch" + path[len(_TORCH_DIR):] if path.startswith(_TORCH_DIR) else filename


def _once_per_process() -> list[Any]:
    """Dynamo's warnings that torch gives once per process (``functools.cache``d functions): the ``.item()``
    graph break's. Each capture notes its own, so these are cleared for it."""
    try:
        from torch._dynamo.variables.tensor import TensorVariable
    except ImportError:
        return []
    warn = getattr(TensorVariable, "_warn_capture_scalar_outputs", None)
    return [warn] if callable(getattr(warn, "cache_clear", None)) and callable(getattr(warn, "cache_info", None)) else []


@contextlib.contextmanager
def _each_capture_warned() -> Iterator[None]:
    """Torch's once-per-process warnings fire again inside the block; one torch had not given before the
    block is cleared again after it, so a plain ``torch.compile`` later still gives it, as it would have."""
    given_before = {warn: warn.cache_info().currsize > 0 for warn in _once_per_process()}
    for warn in given_before:
        warn.cache_clear()
    try:
        yield
    finally:
        for warn, given in given_before.items():
            if not given:
                warn.cache_clear()


@contextlib.contextmanager
def kept(noted: Noted) -> Iterator[None]:
    """Torch's warnings inside the block go to ``noted(kind, where, message)`` and are not printed."""
    with _python_warnings_kept(noted), _logged_warnings_kept(noted), _each_capture_warned():
        yield


@contextlib.contextmanager
def logged_kept(noted: Noted) -> Iterator[None]:
    """Torch's logged warnings inside the block (a ``.item()`` graph break's) go to ``noted`` and are not
    printed; Python warnings are shown as ever, when they happen: a watch wraps the user's whole loop, whose
    own warnings must not wait for its end."""
    with _logged_warnings_kept(noted), _each_capture_warned():
        yield
