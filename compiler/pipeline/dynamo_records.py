"""Structured trace records -> the Dynamo stage (guards, graph breaks, symbols, recompiles, metrics).

One reader for both origins: a capture collects the records torch emits while it compiles
(compiler/_torch/structured_trace.py), ``load_trace`` reads them from TORCH_TRACE logs. Records are
added in log order, grouped by Dynamo's compile id; ``stage()`` links them to the graphs compiled
for each compile id. Everything is parsed from text and JSON; nothing is evaluated.

Which record says what (torch 2.11 to 2.14); ``RECORD_READERS`` maps each to its handler:
- ``dynamo_start``: a frame compile begins (its user stack names the function).
- ``dynamo_cpp_guards_str``: the guard tree Dynamo installed, one guard per ``+-`` line, with the
  user line each came from in a trailing comment (file names shortened relative to torch).
- ``artifact`` ``dynamo_graph_break_reason``: a graph break: the user line, reason, hints, user stack.
- ``artifact`` ``recompile_reasons``: which guard of which earlier compile failed.
- ``create_symbol`` / ``create_unbacked_symbol`` / ``symbolic_shape_specialization`` /
  ``guard_added_fast``: the ShapeEnv's symbols, their ranges, specializations and guards.
- ``compilation_metrics`` / ``bwd_compilation_metrics``: Dynamo's own metrics per frame compile.
- ``str``: interned file names that stacks refer to by number.
"""

from __future__ import annotations

import linecache
import re
import textwrap
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping

from .._torch import short_filenames
from .._torch.fx_print import frames_of
from ..model.dynamo import (DynamoFrame, DynamoStage, FrameMetrics, GraphBreak, Guard, Recompile, ShapeGuard,
                            ShapeSymbol, UserLine)
from ..model.trace_log import Record


_RESUME_PREFIX = "torch_dynamo_resume_in_"
_TREE = re.compile(r"^(?P<bars>(?:\| )*)\+- (?P<head>.*)$")
_GUARD_KIND = re.compile(r"^[A-Z][A-Z0-9_]*$")
_SOURCE = re.compile(r"source=(?P<source>.*?), accessed_by=")
_LOC = re.compile(r"(?P<file>[^\s#][^#]*?):(?P<line>\d+) in (?P<fn>[\w<>.$-]+)")
_COMPARISON = re.compile(r"<=|>=|==|!=|<|>")
_BREAK_AT = re.compile(r"Graph break in user code at (?P<file>.+):(?P<line>\d+)")
_METRIC_DROP = re.compile(r"_config$")  # whole config dumps: not metrics
_MAX_METRIC_TEXT = 2000


@dataclass
class _Frame:
    compile_id: str
    order: int
    function: str = ""
    filename: str | None = None
    line: int | None = None
    guard_tree: str | None = None
    breaks: list[GraphBreak] = field(default_factory=list)
    symbols: dict[str, ShapeSymbol] = field(default_factory=dict)
    shape_guards: list[ShapeGuard] = field(default_factory=list)
    metrics: list[FrameMetrics] = field(default_factory=list)
    recompile_reasons: list[str] = field(default_factory=list)


