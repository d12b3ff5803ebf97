"""``load_trace``: a TORCH_TRACE directory (one log per rank) -> a TraceSet of Compilations.

Logs are streamed once to build a small index per rank: for each compile id, where its records sit
in the file, and the records the cross-rank summary needs (graph checksums, graph breaks, recompile
reasons, Dynamo's compilation metrics). Payloads (graphs, output code, guards) are not kept: a
compile's Compilation is built from its byte ranges when first asked for. So memory stays bounded
by the index however large the log; nothing in a log is ever evaluated.

A compile's Compilation holds what the log has: Dynamo's FX graph, the post-grad graph(s), the output
code with its kernels split out, kernel <-> node provenance when the run tracked it
(``INDUCTOR_PROVENANCE=1``), guards, graph breaks, symbols, recompiles and metrics. It has no live
handles, loop IR, fused groups or autotuning tables (a log does not record them).

Each record kind is read by its entry in a table, ``{record name: handler}``: INDEX_NOTES while a log is
indexed, COMPILE_READERS when a compile is built, RECORD_READERS (dynamo_records.py) for Dynamo's own.
A kind no table knows (and SKIPPED_KINDS does not name) is counted: ``LogIndex.records_not_read``.
"""

from __future__ import annotations

import io
import json
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ..model.compilation import Compilation
from ..model.compile_time import CompileCall
from ..model.compile_time_build import KERNEL_BUILDS, kernel_builds_event
from ..model.errors import TraceLoadError
from ..model.formatting import did_you_mean
from ..model.stages import FxStage, GraphCapture
from ..model.trace_log import LogProblems, Record, Span, read_records
from . import aot_log
from .assemble import InnerRecord, assemble_stages
from .dynamo_records import READS, DynamoRecords, add_sources
from .fx_text import link, parse, user_lines

# Record kinds this reader knowingly leaves out. The kinds it reads are the keys of its tables: INDEX_NOTES
# (what the index keeps), COMPILE_READERS (what a compile's Compilation is built from) and the Dynamo
# stage's RECORD_READERS (compiler/pipeline/dynamo_records.py); any other kind is counted as not read.
SKIPPED_KINDS = frozenset({"artifact", "chromium_event", "describe_storage", "dump_file", "link", "graph_dump",
                           "aot_joint_graph", "compiled_autograd_graph", "optimize_ddp_split_graph",
                           "optimize_ddp_split_child", "missing_fake_kernel", "mismatched_fake_kernel",
                           "propagate_real_tensors", "propagate_real_tensors_provenance", "expression_created",
                           "guard_on_data_dependent_error", "exported_program", "dynamo_guards"})
TESTED_TORCH = ("2.11", "2.12", "2.13", "2.14")  # the releases whose logs the tests read
_SUMMARY_PAYLOADS = frozenset({"dynamo_graph_break_reason", "recompile_reasons", "torch_version"})
_TIMER_EVENTS = "chromium_event"  # torch's timers, read back when a compile-time report is asked for
_CACHE_HIT = "fx_graph_cache_hit"  # the artifact of an FX graph cache hit: what it saved
_RANK_IN_NAME = re.compile(r"rank_(\d+)_")
_AOT_ID = re.compile(r"#\s*AOT ID: \['\d+_(?P<kind>\w+)'\]")


def trace_env(trace_dir: str | Path) -> dict[str, str]:
    """Environment variables that make a job (torchrun or not) write the logs load_trace reads best:
    one structured trace log per rank in ``trace_dir``, with Inductor's kernel <-> node provenance."""
    return {"TORCH_TRACE": str(trace_dir), "INDUCTOR_PROVENANCE": "1"}


def find_logs(path: str | Path) -> list[Path]:
    """The TORCH_TRACE logs under ``path`` (a directory, or one log file)."""
    path = Path(path)
    if not path.exists():
        raise TraceLoadError(f"{path} does not exist: pass the directory TORCH_TRACE pointed at (or one log in it)")
    if path.is_file():
        return [path]
    logs = sorted(p for p in path.iterdir() if p.is_file() and p.suffix == ".log")
    if not logs:
        raise TraceLoadError(f"no TORCH_TRACE logs in {path}: expected files like "
                             f"dedicated_log_torch_trace_rank_0_*.log, which torch writes when a job runs with "
                             f"TORCH_TRACE={path}")
    return logs


