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
from functools import lru_cache
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


_BLOCK = 1 << 18  # bytes read at a time
_LINE = re.compile(rb"\n(?!\t)")  # the start of a line that is not a payload line (after its newline)
_PAYLOAD_LINES = rb'(?:\n\t[^\n]*)*'


@lru_cache(maxsize=8)
def _runs(kinds: frozenset[str], artifacts_kept: frozenset[str]) -> re.Pattern:
    """A line start that is not a payload line, or a run: records in a row, each of one of ``kinds``, of
    one compile (and rank), header and payload lines. A header's value runs to its last closing brace
    before the context keys (the greedy match ends there: the context holds no brace), so a value is
    never parsed. An artifact (when ``kinds`` has it) joins a run when it belongs to a compile and is not
    named in ``artifacts_kept``. The first record's kind, rank and compile id are captured; the rest must
    repeat them."""
    names = b"|".join(re.escape(kind.encode()) for kind in sorted(kinds - {"artifact"}))
    kept = b"|".join(re.escape(name.encode()) for name in sorted(artifacts_kept)) or rb"(?!)"
    artifact = (rb'artifact": \{"name": "(?!(?:' + kept + rb')")[^"\\\n]*"(?:, "encoding": "[^"\\\n]*")?\}'
                rb'(?=(?:, "rank": \d+)?, "frame_id")') if "artifact" in kinds else rb'(?!)'
    head = rb'[A-Z]\d{4} [^\]\n]*\] \{"(?:(?:' + names + rb')": [^\n]*\}|' + artifact + rb')'
    first = (rb'[A-Z]\d{4} [^\]\n]*\] \{"(?:(?P<kind>' + names + rb')": [^\n]*\}|(?P<artifact>' + artifact + rb'))'
             rb'(?:, "rank": (?P<rank>\d+))?'
             rb'(?:, "frame_id": (?P<frame>\d+), "frame_compile_id": (?P<frame_compile>\d+), "attempt": \d+)?')
    same = (head + rb'(?(rank), "rank": (?P=rank))(?(frame), "frame_id": (?P=frame), "frame_compile_id": '
            rb'(?P=frame_compile), "attempt": \d+)')
    end = rb'(?:, "has_payload": "[0-9a-f]+")?\}\r?' + _PAYLOAD_LINES
    return re.compile(rb'\n(?:(?P<run>' + first + end + rb'(?:\n' + same + end + rb')*)(?=\n|\Z)|(?!\t))')


def read_records(stream: BinaryIO, problems: LogProblems, *, wants_payload: Callable[[Record], bool] = lambda r: True,
                 wants_data: Callable[[str], bool] = lambda kind: True, runs_of: frozenset[str] = frozenset(),
                 artifacts_kept: frozenset[str] = frozenset(), first_line: int = 1, start: int = 0,
                 block: int = _BLOCK) -> Iterator[tuple[Record, Span]]:
    """Every record of a binary stream positioned at byte ``start``, streamed.

    Payload lines are kept only for records ``wants_payload`` accepts; the others are skipped as they
    stream by. A header's own value (``Record.data``) is parsed only for the kinds ``wants_data`` accepts
    (None for the others; an artifact's name is always read). Records of the kinds ``runs_of`` names that
    come in a row and belong to one compile come as one Record of the first one's kind, without value or
    payload, whose Span covers them all: what an index needs of the records it does not read (timer
    events, tensor descriptions and artifacts are most of a log's records); with ``"artifact"`` among
    them, a compile's artifacts join runs but those named in ``artifacts_kept``. Lines that are neither a record header
    nor a payload line are counted in ``problems``.

    The stream is read ``block`` bytes at a time and only the lines that are not payload are looked at
    one by one: a large compile's graphs and code are most of a log's lines, and nobody reads them while
    a log is indexed. Memory: one block, the longest line and the payloads wanted.
    """
    reader = _BlockReader(problems, wants_payload, wants_data, _runs(runs_of, artifacts_kept) if runs_of else _LINE, first_line, start)
    carry = b"\n"  # a block starts at the newline that ends the line before it
    while data := stream.read(block):
        buffer = carry + data
        cut = buffer.rfind(b"\n")  # whole lines only: a line cut by the block waits for the next one
        carry = buffer[cut:]
        if cut:
            yield from reader.lines(buffer, cut, final=False)
    if len(carry) > 1:
        yield from reader.lines(carry, len(carry), final=True)
    yield from reader.finish(truncated=len(carry) > 1)