class DynamoRecords:
    """Dynamo's records of one process, by compile id, turned into a DynamoStage on demand."""

    def __init__(self, filenames: Mapping[int, str] | None = None) -> None:
        self.frames: dict[str, _Frame] = {}
        self.filenames: dict[int, str] = dict(filenames or {})
        self.line_texts: dict[UserLine, str] = {}  # user line -> its text, as the records quote it

    def outline(self) -> "DynamoRecords":
        """A fresh collector that knows every frame's name and order but none of their records: filled
        with one compile's records, it still links that compile's graph breaks to the frames after them."""
        fresh = DynamoRecords(self.filenames)
        fresh.frames = {cid: _Frame(cid, f.order, f.function, f.filename, f.line) for cid, f in self.frames.items()}
        return fresh

    @staticmethod
    def reads(record: Record) -> bool:
        return record.name in READS

    # --- adding records ----------------------------------------------------------------------
    def add(self, record: Record) -> None:
        """Keep what ``record`` says, through its kind's entry in ``RECORD_READERS`` (other kinds are ignored)."""
        reader = RECORD_READERS.get(record.name)
        if reader is None or (reader.per_frame and record.compile_id is None):
            return
        frame = self._frame_of(record.compile_id) if reader.per_frame else None
        reader.handle(self, frame, record, record.data if isinstance(record.data, dict) else {})

    def _frame_of(self, compile_id: str) -> _Frame:
        frame = self.frames.get(compile_id)
        if frame is None:
            frame = self.frames[compile_id] = _Frame(compile_id, len(self.frames))
        return frame

    # One handler per record kind, (frame, record, its header's dict): RECORD_READERS below says which.
    def _interned(self, _frame: None, record: Record, _data: dict[str, Any]) -> None:
        self._intern(record.data)

    def _started(self, frame: _Frame, _record: Record, data: dict[str, Any]) -> None:
        stack = self._stack(data.get("stack"))
        if stack:
            frame.filename, frame.line, frame.function = stack[-1]

    def _guard_tree(self, frame: _Frame, record: Record, _data: dict[str, Any]) -> None:
        frame.guard_tree = record.payload or frame.guard_tree  # the latest attempt's guards win

    def _broke(self, frame: _Frame, record: Record, _data: dict[str, Any]) -> None:
        graph_break = _graph_break(record.payload or "", record.compile_id)
        for file, line, _ in graph_break.stack:
            self._quote(file, line, graph_break_line(record.payload or "", file, line))
        if not any(_same_break(graph_break, b) for b in frame.breaks):
            frame.breaks.append(graph_break)

    def _recompiled(self, frame: _Frame, record: Record, _data: dict[str, Any]) -> None:
        frame.recompile_reasons = _reasons(record)

    def _backed_symbol(self, frame: _Frame, _record: Record, data: dict[str, Any]) -> None:
        self._symbol(frame, data, unbacked=False)

    def _unbacked_symbol(self, frame: _Frame, _record: Record, data: dict[str, Any]) -> None:
        self._symbol(frame, data, unbacked=True)

    def _specialized(self, frame: _Frame, _record: Record, data: dict[str, Any]) -> None:
        symbol = frame.symbols.get(str(data.get("symbol", "")))
        if symbol is not None:
            symbol.specialized = str(data.get("value"))
            symbol.specialization_reason = str(data.get("reason") or "")

    def _shape_guard(self, frame: _Frame, _record: Record, data: dict[str, Any]) -> None:
        expr = str(data.get("expr", ""))
        if expr and all(g.expr != expr for g in frame.shape_guards):
            frame.shape_guards.append(ShapeGuard(expr, self._innermost(data.get("user_stack"))))

    def _frame_metrics(self, frame: _Frame, record: Record, data: dict[str, Any]) -> None:
        frame.metrics.append(FrameMetrics(record.compile_id or "", "frame", metric_values(data)))
        if data.get("co_name"):
            frame.function = str(data["co_name"])
            frame.filename = str(data.get("co_filename") or frame.filename or "") or None
            frame.line = data.get("co_firstlineno") if isinstance(data.get("co_firstlineno"), int) else frame.line

    def _backward_metrics(self, frame: _Frame, record: Record, data: dict[str, Any]) -> None:
        frame.metrics.append(FrameMetrics(record.compile_id or "", "backward", metric_values(data)))

    def _intern(self, data: Any) -> None:
        if isinstance(data, (list, tuple)) and len(data) == 2 and isinstance(data[1], int):
            self.filenames[data[1]] = str(data[0])

    def _stack(self, frames: Any) -> list[tuple[str, int, str]]:
        out: list[tuple[str, int, str]] = []
        for frame in frames or []:
            if not isinstance(frame, dict) or not isinstance(frame.get("line"), int):
                continue
            file = frame.get("filename")
            file = self.filenames.get(file, f"<file {file}>") if isinstance(file, int) else str(file)
            out.append((file, frame["line"], str(frame.get("name", ""))))
            if frame.get("loc"):
                self._quote(file, frame["line"], str(frame["loc"]))
        return out

    def _innermost(self, frames: Any) -> UserLine | None:
        stack = self._stack(frames)
        return (stack[-1][0], stack[-1][1]) if stack else None

    def _quote(self, file: str, line: int, text: str | None) -> None:
        if text and (file, line) not in self.line_texts:
            self.line_texts[(file, line)] = text

    def _symbol(self, frame: _Frame, data: dict[str, Any], unbacked: bool) -> None:
        name = str(data.get("symbol", ""))
        if not name or name in frame.symbols:
            return
        vr = str(data.get("vr", ""))
        frame.symbols[name] = ShapeSymbol(
            name=name, source=data.get("source"), value=None if unbacked else _unquote(data.get("val")),
            initial_range=vr, range=vr, unbacked=unbacked, user_line=self._innermost(data.get("user_stack")),
            compile_id=frame.compile_id)

    # --- the stage -------------------------------------------------------------------------
    def stage(self, graphs: Mapping[str, list[str]], compile_ids: Iterable[str] | None = None,
              known_files: Iterable[str] = ()) -> DynamoStage:
        """The DynamoStage of ``compile_ids`` (default: all), with ``graphs`` (compile id -> graph ids)."""
        wanted = set(compile_ids) if compile_ids is not None else None
        every = sorted(self.frames.values(), key=lambda f: f.order)
        frames = [f for f in every if wanted is None or f.compile_id in wanted]
        by_function: dict[str, list[_Frame]] = {}
        for frame in every:
            by_function.setdefault(frame.function, []).append(frame)
        files = set(self.filenames.values()) | set(known_files) | {f for f, _ in self.line_texts}
        resolve = _resolver(files)
        stage = DynamoStage()
        guards: list[Guard] = []
        for frame in frames:
            stage.frames.append(DynamoFrame(frame.compile_id, frame.function, frame.filename, frame.line,
                                            tuple(graphs.get(frame.compile_id, ())), _skipped(frame)))
            frame_guards = parse_guard_tree(frame.guard_tree or "", frame.compile_id, resolve)
            for guard in frame_guards:  # quoted only under a name the records gave in full: a short name
                # kept would be taken as known by the next call, which could then no longer resolve it
                if guard.user_line and guard.user_code and guard.user_line[0] in files:
                    self._quote(guard.user_line[0], guard.user_line[1], guard.user_code)
            guards += frame_guards
            for graph_break in frame.breaks:
                stage.graph_breaks.append(self._linked(graph_break, frame, by_function, graphs))
            shape_code = [g.code for g in frame_guards if g.kind == "SHAPE_ENV"]
            for symbol in frame.symbols.values():
                stage.symbols.append(_narrowed(symbol, frame.shape_guards, shape_code))
            if frame.recompile_reasons:
                stage.recompiles.append(Recompile(frame.compile_id, list(frame.recompile_reasons), frame.function,
                                                  list(graphs.get(frame.compile_id, ()))))
            stage.compile_metrics += frame.metrics
        kinds = list(dict.fromkeys(g.kind for g in guards))
        stage.guards = sorted(guards, key=lambda g: kinds.index(g.kind))
        return stage

    def _linked(self, graph_break: GraphBreak, frame: _Frame, by_function: Mapping[str, list[_Frame]],
                graphs: Mapping[str, list[str]]) -> GraphBreak:
        resume = _resume_frame(graph_break, frame, by_function)
        return GraphBreak(
            reason=graph_break.reason, explanation=graph_break.explanation, hints=list(graph_break.hints),
            user_line=graph_break.user_line, stack=list(graph_break.stack), compile_id=frame.compile_id,
            frame_skipped=graph_break.frame_skipped,
            resume=resume.compile_id if resume else None,
            graphs_before=list(graphs.get(frame.compile_id, ())),
            graphs_after=list(graphs.get(resume.compile_id, ())) if resume else [])