def rank_in_name(path: Path) -> int | None:
    """The rank torch puts in a log's name (``..._rank_1_<random>.log``), for logs whose records carry none."""
    match = _RANK_IN_NAME.search(path.name)
    return int(match.group(1)) if match else None


@dataclass
class CompileIndex:
    """Where one compile id's records sit in its log, and what the summary needs of them."""

    compile_id: str
    segments: list[Span] = field(default_factory=list)
    graph_checksum: str | None = None  # md5 of Dynamo's printed graph: equal graphs, equal checksums
    graph_nodes: int | None = None
    output_codes: int = 0


@dataclass
class LogIndex:
    path: Path
    size: int
    mtime: float
    rank: int | None = None
    torch: str | None = None
    records: int = 0  # records read (timer events in a row count once)
    problems: LogProblems = field(default_factory=LogProblems)
    compiles: dict[str, CompileIndex] = field(default_factory=dict)
    dynamo: DynamoRecords = field(default_factory=DynamoRecords)

    @property
    def records_not_read(self) -> dict[str, int]:
        """``{record kind: count}`` of the log's records no table of this reader knows (newer torch, most
        often): what the explorer shows nothing of (``ts[rank].index.records_not_read``)."""
        return dict(self.problems.unknown.most_common())


def _is_timer(record: Record) -> bool:
    return record.kind == _TIMER_EVENTS or record.name in (_CACHE_HIT, KERNEL_BUILDS)


def _cache_hit_event(hit: dict[str, Any]) -> dict[str, Any] | None:
    """An FX graph cache hit artifact as the instant event a live capture would see: torch logs the hit's
    ``time_saved_ns`` in the artifact only (its chromium instant carries no payload in a log)."""
    stamp, saved = hit.get("cache_event_time"), hit.get("time_saved_ns")
    if not isinstance(stamp, int) or not isinstance(saved, (int, float)):
        return None
    return {"name": _CACHE_HIT, "ph": "i", "ts": stamp / 1000, "args": {"cache_state": "hit", "time_saved_ns": saved}}


def timer_call(records: list[Record]) -> CompileCall | None:
    """The chromium events among ``records`` (and FX graph cache hits and kernel builds, as instants) as
    one call spanning them (None when there are none)."""
    events: list[dict[str, Any]] = []
    for record in records:
        if _is_timer(record) and record.payload:
            try:
                event = json.loads(record.payload)
            except ValueError:
                continue
            if record.name == _CACHE_HIT and isinstance(event, dict):
                event = _cache_hit_event(event)
            elif record.name == KERNEL_BUILDS:  # logged right as the graph's builds end: at the last timer's time
                event = kernel_builds_event(event, events[-1]["ts"], record.compile_id) if events else None
            if isinstance(event, dict):
                events.append(event)
    stamps = [int(float(e.get("ts", 0)) * 1000) for e in events]
    return CompileCall("log", min(stamps), max(stamps), events) if stamps else None


def rank_timer_call(index: LogIndex) -> CompileCall | None:
    """Every timer event of the log, streamed once more (the index keeps none: memory stays bounded)."""
    with open(index.path, "rb") as stream:
        records = [record for record, _ in read_records(stream, LogProblems(), wants_payload=_is_timer)
                   if _is_timer(record)]
    return timer_call(records)


def index_log(path: Path) -> LogIndex:
    """Stream one log and index it: payloads are read past (but the few the summary shows), headers' own
    values are parsed only for the kinds the index reads, and timer events in a row are taken as one."""
    stat = path.stat()
    index = LogIndex(path=path, size=stat.st_size, mtime=stat.st_mtime)
    open_segment: Span | None = None
    aot_ids = aot_log.Ids()  # AOTInductor's records carry no compile id: they get one of their own
    with open(path, "rb") as stream:
        for record, span in read_records(stream, index.problems, wants_payload=lambda r: r.name in _SUMMARY_PAYLOADS,
                                         wants_data=INDEX_DATA.__contains__, runs_of=INDEX_RUNS,
                                         artifacts_kept=INDEX_DATA | _SUMMARY_PAYLOADS):
            index.records += 1
            aot_ids.assign(record)
            if index.rank is None and record.rank is not None:
                index.rank = record.rank
            if record.compile_id is None:
                if open_segment is not None and open_segment.end == span.start:
                    open_segment.end = span.end  # global records between a compile's own stay in its range
            else:
                entry = index.compiles.get(record.compile_id)
                if entry is None:
                    entry = index.compiles[record.compile_id] = CompileIndex(record.compile_id)
                if entry.segments and entry.segments[-1] is open_segment and open_segment.end == span.start:
                    open_segment.end = span.end
                else:
                    open_segment = Span(span.start, span.end, span.line)
                    entry.segments.append(open_segment)
            _note(index, record)
    _check_complete(index)
    return index


