"""Trace files: writing one (plain JSON, or gzip-compressed JSON for a name ending in ``.gz``) and opening
one whatever it holds (a Compilation or a TraceSet, compressed or not).

A file that cannot be opened gets one line that names it, says what is wrong with it (not gzip, cut
short, not JSON, JSON of something else) and what files ``load`` reads: it is what ``python -m explorer
show`` prints, so a newcomer with the wrong file learns which one to give instead."""

from __future__ import annotations

import gzip
import json
import zlib
from pathlib import Path
from typing import Any

from ..model import slots
from ..model.contract import SCHEMAS, TRACESET_SCHEMA, collector_paused
from ..model.errors import TraceFormatError
from . import trace, traceset

_GZIP_MAGIC = b"\x1f\x8b"
# what load reads, said at the end of every "this is not one" message
WHAT_LOAD_READS = "open a file saved by c.save(path), ts.save(path) or sweep.save(path) (.json or .json.gz)"


@slots.write_json.fill
def write(data: Any, path: str | Path) -> Path:
    """Compact JSON; gzip-compressed when ``path`` ends with ``.gz`` (a large model's trace is mostly
    kernel sources and Triton IR text, which compress about 8x)."""
    path = Path(path)
    text = json.dumps(data, separators=(",", ":")).encode("utf-8")
    path.write_bytes(gzip.compress(text, compresslevel=6) if path.suffix == ".gz" else text)
    return path


def _text(path: Path) -> str:
    """The file's JSON text, gunzipped when it starts with gzip's magic bytes (whatever its name)."""
    raw = path.read_bytes()
    if raw[:2] == _GZIP_MAGIC:
        try:
            raw = gzip.decompress(raw)
        except (EOFError, OSError, zlib.error) as exc:
            raise TraceFormatError(f"{path} is a damaged or truncated gzip file ({exc}); "
                                   "copy or save it again") from None
    elif path.suffix == ".gz" and raw.lstrip()[:1] != b"{":  # a plain trace renamed .gz still opens
        raise TraceFormatError(f"{path} is not a gzip-compressed trace: its name ends in .gz but its first bytes "
                               f"are {raw[:2].hex(' ') or 'missing (empty file)'}, not gzip's 1f 8b; {WHAT_LOAD_READS}")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise TraceFormatError(f"{path} is not a JSON trace: byte {exc.start} (0x{raw[exc.start]:02x}) is not "
                               f"UTF-8 text, the file is binary; {WHAT_LOAD_READS}") from None


def _json(path: Path, text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        # json's "Unterminated string starting at" ends with the "at" of its position: not said twice
        problem = (f"{exc.msg.removesuffix(' at')} at line {exc.lineno}, column {exc.colno}, "
                   f"character {exc.pos} of {len(text)}")
        if not text.strip():
            raise TraceFormatError(f"{path} is empty, not a JSON trace; {WHAT_LOAD_READS}") from None
        if _cut_short(exc, text):
            raise TraceFormatError(f"{path} is truncated: its JSON stops in the middle ({problem}); "
                                   "the file was not written or copied completely, save it again") from None
        raise TraceFormatError(f"{path} is not a JSON trace: invalid JSON ({problem}); "
                               f"{WHAT_LOAD_READS}") from None


def _cut_short(exc: json.JSONDecodeError, text: str) -> bool:
    """The JSON was valid up to where the text ends: a file written or copied only in part."""
    return exc.msg.startswith("Unterminated string") or exc.pos >= len(text.rstrip())


_JSON_KINDS = {list: "a list", str: "a string", int: "a number", float: "a number", bool: "true or false",
               type(None): "null"}


def _schema_error(path: Path, data: Any) -> TraceFormatError | None:
    """Why ``data`` is no file of inductor-explorer's schemas (None when it says it is one)."""
    if not isinstance(data, dict):
        return TraceFormatError(f"{path} is not an inductor-explorer trace: its JSON is {_JSON_KINDS[type(data)]}, "
                                f"not an object with a \"schema\" key; {WHAT_LOAD_READS}")
    if "schema" not in data:
        return TraceFormatError(f"{path} is not an inductor-explorer trace: its JSON object has no \"schema\" key; "
                                f"{WHAT_LOAD_READS}")
    if data["schema"] not in SCHEMAS and data["schema"] not in slots.loaders:
        return TraceFormatError(f"{path} is not an inductor-explorer trace: its schema is {data['schema']!r}, "
                                f"none of {', '.join(map(repr, SCHEMAS))}; {WHAT_LOAD_READS}")
    return None


def load(path: str | Path) -> Any:
    """A saved Compilation (``Compilation.save``), a saved TraceSet (``TraceSet.save``), or a file of a
    schema another room loads (``slots.loaders``: a saved Sweep)."""
    path = Path(path)
    with collector_paused():
        data = _json(path, _text(path))
        error = _schema_error(path, data)
        if error is not None:
            raise error
        if data["schema"] == TRACESET_SCHEMA:
            return traceset.from_json(data, origin=str(path))
        if data["schema"] in slots.loaders:
            return slots.loaders[data["schema"]](data, str(path))
        return trace.from_json(data, origin=str(path))