@dataclass(frozen=True)
class RecordReader:
    """How the Dynamo stage reads one record kind: its handler, whether it needs the payload text (the
    capture keeps payloads of these kinds only), and whether it belongs to a frame compile (a record of
    such a kind without a compile id is dropped)."""

    handle: Callable[[DynamoRecords, Any, Record, dict[str, Any]], None]
    payload: bool = False
    per_frame: bool = True


# record name (an artifact's own name) -> how it is read. The kinds read and those whose payloads are kept
# are derived from it: adding a record kind adds an entry here.
RECORD_READERS: dict[str, RecordReader] = {
    "str": RecordReader(DynamoRecords._interned, per_frame=False),
    "dynamo_start": RecordReader(DynamoRecords._started),
    "dynamo_cpp_guards_str": RecordReader(DynamoRecords._guard_tree, payload=True),
    "dynamo_graph_break_reason": RecordReader(DynamoRecords._broke, payload=True),
    "recompile_reasons": RecordReader(DynamoRecords._recompiled, payload=True),
    "create_symbol": RecordReader(DynamoRecords._backed_symbol),
    "create_unbacked_symbol": RecordReader(DynamoRecords._unbacked_symbol),
    "symbolic_shape_specialization": RecordReader(DynamoRecords._specialized),
    "guard_added_fast": RecordReader(DynamoRecords._shape_guard),
    "guard_added": RecordReader(DynamoRecords._shape_guard),
    "compilation_metrics": RecordReader(DynamoRecords._frame_metrics),
    "bwd_compilation_metrics": RecordReader(DynamoRecords._backward_metrics),
}
READS = frozenset(RECORD_READERS)
PAYLOADS = frozenset(name for name, reader in RECORD_READERS.items() if reader.payload)


