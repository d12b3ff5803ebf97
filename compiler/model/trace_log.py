"""The TORCH_TRACE log format: structured records, read and written as text, never evaluated.

torch writes one record per header line, glog style, and the record's payload (a graph, the output
code, a JSON document) on the lines after it, each indented by one tab::

    V1122 16:52:19.957000 31328 torch/_dynamo/convert_frame.py:303] {"dynamo_start": {...}, "frame_id": 0, ...}
    \t<payload line>
    \t<payload line>

The header's first key names the record (``dynamo_start``, ``artifact``, ``compilation_metrics``...);
``frame_id``/``frame_compile_id`` (and ``compiled_autograd_id``) say which compile it belongs to, as
Dynamo's compile id ``0/1`` does; ``has_payload`` is the payload's md5. The same ``Record`` comes
from a file (``read_records``) and from inside a running capture (compiler/_torch/structured_trace.py).
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, BinaryIO, Callable, Iterator

_HEADER = re.compile(rb"^[A-Z]\d{4} \d\d:\d\d:\d\d\.\d+ +\d+ [^\]]*\] (?P<json>\{.*)$")
_CONTEXT_KEYS = ("rank", "frame_id", "frame_compile_id", "compiled_autograd_id", "attempt", "has_payload")
_EXAMPLES = 3


@dataclass
class Record:
    """One structured trace record."""

    kind: str  # the header's first key: dynamo_start, artifact, compilation_metrics, ...
    data: Any  # that key's value (a dict for most kinds)
    compile_id: str | None = None  # "0/1", "!0/0/1" under compiled autograd, None for global records
    attempt: int = 0
    rank: int | None = None
    checksum: str | None = None  # md5 of the payload, as torch wrote it
    payload: str | None = None
    line: int = 0  # 1-based header line in its log (0 when seen live)

    @property
    def name(self) -> str:
        """The kind, or the artifact's own name for ``artifact`` records."""
        if self.kind == "artifact" and isinstance(self.data, dict):
            return str(self.data.get("name", "artifact"))
        return self.kind

    def payload_intact(self) -> bool:
        """False when the payload is not what the header's checksum says (a truncated or edited log)."""
        if self.checksum is None or self.payload is None:
            return self.checksum is None
        return hashlib.md5(self.payload.encode("utf-8"), usedforsecurity=False).hexdigest() == self.checksum

    def json_payload(self) -> Any:
        return json.loads(self.payload) if self.payload else None


def compile_id_of(metadata: dict[str, Any]) -> str | None:
    """Dynamo's spelling of a compile id (torch._guards.CompileId.__str__)."""
    frame, frame_compile = metadata.get("frame_id"), metadata.get("frame_compile_id")
    autograd = metadata.get("compiled_autograd_id")
    if autograd is not None:
        return f"!{autograd}" + (f"/{frame}/{frame_compile}" if frame is not None else "")
    if frame is None:
        return None
    return f"{frame}/{frame_compile}"


def record_of(metadata: dict[str, Any], payload: str | None, line: int = 0) -> Record | None:
    """A Record from a header dict (None when it names no record)."""
    kind = next((key for key in metadata if key not in _CONTEXT_KEYS), None)
    if kind is None:
        return None
    rank = metadata.get("rank")
    attempt = metadata.get("attempt")
    return Record(kind=kind, data=metadata[kind], compile_id=compile_id_of(metadata),
                  attempt=attempt if isinstance(attempt, int) else 0, rank=rank if isinstance(rank, int) else None,
                  checksum=metadata.get("has_payload"), payload=payload, line=line)


@dataclass
class LogProblems:
    """What a reader could not use, counted (never fatal): malformed lines, unknown records, truncation."""

    malformed: int = 0
    malformed_examples: list[tuple[int, str]] = field(default_factory=list)
    unknown: Counter = field(default_factory=Counter)  # record kinds this reader does not know
    checksum_mismatches: list[int] = field(default_factory=list)  # header lines
    truncated: str = ""
    notes: list[str] = field(default_factory=list)

    def bad_line(self, line: int, text: bytes) -> None:
        self.malformed += 1
        if len(self.malformed_examples) < _EXAMPLES:
            self.malformed_examples.append((line, text[:120].decode("utf-8", "replace").rstrip()))

    def messages(self) -> list[str]:
        out = []
        if self.truncated:
            out.append(self.truncated)
        if self.malformed:
            shown = "; ".join(f"line {n}: {text!r}" for n, text in self.malformed_examples)
            out.append(f"{self.malformed} malformed line(s) skipped ({shown})")
        if self.checksum_mismatches:
            out.append(f"{len(self.checksum_mismatches)} payload(s) do not match their checksum and were skipped "
                       f"(records at lines {self.checksum_mismatches[:_EXAMPLES]})")
        if self.unknown:
            kinds = ", ".join(f"{kind} x{count}" for kind, count in self.unknown.most_common())
            out.append(f"records this version of inductor-explorer does not read (counted, not shown): {kinds}")
        return out + self.notes

    def to_json(self) -> dict[str, Any]:
        return {"malformed": self.malformed, "malformed_examples": [list(e) for e in self.malformed_examples],
                "unknown": dict(self.unknown), "checksum_mismatches": self.checksum_mismatches,
                "truncated": self.truncated, "notes": self.notes}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "LogProblems":
        return cls(malformed=int(data.get("malformed", 0)),
                   malformed_examples=[(int(n), str(t)) for n, t in data.get("malformed_examples", [])],
                   unknown=Counter({str(k): int(v) for k, v in (data.get("unknown") or {}).items()}),
                   checksum_mismatches=[int(n) for n in data.get("checksum_mismatches", [])],
                   truncated=str(data.get("truncated", "")), notes=[str(n) for n in data.get("notes", [])])