def _note(index: LogIndex, record: Record) -> None:
    """What the index keeps of one record: its kind's entry in INDEX_NOTES, and Dynamo's records (but
    the guard trees, the heaviest, read when a compile is built); unknown kinds are counted, and a
    payload read (one the summary shows) that is not what its header's md5 says is left out."""
    if record.kind not in KNOWN_KINDS:
        index.problems.unknown[record.kind] += 1
        return
    if record.payload is not None and not record.payload_intact():
        index.problems.checksum_mismatches.append(record.line)
        return
    if DynamoRecords.reads(record) and record.name != "dynamo_cpp_guards_str":
        index.dynamo.add(record)
    note = INDEX_NOTES.get(record.name)
    if note is not None:
        note(index, index.compiles.get(record.compile_id or ""), record)


def _note_torch_version(index: LogIndex, _entry: CompileIndex | None, record: Record) -> None:
    if record.payload:
        try:
            index.torch = str(json.loads(record.payload).get("pytorch_version")) or index.torch
        except (ValueError, AttributeError):
            pass


def _note_metrics_torch(index: LogIndex, _entry: CompileIndex | None, record: Record) -> None:
    if isinstance(record.data, dict) and index.torch is None:
        index.torch = record.data.get("pytorch_version") or None


def _note_dynamo_graph(_index: LogIndex, entry: CompileIndex | None, record: Record) -> None:
    if entry is not None:
        entry.graph_checksum = record.checksum
        sizes = record.data.get("sizes") if isinstance(record.data, dict) else None
        entry.graph_nodes = len(sizes) if isinstance(sizes, dict) else None


def _note_output_code(_index: LogIndex, entry: CompileIndex | None, _record: Record) -> None:
    if entry is not None:
        entry.output_codes += 1


# record name -> what the index keeps of it (index, its compile's entry or None, the record)
INDEX_NOTES: dict[str, Callable[[LogIndex, CompileIndex | None, Record], None]] = {
    "torch_version": _note_torch_version,
    "compilation_metrics": _note_metrics_torch,
    "dynamo_output_graph": _note_dynamo_graph,
    "inductor_output_code": _note_output_code,
}


def _check_complete(index: LogIndex) -> None:
    finished = {m.compile_id for m in index.dynamo.stage({}).compile_metrics if m.kind == "frame"}
    started = [cid for cid in index.compiles if not cid.startswith("!") and not aot_log.is_aot(cid)]  # Dynamo's own
    unfinished = [cid for cid in started if cid not in finished]
    if unfinished:
        index.problems.notes.append(f"compile(s) {', '.join(unfinished)} have no compilation_metrics record: they "
                                    "were still compiling when the log ended (a killed job or a truncated log)")
    if index.records == 0:
        index.problems.notes.append("no structured trace records in this file")
    version = index.torch or ""
    if version and not version.startswith(TESTED_TORCH):
        index.problems.notes.append(f"written by torch {version}; inductor-explorer reads the logs of torch "
                                    f"{TESTED_TORCH[0]} to {TESTED_TORCH[-1]}: records it does not know are counted "
                                    "as unknown, stages they would hold are missing")


# ------------------------------------------------------------------------------------------ one compile


def read_compile(index: LogIndex, compile_id: str) -> list[Record]:
    """Every record of ``compile_id``, with payloads, read back from its byte ranges."""
    entry = index.compiles.get(compile_id)
    if entry is None:
        ids = list(index.compiles)
        raise KeyError(f"no compile {compile_id!r} in {index.path.name}{did_you_mean(compile_id, ids)}; compile ids: {ids}")
    stat = index.path.stat()
    if (stat.st_size, stat.st_mtime) != (index.size, index.mtime):
        raise TraceLoadError(f"{index.path} changed since it was loaded: load the trace again")
    records: list[Record] = []
    damaged: list[Record] = []
    with open(index.path, "rb") as stream:
        for segment in entry.segments:
            stream.seek(segment.start)
            chunk = io.BytesIO(stream.read(segment.end - segment.start))
            for record, _ in read_records(chunk, LogProblems(), first_line=segment.line, start=segment.start,
                                          wants_payload=lambda r: aot_log.belongs(r, compile_id) and _wanted(r)):
                if not aot_log.belongs(record, compile_id) or not _wanted(record):
                    continue
                (records if record.payload_intact() else damaged).append(record)
    _check_damage(index, compile_id, records, damaged)
    return records