def _skipped(frame: _Frame) -> str:
    """Why Dynamo gave up on the whole frame and ran it eagerly ("" when it did not): what its graph break
    says, else the failure its metrics record for a frame compile that made no graph."""
    why = next((b.frame_skipped for b in frame.breaks if b.frame_skipped), "")
    if why:
        return why
    failed = next((m.values for m in frame.metrics if m.kind == "frame" and m.values.get("fail_type")), None)
    if failed is None or failed.get("graph_op_count"):
        return ""
    return f"{failed['fail_type']}: {str(failed.get('fail_reason') or '').strip().splitlines()[0] if failed.get('fail_reason') else ''}".rstrip(": ")


def add_sources(sources: dict[str, dict[int, str]], stage: DynamoStage, quoted: Mapping[UserLine, str],
                read_files: bool = True) -> None:
    """Add the text of every user line the stage points at: from the file (a live capture), or as the
    records quoted it (a log: the files may have changed since, or live on another machine)."""
    for file, line in sorted(stage.user_lines()):
        text = (linecache.getline(file, line).rstrip("\n") if read_files else "") or quoted.get((file, line), "")
        if text:
            sources.setdefault(file, {}).setdefault(line, text)


def _same_break(a: GraphBreak, b: GraphBreak) -> bool:
    return a.user_line == b.user_line and a.reason == b.reason


def _resume_frame(graph_break: GraphBreak, frame: _Frame, by_function: Mapping[str, list[_Frame]]) -> _Frame | None:
    """The frame Dynamo compiled for the code after the break: its resume function is named after the
    user function and line where tracing stopped (``torch_dynamo_resume_in_f_at_6``)."""
    names = [f"{_RESUME_PREFIX}{fn}_at_{line}" for _, line, fn in reversed(graph_break.stack)]
    candidates = sorted((f for name in names for f in by_function.get(name, ()) if f is not frame),
                        key=lambda f: f.order)
    after = [f for f in candidates if f.order > frame.order]
    return after[0] if after else (candidates[-1] if candidates else None)


def _reasons(record: Record) -> list[str]:
    try:
        value = record.json_payload()
    except ValueError:
        value = record.payload
    values = value if isinstance(value, list) else [value] if value else []
    return [re.sub(r" {3,}", "  ", str(v)) for v in values]  # Dynamo pads guard text to a column


def _unquote(value: Any) -> str | None:
    return None if value is None else str(value).strip("'\"")


def metric_values(data: dict[str, Any]) -> dict[str, Any]:
    """Dynamo's metrics, without the config dumps: scalars, short strings and lists of strings."""
    out: dict[str, Any] = {}
    for key, value in data.items():
        if _METRIC_DROP.search(key):
            continue
        if isinstance(value, str) and len(value) > _MAX_METRIC_TEXT:
            continue
        if isinstance(value, (str, int, float, bool)) or value is None:
            out[key] = value
        elif isinstance(value, list) and all(isinstance(v, str) for v in value):
            out[key] = [v[:_MAX_METRIC_TEXT] for v in value]
        elif isinstance(value, dict) and all(isinstance(v, (str, int, float, bool)) for v in value.values()):
            out[key] = dict(value)
    return out


# ------------------------------------------------------------------------------------------ guards