@dataclass
class Span:
    """Where a record sits in its log: bytes [start, end) and its header line number."""

    start: int
    end: int
    line: int


def read_records(stream: BinaryIO, problems: LogProblems, *, wants_payload: Callable[[Record], bool] = lambda r: True,
                 first_line: int = 1, start: int = 0) -> Iterator[tuple[Record, Span]]:
    """Every record of a binary stream positioned at byte ``start``, streamed (one record in memory).

    Payload lines are kept only for records ``wants_payload`` accepts; the others are skipped as they
    stream by. Lines that are neither a record header nor a payload line are counted in ``problems``.
    """
    pending: Record | None = None
    span: Span | None = None
    lines: list[bytes] | None = None
    offset, number = start, first_line - 1
    last = b""
    for raw in stream:
        number += 1
        begin, offset = offset, offset + len(raw)
        last = raw
        if raw.startswith(b"\t"):
            if pending is None:
                problems.bad_line(number, raw)
                continue
            span.end = offset  # type: ignore[union-attr]
            if lines is not None:
                lines.append(raw[1:].rstrip(b"\n"))
            continue
        if pending is not None:
            yield _finish(pending, lines), span  # type: ignore[misc]
            pending = None
        match = _HEADER.match(raw.rstrip(b"\r\n"))
        record = _timer_record(match.group("json"), number) if match else None
        if record is None:
            metadata = _parse_header(match.group("json")) if match else None
            record = record_of(metadata, None, number) if metadata is not None else None
        if record is None:
            if raw.strip() and raw.endswith(b"\n"):  # a last line cut short is the truncation, reported below
                problems.bad_line(number, raw)
            continue
        pending, span = record, Span(begin, offset, number)
        lines = [] if record.checksum is not None and wants_payload(record) else None
    if pending is not None:
        yield _finish(pending, lines), span  # type: ignore[misc]
    if last and not last.endswith(b"\n"):
        problems.truncated = (f"the log ends in the middle of a line (line {number}): the job was killed while "
                              "writing it, or is still running; everything before it was read")


# the header of a timer event, most of a log's records, as torch writes it (json.dumps of a dict in this order)
_TIMER_HEADER = re.compile(rb'\{"chromium_event": \{\}, (?:"rank": (?P<rank>\d+), )?(?:"frame_id": (?P<frame>\d+), '
                           rb'"frame_compile_id": (?P<frame_compile>\d+), "attempt": (?P<attempt>\d+), )?'
                           rb'"has_payload": "(?P<checksum>[0-9a-f]+)"\}')


def _timer_record(text: bytes, line: int) -> Record | None:
    """A timer event's Record read with one regex (None for any other header): what ``record_of`` of its
    parsed JSON gives, at a fraction of the cost."""
    match = _TIMER_HEADER.fullmatch(text)
    if match is None:
        return None
    rank, frame, attempt = match["rank"], match["frame"], match["attempt"]
    return Record(kind="chromium_event", data={},
                  compile_id=f"{int(frame)}/{int(match['frame_compile'])}" if frame is not None else None,
                  attempt=int(attempt) if attempt is not None else 0, rank=int(rank) if rank is not None else None,
                  checksum=match["checksum"].decode(), line=line)


def _parse_header(text: bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _finish(record: Record, lines: list[bytes] | None) -> Record:
    if lines is not None:
        record.payload = b"\n".join(lines).decode("utf-8", "replace")
    return record


# ------------------------------------------------------------------------------------------ writing


def format_record(metadata: dict[str, Any], payload: str | None, *, created: float, pid: int, pathname: str,
                  lineno: int) -> str:
    """One record as torch writes it (``TorchLogsFormatter(trace=True)``), with a trailing newline."""
    stamp = time.strftime("%m%d %H:%M:%S", time.localtime(created))
    micros = int((created % 1) * 1_000_000)
    text = f"V{stamp}.{micros:06d} {pid} {pathname}:{lineno}] {json.dumps(metadata, default=repr)}"
    if payload is not None:
        text += "".join(f"\n\t{line}" for line in payload.split("\n"))
    return text + "\n"
