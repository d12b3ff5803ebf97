"""The recording machine's paths, made neutral before a recorder saves a fixture.

A recorded trace, log or Nsight Compute export quotes where things lived on the machine that made it:
the repository checkout (``/work/main/tests/workloads.py``), installed packages
(``/opt/torch/.venv/lib/python3.12/site-packages/torch/...``), Inductor's cache and other temporary
files. Kept as recorded, every re-recording would differ by machine and the fixtures would speak of one
machine's layout. Every recorder (tests/record_*.py) passes what it saves through ``neutral_paths``, by
``neutralize_file``; tests/unit/test_fixture_paths.py checks that no fixture holds such a path.

    <repo>/tests/workloads.py                      -> tests/workloads.py
    /opt/x/.venv/lib/python3.12/site-packages/...  -> <site-packages>/...
    /tmp/torchinductor_root/tmpab12/x/cx.py        -> <inductor-cache>/tmpab12/x/cx.py
    /tmp/tmpq1w2/scaled.pt2                        -> <tmp>/tmpq1w2/scaled.pt2
    /opt/gcc/bin/g++                               -> <bin>/g++
"""

from __future__ import annotations

import gzip
import hashlib
import re
from pathlib import Path
from typing import Iterable

ROOT = Path(__file__).resolve().parents[1]

# a path starts where no path character precedes it, or right after an escaped newline or tab in JSON text
_START = r"(?:(?<![\w.~/<>-])|(?<=\\[nt]))"
_SEGMENT = r"[^\s/\"'<>:(),=\\]+"
_SITE_PACKAGES = re.compile(rf"{_START}/(?:{_SEGMENT}/)+?(?:site|dist)-packages/")
_INDUCTOR_CACHE = re.compile(rf"{_START}/tmp/torchinductor_{_SEGMENT}/")
_TMP = re.compile(rf"{_START}/tmp/")
_PROGRAM_DIR = re.compile(rf"{_START}/(?:{_SEGMENT}/)*?bin/(?={_SEGMENT})")  # a program's directory (cpp.cxx)
_CHECKSUM = re.compile(r'"has_payload": "[0-9a-f]*"')


def neutral_paths(text: str, roots: Iterable[str | Path] = (ROOT,)) -> str:
    """``text`` with the recording machine's paths rewritten: installed packages to ``<site-packages>/``,
    Inductor's cache to ``<inductor-cache>/``, other temporary files to ``<tmp>/``, programs' directories
    to ``<bin>/``, and files of the repository (a checkout at any of ``roots``) relative to it. Lengths
    change; line numbers do not."""
    text = _SITE_PACKAGES.sub("<site-packages>/", text)  # first: a virtual environment may sit in the checkout
    for root in sorted({str(r).rstrip("/") for r in roots}, key=len, reverse=True):  # then: it may sit in /tmp
        text = re.sub(rf"{_START}{re.escape(root)}/", "", text)
    text = _INDUCTOR_CACHE.sub("<inductor-cache>/", text)
    text = _TMP.sub("<tmp>/", text)
    return _PROGRAM_DIR.sub("<bin>/", text)


def neutralize_file(path: str | Path, roots: Iterable[str | Path] = (ROOT,)) -> None:
    """Rewrite a file a recorder saved through ``neutral_paths``: gzip-compressed files in place (with no
    timestamp, so equal content gives equal bytes), and a TORCH_TRACE log with each payload's md5 in its
    header made again (the reader drops a record whose payload does not match it)."""
    path = Path(path)
    raw = path.read_bytes()
    zipped = raw[:2] == b"\x1f\x8b"
    text = (gzip.decompress(raw) if zipped else raw).decode("utf-8")
    roots = list(roots)
    text = _neutral_log(text, roots) if path.suffix == ".log" else neutral_paths(text, roots)
    data = text.encode("utf-8")
    path.write_bytes(gzip.compress(data, mtime=0) if zipped else data)


def _neutral_log(text: str, roots: list[str | Path]) -> str:
    """A TORCH_TRACE log rewritten record by record: a header, then its payload lines (tab-indented)."""
    out: list[str] = []
    header: str | None = None
    payload: list[str] = []

    def flush() -> None:
        if header is None:
            return
        out.append(neutral_paths(header, roots))
        if payload:
            before = "\n".join(line[1:] for line in payload)
            body = neutral_paths(before, roots)
            if body != before:
                md5 = hashlib.md5(body.encode("utf-8"), usedforsecurity=False).hexdigest()
                out[-1] = _CHECKSUM.sub(f'"has_payload": "{md5}"', out[-1])
            out.extend(f"\t{line}" for line in body.split("\n"))

    for line in text.split("\n"):
        if line.startswith("\t"):
            payload.append(line)
            continue
        flush()
        header, payload = line, []
    flush()
    return "\n".join(out)