def _resolver(files: set[str]):
    """Dynamo prints guard locations with shortened file names; map them back to the full names known."""
    ordered = sorted(files, key=len)

    def resolve(short: str) -> str:
        if short in files:
            return short
        known = next((f for f in ordered if f.endswith(short)), None)
        return known or short_filenames.full_name(short) or short

    return resolve


def parse_guard_tree(text: str, compile_id: str | None, resolve=lambda f: f) -> list[Guard]:
    """The guards of one ``dynamo_cpp_guards_str`` payload, each with the value it guards."""
    guards: list[Guard] = []
    sources: dict[int, str] = {}
    for raw in text.splitlines():
        match = _TREE.match(raw.rstrip())
        if match is None:
            continue
        depth = len(match["bars"]) // 2
        head = match["head"]
        if "GuardManager" in head and "source=" in head:
            source = _SOURCE.search(head)
            sources = {d: s for d, s in sources.items() if d < depth}
            if source:
                sources[depth] = source["source"]
            continue
        kind, sep, rest = head.partition(": ")
        if not sep or not _GUARD_KIND.match(kind):
            continue
        code, user_code, user_line = _split_verbose(rest, resolve)
        if depth == 0 and kind == "LAMBDA_GUARD" and _COMPARISON.search(code) and " is " not in code:
            kind = "SHAPE_ENV"  # the ShapeEnv's guards are installed as one epilogue lambda per guard
        owner = max((d for d in sources if d < depth), default=None)
        guards.append(Guard(kind=kind, code=code, source=sources.get(owner) if owner is not None else None,
                            user_line=user_line, user_code=user_code, compile_id=compile_id))
    return guards


def _split_verbose(text: str, resolve) -> tuple[str, str, UserLine | None]:
    """``code  # user line text  # file:line in fn`` -> (code, user line text, (file, line))."""
    code, sep, comment = text.partition("  # ")
    if not sep:
        return text.strip(), "", None
    location = _LOC.search(comment)
    if location is None:
        return code.strip(), "", None
    before = comment[: location.start()].rstrip()
    user_code = before[:-1].rstrip() if before.endswith("#") else before
    return code.strip(), user_code.strip(), (resolve(location["file"].strip()), int(location["line"]))


# ------------------------------------------------------------------------------------------ graph breaks


_ANOTHER_BREAK = "*** While handling this graph break, another graph break occurred: ***"
_SKIP_NOTICE = ("Skipping the function and falling back to eager", "Failed to handle graph break gracefully")
_SECTION_ENDS = ("Hint:", "Developer debug context:", "For more details", "Stack variable source attribution:")


def _graph_break(payload: str, compile_id: str | None) -> GraphBreak:
    """A ``dynamo_graph_break_reason`` payload: where, why (Dynamo's "Graph Break Reason:" field), the
    explanation and hints beside it, the user stack, and whether Dynamo gave up on the whole frame."""
    user_part, _, _ = payload.partition("\nTraceback (most recent call last):")
    head, _, user_stack = user_part.partition("User code traceback:")
    stack = frames_of(user_stack)
    at = _BREAK_AT.search(head)
    user_line = (at["file"], int(at["line"])) if at else ((stack[-1][0], stack[-1][1]) if stack else None)
    first, _, then = head.partition(_ANOTHER_BREAK)
    lines = first.splitlines()
    field_at = next((i for i, line in enumerate(lines) if line.strip().startswith("Graph Break Reason:")), None)
    stated = lines[field_at].strip()[len("Graph Break Reason:"):].strip() if field_at is not None else ""
    skipped = any(notice in stated for notice in _SKIP_NOTICE)
    body = lines[field_at + 1:] if field_at is not None else [line for line in lines if "Graph break in user code" not in line]
    # the field is the reason itself ("Data-dependent branching"), or a preamble ending in ':' that the
    # reason follows ("Encountered graph break when attempting to trace CALL: ...:", a skip notice)
    introduces = not stated or stated.endswith(":") or skipped
    reason = (_first_line(body) if introduces else stated) or stated or "graph break"
    explanation, hints = _explanation(body), [line.strip()[len("Hint:"):].strip() for line in body
                                              if line.strip().startswith("Hint:")]
    why_skipped = ""
    if skipped:
        follow = then.splitlines()
        why_skipped = ": ".join(part for part in (_first_line(follow), _explanation(follow)) if part) or stated
    return GraphBreak(reason=reason, explanation=explanation, hints=hints, user_line=user_line, stack=stack,
                      compile_id=compile_id, frame_skipped=why_skipped)


