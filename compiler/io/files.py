"""Trace files: writing one (plain JSON, or gzip-compressed JSON for a name ending in ``.gz``) and opening
one whatever it holds (a Compilation or a TraceSet, compressed or not)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

from ..model import slots
from ..model.contract import TRACESET_SCHEMA, collector_paused
from ..model.errors import TraceFormatError
from . import trace, traceset

_GZIP_MAGIC = b"\x1f\x8b"


@slots.write_json.fill
def write(data: Any, path: str | Path) -> Path:
    """Compact JSON; gzip-compressed when ``path`` ends with ``.gz`` (a large model's trace is mostly
    kernel sources and Triton IR text, which compress about 8x)."""
    path = Path(path)
    text = json.dumps(data, separators=(",", ":")).encode("utf-8")
    path.write_bytes(gzip.compress(text, compresslevel=6) if path.suffix == ".gz" else text)
    return path


def _text(path: Path) -> str:
    raw = path.read_bytes()
    return (gzip.decompress(raw) if raw[:2] == _GZIP_MAGIC else raw).decode("utf-8")


def load(path: str | Path) -> Any:
    """A saved Compilation (``Compilation.save``), a saved TraceSet (``TraceSet.save``), or a file of a
    schema another room loads (``slots.loaders``: a saved Sweep)."""
    path = Path(path)
    with collector_paused():
        try:
            data = json.loads(_text(path))
        except json.JSONDecodeError as exc:
            raise TraceFormatError(f"{path} is not a JSON trace ({exc.msg} at line {exc.lineno}); "
                                   "save traces with Compilation.save(path)") from exc
        if isinstance(data, dict) and data.get("schema") == TRACESET_SCHEMA:
            return traceset.from_json(data, origin=str(path))
        if isinstance(data, dict) and data.get("schema") in slots.loaders:
            return slots.loaders[data["schema"]](data, str(path))
        return trace.from_json(data, origin=str(path))
