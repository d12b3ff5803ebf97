"""torch's structured trace (what ``TORCH_TRACE`` writes and tlparse reads), seen from inside a capture.

``torch._logging.trace_structured`` hands each record to the ``torch.__trace`` logger as a LogRecord
carrying ``metadata`` (the header dict) and ``payload`` (text or None), and builds records only while
that logger has a handler. A handler added for the duration of a capture therefore receives exactly
the records a TORCH_TRACE log of the same compile holds. It is removed on exit (also on errors), and
the logger's level is put back as found.

Records the capture does not read are not built at all while its handler is the only one (no
TORCH_TRACE log, no other reader): torch builds a record's metadata and payload whenever any handler
listens, and for a 24-block training step those (graphs printed with ``print_readable``, tensor
descriptions, each hashed and dumped) took 4 to 10 s of a 40 s capture (benchmarks/trace_filter.py). ``_only_records_read`` points every module's
``trace_structured`` at a filter for the capture's duration.

File names in stack records are interned: a ``str`` record is written the first time a name is seen
in the process, so names interned before the capture are read from the intern table itself.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Collection, Iterator, TextIO

from torch._logging import _internal
from torch._logging import structured as _structured

from . import guard

from ..model.trace_log import Record, format_record, record_of

TRACE_LOGGER = "torch.__trace"
LOG_PREFIX = "dedicated_log_torch_trace_"  # torch's own name for these files (LazyTraceHandler)


def interned_filenames() -> dict[int, str]:
    """Intern index -> file name, for every name interned in this process so far."""
    table = getattr(_structured, "INTERN_TABLE", None) or {}
    return {index: name for name, index in dict(table).items()}


def rank() -> int | None:
    import torch.distributed as dist

    return dist.get_rank() if dist.is_available() and dist.is_initialized() else None


class _Collector(logging.Handler):
    def __init__(self, callback: Callable[[Record], None], stream: TextIO | None) -> None:
        super().__init__(logging.DEBUG)
        self.callback = callback
        self.stream = stream

    def emit(self, log_record: logging.LogRecord) -> None:
        metadata = getattr(log_record, "metadata", None)
        payload = getattr(log_record, "payload", None)
        if not isinstance(metadata, dict):
            return
        with guard.never_breaking(__name__):
            record = record_of(metadata, payload if isinstance(payload, str) else None)
            if record is not None:
                self.callback(record)
            if self.stream is not None:
                self.stream.write(format_record(metadata, payload, created=log_record.created, pid=log_record.process or 0,
                                                pathname=_module_path(log_record.pathname), lineno=log_record.lineno))


def _module_path(pathname: str) -> str:
    """torch/_dynamo/utils.py rather than the absolute path (as torch's formatter writes it)."""
    marker = f"{os.sep}torch{os.sep}"
    return "torch" + os.sep + pathname.rsplit(marker, 1)[1] if marker in pathname else pathname


def _open_log(log_dir: str | Path, existing: Path | None) -> tuple[TextIO, Path]:
    """``existing`` reopened for appending, else a new log file in ``log_dir`` named as torch names its
    own (``dedicated_log_torch_trace_rank_N_<random>.log``)."""
    if existing is not None:
        stream, path = open(existing, "a", encoding="utf-8"), existing
    else:
        directory = Path(log_dir)
        directory.mkdir(parents=True, exist_ok=True)
        current = rank()
        prefix = LOG_PREFIX + (f"rank_{current}_" if current is not None else "")
        fd, name = tempfile.mkstemp(suffix=".log", prefix=prefix, dir=directory)
        stream, path = os.fdopen(fd, "w", encoding="utf-8"), Path(name)
    for index, filename in sorted(interned_filenames().items()):  # names interned before the capture
        stream.write(format_record({"str": [filename, index]}, None, created=time.time(), pid=os.getpid(),
                                   pathname="torch/_logging/structured.py", lineno=0))
    return stream, path


def _no_payload() -> None:
    return None


def _modules_binding(function: Any) -> list[Any]:
    """Modules whose global ``trace_structured`` is ``function`` (torch's modules import it by name)."""
    found = []
    for module in list(sys.modules.values()):
        try:
            if vars(module).get("trace_structured") is function:
                found.append(module)
        except TypeError:  # not a module (sys.modules may hold anything)
            continue
    return found


@contextlib.contextmanager
def _only_records_read(logger: logging.Logger, handler: logging.Handler, reads: Collection[str],
                       payloads: Collection[str]) -> Iterator[None]:
    """While ``handler`` is ``logger``'s only handler, records of kinds outside ``reads`` are not built,
    and payloads only for kinds in ``payloads``; with any other handler (TORCH_TRACE) every record is."""
    original = getattr(_internal, "trace_structured", None)
    if not callable(original):
        yield
        return

    def trace_structured(name: str, metadata_fn: Callable[[], Any] = dict, *,
                         payload_fn: Callable[[], Any] = _no_payload, **kwargs: Any) -> None:
        if logger.handlers == [handler]:
            kind = name
            if name == "artifact":  # named by its metadata (graph break reasons, recompile reasons)
                metadata = metadata_fn()
                metadata_fn = lambda: metadata  # noqa: E731 - built once
                kind = metadata.get("name", name) if isinstance(metadata, dict) else name
            if kind not in reads:
                return None
            if kind not in payloads:
                payload_fn = _no_payload
        return original(name, metadata_fn, payload_fn=payload_fn, **kwargs)

    for module in _modules_binding(original):
        module.trace_structured = trace_structured
    try:
        yield
    finally:
        for module in _modules_binding(trace_structured):  # modules imported meanwhile bound it too
            module.trace_structured = original


@contextlib.contextmanager
def on_trace_records(callback: Callable[[Record], None], log_dir: str | Path | None = None,
                     log_file: Path | None = None, reads: Collection[str] | None = None,
                     payloads: Collection[str] = ()) -> Iterator[Path | None]:
    """Call ``callback(record)`` for every structured trace record torch emits while active.

    With ``log_dir``, the records are also written to a TORCH_TRACE log there: ``log_file`` when
    given (appended), else a new file. Its path is yielded. Without a log, ``reads`` names the record
    kinds the callback uses and ``payloads`` those whose payload it reads: torch skips building the
    others while nothing else listens.
    """
    logger = logging.getLogger(TRACE_LOGGER)
    stream, path = _open_log(log_dir, log_file) if log_dir is not None else (None, None)
    handler = _Collector(callback, stream)
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)  # torch sets it at import; records must pass even if someone changed it
    filtered = _only_records_read(logger, handler, reads, payloads) if reads is not None and stream is None \
        else contextlib.nullcontext()
    try:
        with filtered:
            yield path
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
        if stream is not None:
            stream.close()