def _first_line(lines: list[str]) -> str:
    return next((line.strip() for line in lines if line.strip()), "")


def _explanation(lines: list[str]) -> str:
    """The ``Explanation:`` of a break with the lines that continue it (Dynamo indents the data-dependent
    branch's condition below it), up to the hints."""
    start = next((i for i, line in enumerate(lines) if line.strip().startswith("Explanation:")), None)
    if start is None:
        return ""
    rest: list[str] = []
    for line in lines[start + 1:]:
        if line.strip().startswith(_SECTION_ENDS):
            break
        rest.append(line.rstrip())
    return "\n".join([lines[start].strip()[len("Explanation:"):].strip(), textwrap.dedent("\n".join(rest))]).strip()


def graph_break_line(payload: str, file: str, line: int) -> str | None:
    """The source text a traceback quotes under ``File "file", line N``."""
    lines = payload.splitlines()
    marker = f'File "{file}", line {line},'
    for index, text in enumerate(lines[:-1]):
        if marker in text:
            return lines[index + 1].strip() or None
    return None


# ------------------------------------------------------------------------------------------ symbols


def _narrowed(symbol: ShapeSymbol, shape_guards: list[ShapeGuard], shape_code: list[str]) -> ShapeSymbol:
    """The symbol with the guards that mention it and the range they leave."""
    pattern = re.compile(rf"(?<![\w.]){re.escape(symbol.name)}(?![\w(])")
    mine = [g for g in shape_guards if pattern.search(g.expr)]
    names = {symbol.name} | ({symbol.source} if symbol.source else set())
    bounds = _bounds(symbol.initial_range)
    for expr in [g.expr for g in mine] + shape_code:
        bounds = _apply(expr, names, bounds)
    if symbol.specialized is not None and _is_int(symbol.specialized):
        bounds = (int(symbol.specialized), int(symbol.specialized))
    return ShapeSymbol(
        name=symbol.name, source=symbol.source, value=symbol.value, initial_range=symbol.initial_range,
        range=_range_text(bounds) if symbol.initial_range else "", unbacked=symbol.unbacked,
        specialized=symbol.specialized, specialization_reason=symbol.specialization_reason, guards=mine,
        user_line=symbol.user_line, compile_id=symbol.compile_id)


def _is_int(text: str) -> bool:
    return bool(re.fullmatch(r"-?\d+", text.strip()))


def _bounds(text: str) -> tuple[int | None, int | None]:
    parts = [p.strip() for p in text.strip().strip("[]").split(",")]
    if len(parts) != 2:
        return (None, None)
    return (int(parts[0]) if _is_int(parts[0]) else None, int(parts[1]) if _is_int(parts[1]) else None)


def _range_text(bounds: tuple[int | None, int | None]) -> str:
    lo, hi = bounds
    return f"[{'-int_oo' if lo is None else lo}, {'int_oo' if hi is None else hi}]"


def _apply(expr: str, names: set[str], bounds: tuple[int | None, int | None]) -> tuple[int | None, int | None]:
    """Narrow (lo, hi) by one guard when it compares one of ``names`` with an integer."""
    lo, hi = bounds
    eq = re.fullmatch(r"Eq\((?P<a>.+), (?P<b>.+)\)", expr.strip())
    if eq:
        terms, ops = [eq["a"].strip(), eq["b"].strip()], ["=="]
    else:
        parts = re.split(r"\s*(<=|>=|==|!=|<|>)\s*", expr.strip())
        terms, ops = parts[::2], parts[1::2]
    for (a, b), op in zip(zip(terms, terms[1:]), ops):
        if a in names and _is_int(b):
            value, flipped = int(b), op
        elif b in names and _is_int(a):
            value, flipped = int(a), {"<=": ">=", ">=": "<=", "<": ">", ">": "<"}.get(op, op)
        else:
            continue
        if flipped in ("<=", "<"):
            limit = value if flipped == "<=" else value - 1
            hi = limit if hi is None else min(hi, limit)
        elif flipped in (">=", ">"):
            limit = value if flipped == ">=" else value + 1
            lo = limit if lo is None else max(lo, limit)
        elif flipped == "==":
            lo, hi = value, value
    return lo, hi