def _check_damage(index: LogIndex, compile_id: str, records: list[Record], damaged: list[Record]) -> None:
    """Payloads that are not what their header's md5 says are left out and noted in the rank's problems;
    when that leaves none of the compile's graphs and code, opening it fails and says why."""
    lines = [r.line for r in damaged]
    index.problems.checksum_mismatches += [n for n in lines if n not in index.problems.checksum_mismatches]
    if any(_builds_graphs(r) for r in damaged) and not any(_builds_graphs(r) for r in records):
        rank = f"rank {index.rank}, " if index.rank is not None else ""
        raise TraceLoadError(
            f"compile {compile_id} ({rank}{index.path}) cannot be read: {len(lines)} of its records, its graphs "
            f"and code among them, hold a payload that is not what torch wrote (md5 mismatch at lines {lines[:5]}"
            f"{'...' if len(lines) > 5 else ''}). The log was damaged or edited after it was written; the rank's "
            "other compilations read as usual. Copy the log again from where the job wrote it.")


def _builds_graphs(record: Record) -> bool:
    """A record a compile's graphs or code are built from (its payload is the graph or the code)."""
    return record.checksum is not None and (aot_log.code_of(record) or record.name) in AOT_COMPILE_READERS


def _wanted(record: Record) -> bool:
    return (record.name in COMPILE_READERS or _is_timer(record) or DynamoRecords.reads(record)
            or aot_log.part(record) is not None or (record.compile_id or "").startswith(aot_log.PREFIX))


@dataclass
class _Inner:
    post_grad: str = ""
    output_code: str = ""
    mappings: dict[str, Any] = field(default_factory=dict)
    traces: dict[str, list[str]] = field(default_factory=dict)
    kind: str = ""
    language: str = "python"  # cpp: an AOT compile's C++ wrapper
    kernel_code: str = ""  # an AOT compile's kernel file


@dataclass
class _CompileParts:
    """What a compile's records hold, gathered in log order by the COMPILE_READERS handlers."""

    fx_code: str = ""
    inners: list[_Inner] = field(default_factory=list)
    aot_kinds: list[str] = field(default_factory=list)
    tensors: "_Tensors" = field(default_factory=lambda: _Tensors())

    def current(self, open_slot: Callable[[_Inner], bool]) -> _Inner:
        """The inner compile a record belongs to: the latest one still missing that part."""
        for inner in reversed(self.inners):
            if open_slot(inner):
                return inner
        self.inners.append(_Inner())
        return self.inners[-1]


def _read_fx_graph(parts: _CompileParts, record: Record) -> None:
    parts.fx_code = record.payload or ""


def _read_post_grad(parts: _CompileParts, record: Record) -> None:
    parts.inners.append(_Inner(post_grad=record.payload or ""))


def _read_output_code(parts: _CompileParts, record: Record) -> None:
    inner = parts.current(lambda i: not i.output_code)
    inner.output_code = record.payload or ""
    kind = _AOT_ID.search(inner.output_code[:400])
    inner.kind = kind["kind"] if kind else ""


def _read_node_mappings(parts: _CompileParts, record: Record) -> None:
    parts.current(lambda i: not i.mappings).mappings = _json(record) or {}


def _read_kernel_traces(parts: _CompileParts, record: Record) -> None:
    parts.current(lambda i: not i.traces).traces = _json(record) or {}


def _read_tensor(parts: _CompileParts, record: Record) -> None:
    parts.tensors.add(record.name, record.data)


def _read_aot_graph(kind: str) -> Callable[[_CompileParts, Record], None]:
    """AOTAutograd's graph of one kind: which kind each inner compile is, when its code does not say."""
    def read(parts: _CompileParts, _record: Record) -> None:
        parts.aot_kinds.append(kind)
    return read


def _read_aot_wrapper(parts: _CompileParts, record: Record) -> None:
    inner = parts.current(lambda i: not i.output_code)
    inner.output_code, inner.language, inner.kind = record.payload or "", "cpp", "inference"