class _BlockReader:
    """read_records' state between blocks: the record whose payload lines are still coming, and where
    the block being read sits in the stream. A block is ``buffer[:end]``: the newline that ended the
    line before it, then whole lines (the last one's newline is ``buffer[end]``, absent only at the
    stream's end)."""

    def __init__(self, problems: LogProblems, wants_payload: Callable[[Record], bool],
                 wants_data: Callable[[str], bool], lines: re.Pattern, first_line: int, start: int) -> None:
        self.problems = problems
        self.wants_payload = wants_payload
        self.wants_data = wants_data
        self.pattern = lines
        self.offset = start - 1  # stream offset of buffer[0] (the newline before the block)
        self.number = first_line - 1  # lines before the block
        self.pending: Record | None = None
        self.span: Span | None = None
        self.parts: list[bytes] | None = None  # the pending record's payload lines ("\n\t..."), when wanted

    def lines(self, buffer: bytes, end: int, final: bool) -> Iterator[tuple[Record, Span]]:
        """The records finished in the block ``buffer[:end]``."""
        done, counted, before = 0, 1, self.number  # before: the lines that end before buffer[counted]
        for match in self.pattern.finditer(buffer, 0, end):
            newline = match.start()  # the line starts after it
            before += buffer.count(b"\n", counted, newline + 1)
            counted = newline + 1
            if done < newline:
                self._payload(buffer, done, newline, before - buffer.count(b"\n", done, newline), True)
            if self.pending is not None:
                yield self._finish()
            if match.lastgroup == "run":
                self._run(match, before + 1, not final or match.end() < end)
                done = match.end()
                continue
            line_end = buffer.find(b"\n", counted, end)
            line_end = end if line_end < 0 else line_end
            self._line(buffer[counted:line_end], counted, not final or line_end < end, before + 1)
            done = line_end
        if done < end:
            self._payload(buffer, done, end, before + buffer.count(b"\n", counted, done + 1), not final)
        self.number = before + buffer.count(b"\n", counted, end) + (not final)
        self.offset += end

    def _payload(self, buffer: bytes, begin: int, end: int, before: int, whole: bool) -> None:
        """Payload lines ``buffer[begin:end]``, each after its newline (``before``: the lines above the
        first; ``whole``: the last one's newline follows): the pending record's, or malformed when no
        record is pending."""
        if self.pending is None:
            for number, raw in enumerate(buffer[begin + 1:end].split(b"\n"), start=before + 1):
                self.problems.bad_line(number, raw)
            return
        self.span.end = self.offset + end + whole  # type: ignore[union-attr]
        if self.parts is not None:
            self.parts.append(buffer[begin:end])

    def _run(self, match: re.Match, number: int, whole: bool) -> None:
        frame = match["frame"]
        self.pending = Record(kind=(match["kind"] or b"artifact").decode(), data=None, compile_id=f"{int(frame)}/{int(match['frame_compile'])}"
                              if frame is not None else None, rank=int(match["rank"]) if match["rank"] else None,
                              line=number)
        self.span = Span(self.offset + match.start() + 1, self.offset + match.end() + whole, number)
        self.parts = None

    def _line(self, raw: bytes, begin: int, whole: bool, number: int) -> None:
        """A line that is not a payload line: a record header, or a malformed (or blank) line."""
        match = _HEADER.match(raw.rstrip(b"\r"))
        record = _header_record(match.group("json"), number, self.wants_data) if match else None
        if record is None:
            if raw.strip() and whole:  # a last line cut short is the truncation, reported at the end
                self.problems.bad_line(number, raw)
            return
        self.pending = record
        self.span = Span(self.offset + begin, self.offset + begin + len(raw) + whole, number)
        self.parts = [] if record.checksum is not None and self.wants_payload(record) else None

    def _finish(self) -> tuple[Record, Span]:
        record, span, parts = self.pending, self.span, self.parts
        self.pending = self.span = self.parts = None
        if parts is not None:  # payload lines, each after its newline: "\n\tline\n\tline"
            record.payload = b"".join(parts).replace(b"\n\t", b"\n")[1:].decode("utf-8", "replace")
        return record, span  # type: ignore[return-value]

    def finish(self, truncated: bool) -> Iterator[tuple[Record, Span]]:
        if self.pending is not None:
            yield self._finish()
        if truncated:
            self.problems.truncated = (f"the log ends in the middle of a line (line {self.number + 1}): the job was "
                                       "killed while writing it, or is still running; everything before it was read")


