"""torch's structured trace (what ``TORCH_TRACE`` writes and tlparse reads), seen from inside a capture.

``torch._logging.trace_structured`` hands each record to the ``torch.__trace`` logger as a LogRecord
carrying ``metadata`` (the header dict) and ``payload`` (text or None), and builds records only while
that logger has a handler. A handler added for the duration of a capture therefore receives exactly
the records a TORCH_TRACE log of the same compile holds. It is removed on exit (also on errors), and
the logger's level is put back as found.

File names in stack records are interned: a ``str`` record is written the first time a name is seen
in the process, so names interned before the capture are read from the intern table itself.
"""

from __future__ import annotations

import contextlib
import logging
import os
import tempfile
import time
from pathlib import Path
from typing import Callable, Iterator, TextIO

from torch._logging import structured as _structured

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
        try:
            record = record_of(metadata, payload if isinstance(payload, str) else None)
            if record is not None:
                self.callback(record)
            if self.stream is not None:
                self.stream.write(format_record(metadata, payload, created=log_record.created, pid=log_record.process or 0,
                                                pathname=_module_path(log_record.pathname), lineno=log_record.lineno))
        except Exception:  # an observer bug must never break compilation
            pass


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


@contextlib.contextmanager
def on_trace_records(callback: Callable[[Record], None], log_dir: str | Path | None = None,
                     log_file: Path | None = None) -> Iterator[Path | None]:
    """Call ``callback(record)`` for every structured trace record torch emits while active.

    With ``log_dir``, the records are also written to a TORCH_TRACE log there: ``log_file`` when
    given (appended), else a new file. Its path is yielded.
    """
    logger = logging.getLogger(TRACE_LOGGER)
    stream, path = _open_log(log_dir, log_file) if log_dir is not None else (None, None)
    handler = _Collector(callback, stream)
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)  # torch sets it at import; records must pass even if someone changed it
    try:
        yield path
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
        if stream is not None:
            stream.close()