def _read_aot_kernels(parts: _CompileParts, record: Record) -> None:
    parts.current(lambda i: not i.kernel_code).kernel_code = record.payload or ""


# record name -> how a compile's Compilation reads it (Dynamo's records go to its stage besides)
COMPILE_READERS: dict[str, Callable[[_CompileParts, Record], None]] = {
    "dynamo_output_graph": _read_fx_graph,
    "inductor_post_grad_graph": _read_post_grad,
    "inductor_output_code": _read_output_code,
    "inductor_provenance_tracking_node_mappings": _read_node_mappings,
    "inductor_provenance_tracking_kernel_stack_traces": _read_kernel_traces,
    "describe_tensor": _read_tensor,
    "describe_source": _read_tensor,
    "aot_forward_graph": _read_aot_graph("forward"),
    "aot_backward_graph": _read_aot_graph("backward"),
    "aot_inference_graph": _read_aot_graph("inference"),
}
# an AOTInductor compile's own records (compiler/pipeline/aot_log.py), keyed by their aot_log name
AOT_COMPILE_READERS: dict[str, Callable[[_CompileParts, Record], None]] = {
    **COMPILE_READERS,
    aot_log.FX_GRAPH: _read_fx_graph,
    aot_log.WRAPPER: _read_aot_wrapper,
    aot_log.KERNELS: _read_aot_kernels,
}
INDEX_DATA = frozenset(INDEX_NOTES) | READS  # the records whose header values the index reads
GRAPH_KINDS = frozenset(COMPILE_READERS)  # the kinds a compile is built from, beyond Dynamo's and the timers
# every record kind this reader reads or knowingly leaves out; a record of any other kind is counted as not read
KNOWN_KINDS = frozenset(INDEX_NOTES) | frozenset(AOT_COMPILE_READERS) | READS | SKIPPED_KINDS
# the records the index needs only the place of, read in runs (compiler/model/trace_log.py): not those it reads
# (nor the artifacts it reads: artifacts_kept), nor graph dumps (named in their values), nor an AOT compile's
# parts (their compile id is the reader's), nor kinds no table knows (counted)
INDEX_RUNS = KNOWN_KINDS - INDEX_DATA - {"graph_dump"} - aot_log.PARTS


def compilation_from_log(index: LogIndex, compile_id: str) -> Compilation:
    """The Compilation of one compile id, from its records (what the log holds of it); each record is read
    by its kind's entry in COMPILE_READERS (AOT_COMPILE_READERS for an AOTInductor compile)."""
    records = read_compile(index, compile_id)
    dynamo = index.dynamo.outline()
    readers = AOT_COMPILE_READERS if aot_log.is_aot(compile_id) else COMPILE_READERS
    parts = _CompileParts()
    for record in records:
        if DynamoRecords.reads(record):
            dynamo.add(record)
        read = readers.get(aot_log.code_of(record) or record.name)
        if read is not None:
            read(parts, record)
    graphs = _graphs(parts.fx_code, parts.inners, parts.aot_kinds)
    for graph in graphs:
        graph.compile_id = compile_id
    stage = dynamo.stage({compile_id: [g.id for g in graphs]}, [compile_id],
                         known_files={f for g in graphs for s in (g.fx, g.post_grad) for n in s.nodes
                                      for f, _, _ in n.stack})
    sources: dict[str, dict[int, str]] = {}
    for graph in graphs:
        for (file, line), text in user_lines(graph.fx.code + "\n" + graph.post_grad.code).items():
            sources.setdefault(file, {})[line] = text
    add_sources(sources, stage, dynamo.line_texts, read_files=False)
    metrics = next((m.values for m in stage.compile_metrics if m.kind == "frame"), {})
    frame = stage.frames[0] if stage.frames else None
    device = parts.tensors.device() or ("cuda" if any(k.language in ("triton", "template") for g in graphs
                                                 for k in g.kernels) else "cpu")
    return Compilation(
        function=(frame.function if frame else "") or str(metrics.get("co_name") or
                                                          ("AOTInductor" if aot_log.is_aot(compile_id) else "?")),
        device=device, device_name=f"{device} (from a TORCH_TRACE log)",
        torch=str(metrics.get("pytorch_version") or index.torch or "?"),
        triton=metrics.get("triton_version") or None,
        python=str(metrics.get("python_version") or "?").split(" ")[0],
        created=_created(metrics.get("start_time")), toggles={}, inductor_overrides={},
        backward=any(g.kind == "backward" for g in graphs), timings=_timings(stage.compile_metrics),
        inputs=parts.tensors.inputs(), output_specs=[], graphs=graphs, sources=sources, dynamo=stage,
        origin={"log": str(index.path), "rank": index.rank, "compile_id": compile_id},
        compile_calls=[call] if (call := timer_call(records)) is not None else [],
    )