# A header as torch writes it: json.dumps of {kind: value, context keys...}, the context keys in this order.
# The kind and the context are read with regexes and the kind's own value parsed only when the reader asks
# for it: most of a log's headers are timer events and tensor descriptions nobody reads while indexing.
_KIND = re.compile(rb'\{"(?P<kind>[A-Za-z_][\w.]*)": ')
_CONTEXT = re.compile(rb'(?:, "rank": (?P<rank>\d+))?(?:, "compiled_autograd_id": (?P<autograd>\d+))?'
                      rb'(?:, "frame_id": (?P<frame>\d+))?(?:, "frame_compile_id": (?P<frame_compile>\d+))?'
                      rb'(?:, "attempt": (?P<attempt>\d+))?(?:, "has_payload": "(?P<checksum>[0-9a-f]+)")?\}')
_CONTEXT_STARTS = tuple(b', "%s": ' % key for key in (b"rank", b"compiled_autograd_id", b"frame_id",
                                                       b"frame_compile_id", b"attempt", b"has_payload"))
_NAMED = re.compile(rb'\{"name": "(?P<name>[^"\\]*)"(?:, "encoding": "(?P<encoding>[^"\\]*)")?\}')
_NAMED_KINDS = frozenset({"artifact", "graph_dump"})  # their value names them: always read (Record.name)


def _header_record(text: bytes, line: int, wants_data: Callable[[str], bool]) -> Record | None:
    """The Record of a header's JSON ``text`` (None when it is not one), its kind's value parsed only when
    ``wants_data(kind)`` (else None). What ``record_of`` of the whole parsed JSON gives, at a fraction of
    the cost; a header in another layout is parsed whole."""
    kind = _KIND.match(text)
    context = _context(text, kind.end()) if kind is not None else None
    if kind is None or context is None or kind["kind"].decode() in _CONTEXT_KEYS:
        metadata = _parse_header(text)
        return record_of(metadata, None, line) if metadata is not None else None
    name, value = kind["kind"].decode(), text[kind.end():context.start()]
    if name in _NAMED_KINDS and (named := _NAMED.fullmatch(value)):
        data: Any = {"name": named["name"].decode()}
        if named["encoding"] is not None:
            data["encoding"] = named["encoding"].decode()
    elif name in _NAMED_KINDS or wants_data(name):
        try:
            data = json.loads(value)
        except ValueError:  # keys other than the context's after the value (a record's "stack"): parsed whole
            metadata = _parse_header(text)
            return record_of(metadata, None, line) if metadata is not None else None
    else:
        data = None
    frame, autograd = context["frame"], context["autograd"]
    compile_id = compile_id_of({"frame_id": _int(frame),
                                "frame_compile_id": _int(context["frame_compile"]),
                                "compiled_autograd_id": _int(autograd)})
    return Record(kind=name, data=data, compile_id=compile_id, attempt=int(context["attempt"] or 0),
                  rank=_int(context["rank"]),
                  checksum=context["checksum"].decode() if context["checksum"] is not None else None, line=line)


def _int(digits: bytes | None) -> int | None:
    return int(digits) if digits is not None else None


def _context(text: bytes, after: int) -> re.Match | None:
    """The context keys that end a header (an empty match before its closing brace when it has none).
    A key's last occurrence past the kind's value is where the context starts when the rest of the
    header is context keys alone: the value's own closing bracket cannot be part of it."""
    for key in _CONTEXT_STARTS:
        at = text.rfind(key, after)
        if at >= 0 and (match := _CONTEXT.fullmatch(text, at)):
            return match
    return _CONTEXT.fullmatch(text, len(text) - 1) if len(text) > after else None


def _parse_header(text: bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


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