def _json(record: Record) -> Any:
    try:
        return record.json_payload()
    except ValueError:
        return None


def _graphs(fx_code: str, inners: list[_Inner], aot_kinds: list[str]) -> list[GraphCapture]:
    graphs = []
    for index, inner in enumerate(inners):
        fx = parse("fx", fx_code)  # its own copy per inner graph: forward and backward link it differently
        post_grad = parse("post_grad", inner.post_grad)
        pre = inner.mappings.get("postToPre") if isinstance(inner.mappings.get("postToPre"), dict) else None
        link(post_grad, fx, pre)
        provenance = inner.mappings.get("cppCodeToPost")
        record = InnerRecord(
            dynamo_index=0, kind=inner.kind or (aot_kinds[index] if index < len(aot_kinds) else "inference"),
            wrapper=inner.output_code, wrapper_language=inner.language, kernel_code=inner.kernel_code,
            provenance={str(k): [str(n) for n in v] for k, v in provenance.items()} if isinstance(provenance, dict) else {},
            kernel_traces={str(k): [str(t) for t in v] for k, v in inner.traces.items() if isinstance(v, list)})
        graphs.append(assemble_stages(index, record, fx, post_grad))
    if not graphs and fx_code:  # Dynamo's graph only (the compile stopped before Inductor, or a non-Inductor backend)
        graphs.append(assemble_stages(0, InnerRecord(dynamo_index=0, kind="inference"), parse("fx", fx_code),
                                      FxStage("post_grad", "", [])))
    return graphs


class _Tensors:
    """The compile's input tensors, from ``describe_tensor`` / ``describe_source`` records."""

    def __init__(self) -> None:
        self.described: dict[tuple[Any, Any], dict[str, Any]] = {}
        self.sources: dict[tuple[Any, Any], str] = {}

    def add(self, kind: str, data: Any) -> None:
        if not isinstance(data, dict):
            return
        key = (data.get("describer_id"), data.get("id"))
        if kind == "describe_tensor":
            self.described.setdefault(key, data)
        elif isinstance(data.get("source"), str):
            self.sources.setdefault(key, data["source"])

    def inputs(self) -> list[dict[str, Any]]:
        out, seen = [], set()
        for key, source in self.sources.items():
            tensor = self.described.get(key)
            if tensor is None or tensor.get("is_parameter") or source in seen:
                continue
            seen.add(source)
            out.append({"shape": [s if isinstance(s, int) else str(s) for s in tensor.get("size", [])],
                        "dtype": str(tensor.get("dtype", "?")), "device": _device(tensor.get("device")),
                        "requires_grad": bool(tensor.get("requires_grad", False)), "source": source})
        return out

    def device(self) -> str | None:
        return next((_device(t.get("device")) for t in self.described.values() if t.get("device")), None)


def _device(text: Any) -> str:
    match = re.search(r"type='(\w+)'", str(text))
    return match.group(1) if match else str(text)


def _created(start: Any) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(start)) if isinstance(start, (int, float)) else ""


def _timings(metrics: list[Any]) -> dict[str, float]:
    """Compile times from Dynamo's metrics (the stage timers of a live capture are not in a log)."""
    out: dict[str, float] = {}
    for m in metrics:
        values = m.values
        pairs = (("total", "entire_frame_compile_time_s", 1), ("backend", "backend_compile_time_s", 1),
                 ("inductor", "inductor_compile_time_s", 1), ("codegen", "code_gen_time_s", 1),
                 ("pre_grad", "pre_grad_pass_time_us", 1e-6), ("joint_graph", "joint_graph_pass_time_us", 1e-6),
                 ("post_grad", "post_grad_pass_time_us", 1e-6))
        for name, key, scale in pairs:
            value = values.get(key)
            if isinstance(value, (int, float)):
                out[name] = round(out.get(name, 0.0) + value * scale, 6)
    return out

