"""The trace contract (compiler/SCHEMA.md) as code: what crosses from the compiler to the views.

One module that both sides import, and that imports nothing but the standard library (not torch, not
sympy, not the rest of ``compiler``), so ``widgets`` can read it without the compiler: the schema name
and version of every file kind, the one check every reader runs, how packed parts are packed, and the
keys of every record the trace holds. Adding a field to a record means adding it here, writing it in
``compiler/io/trace.py`` and documenting it in SCHEMA.md; the unit tests say which one was missed.
"""

from __future__ import annotations

import base64
import contextlib
import gc
import json
import zlib
from collections.abc import Mapping
from typing import Any, Iterator, Literal, TypedDict

# --------------------------------------------------------------------------------- file kinds

TRACE_SCHEMA = "inductor-explorer/trace"  # one Compilation (Compilation.save)
TRACE_VERSION = 2
TRACESET_SCHEMA = "inductor-explorer/traceset"  # a multi-rank job (TraceSet.save)
TRACESET_VERSION = 1
SWEEP_SCHEMA = "inductor-explorer/sweep"  # a sweep's table and every point's trace (Sweep.save)
SWEEP_VERSION = 1

# schema name -> (the newest version this code reads and writes, what a file of it is, in words)
SCHEMAS: dict[str, tuple[int, str]] = {
    TRACE_SCHEMA: (TRACE_VERSION, "an inductor-explorer trace"),
    TRACESET_SCHEMA: (TRACESET_VERSION, "a saved TraceSet"),
    SWEEP_SCHEMA: (SWEEP_VERSION, "a saved sweep"),
}


class ContractError(ValueError):
    """Data that is not the file kind it was given as, or of a newer schema version than this code reads.

    ``compiler.TraceFormatError`` and ``widgets.TraceError`` derive from it, so each side raises its own
    error from the one check below."""


def check(data: Any, schema: str, origin: str, error: type[ContractError] = ContractError,
          missing_ok: bool = False) -> int:
    """The version of ``data``, a file of kind ``schema`` (a key of SCHEMAS) read from ``origin``; raises
    ``error`` saying what was wrong and what to do when ``data`` is not one, or is newer than this code.

    ``missing_ok``: a mapping without ``schema`` / ``version`` keys is taken as the current version (the
    views accept a bare dict built by hand)."""
    newest, what = SCHEMAS[schema]
    if not isinstance(data, Mapping):
        raise error(f"{origin} is not {what}: expected a JSON object with schema {schema!r}, "
                    f"got {type(data).__name__}")
    found = data.get("schema", schema if missing_ok else None)
    if found != schema:
        raise error(f"{origin} is not {what} (its schema is {found!r}, expected {schema!r}); "
                    f"open it with the reader of its own schema")
    version = data.get("version", newest if missing_ok else None)
    if not isinstance(version, int) or isinstance(version, bool):
        raise error(f"malformed {origin}: its 'version' should be an int, got {version!r}; "
                    f"the file was not written by inductor-explorer or was cut short")
    if version > newest:
        raise error(f"{origin} uses {schema} schema version {version}, newer than this inductor-explorer reads "
                    f"({newest}); upgrade inductor-explorer to open it")
    return version


# ------------------------------------------------------------------------------ packed parts
# SCHEMA.md, "Packed parts": a record's heaviest keys as one string, their JSON zlib-compressed (level 6)
# and base64-encoded. Kernel IR and wrapper texts are most of a large trace and compress about 8x.

KERNEL_IR_PACKED_KEYS = ("stages", "line_map")
WRAPPER_PACKED_KEYS = ("source", "kernel_lines", "fx")
LOOP_IR_BODIES_PACKED_KEYS = ("bodies",)  # graphs[].loop_ir_bodies: {"bodies": {loop-IR node name: body}}


def pack(value: Any) -> str:
    """``value``'s compact JSON, zlib-compressed and base64-encoded."""
    body = json.dumps(value, separators=(",", ":")).encode("utf-8")
    return base64.b64encode(zlib.compress(body, 6)).decode("ascii")


def unpack(text: str, error: type[ContractError] = ContractError) -> Any:
    """What ``pack`` made ``text`` from; ``error`` when it does not decompress."""
    try:
        return json.loads(zlib.decompress(base64.b64decode(text)))
    except (ValueError, TypeError, zlib.error) as exc:
        raise error(f"malformed trace: a packed part does not decompress ({exc})") from exc


def packed(record: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    """``record`` with ``keys`` moved into one string, ``packed`` (a record with none of them as it is)."""
    if not any(record.get(key) for key in keys):
        return record
    out = {k: v for k, v in record.items() if k not in keys}
    out["packed"] = pack({key: record[key] for key in keys if key in record})
    return out


def unpacked(record: Any, error: type[ContractError] = ContractError) -> Any:
    """``record`` with its ``packed`` keys back in place (anything without ``packed`` as it is)."""
    if not isinstance(record, Mapping) or "packed" not in record:
        return record
    return {**{k: v for k, v in record.items() if k != "packed"}, **unpack(record["packed"], error)}


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic garbage collector off while a trace is loaded or cut into parts.

    Both allocate hundreds of thousands of objects while millions (the trace) stay alive, and none of
    them forms a cycle: each full pass of the collector would scan all of them again for nothing (half
    the load time of a large trace, seconds for a part of a 100,000-node graph). Work that makes many
    parts (an export) pauses it once around all of them: switching it back on after each part would let
    the next allocations pay for the passes put off meanwhile."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


# ------------------------------------------------------------------------- the records' keys
# Every key each record of a trace holds, in the order they are written (SCHEMA.md documents each one).
# Keys in an OPTIONAL_* set are left out when empty.

TRACE_KEYS = ("schema", "version", "meta", "inputs", "outputs", "sources", "graphs", "profiles", "numerics",
              "counters", "dynamo", "origin", "export", "library_files", "compile_time", "notes", "cudagraph_times")
OPTIONAL_TRACE_KEYS = frozenset({"dynamo", "origin", "export", "library_files", "compile_time", "notes",
                                 "cudagraph_times"})
META_KEYS = ("function", "device", "device_name", "torch", "triton", "python", "created", "toggles",
             "inductor_overrides", "backward", "timings", "device_peaks")
OPTIONAL_META_KEYS = frozenset({"device_peaks"})  # only for a GPU compiler/model/datasheet.py lists
GRAPH_KEYS = ("id", "index", "kind", "dynamo_graph", "timings", "fx", "post_grad", "loop_ir", "fused", "not_fused",
              "kernels", "wrapper", "autotune", "features", "compile_id", "memory", "cudagraphs")
OPTIONAL_GRAPH_KEYS = frozenset({"features", "compile_id", "memory", "loop_ir_bodies", "cudagraphs"})
FX_STAGE_KEYS = ("code", "nodes")
FX_NODE_KEYS_ALL = ("name", "op", "target", "args", "shape", "dtype", "inputs", "users", "user_line", "stack",
                    "module", "fx", "post_grad", "loop_ir", "kernels", "subgraph")
OPTIONAL_FX_NODE_KEYS = frozenset({"subgraph"})
LOOP_IR_KEYS = ("name", "kind", "buffers", "buffer_nodes", "device", "dtype", "size", "stride", "ranges", "sizes",
                "indexing", "reads", "writes", "body", "origins", "extern_target", "group", "eliminated", "kernels",
                "inherited_origins")
OPTIONAL_LOOP_IR_KEYS = frozenset({"inherited_origins"})
FUSED_KEYS = ("name", "kind", "nodes", "origins", "kernels")
NOT_FUSED_KEYS = ("node1", "node2", "reason")
KERNEL_KEYS = ("id", "name", "language", "source", "group", "loop_ir", "post_grad_nodes", "fx_nodes", "user_lines",
               "line_nodes", "wrapper_lines", "meta", "cost", "provenance_note", "ir")
# a kernel's "cost": {"bytes", "flops"}, computed once by compiler/model/cost.py; absent in traces saved before it
KERNEL_COST_KEYS = ("bytes", "flops")
OPTIONAL_KERNEL_KEYS = frozenset({"provenance_note", "ir"})
WRAPPER_KEYS = ("source", "kernel_lines", "language", "fx")
OPTIONAL_WRAPPER_KEYS = frozenset({"language", "fx"})  # language: absent for "python"
AUTOTUNE_KEYS = ("kernel", "choice", "time_ms", "chosen", "source")
FEATURE_KEYS = ("system", "summary", "kernel", "lines", "nodes", "wrapper_lines", "detail")
NOTE_KEYS = ("kind", "source", "message")


# ------------------------------------------------------------------------ typed records
# Records declared as TypedDicts, one comment per field: the key tuples are derived from them, and the
# builders in compiler/io return them.

class PartitionReasonRecord(TypedDict):
    """Why one scheduler node keeps its partition out of CUDA graphs."""

    node: str  # the scheduler (fused-group) node
    reason: str  # Inductor's should_partition words: "cpu ops", "DeviceCopy ops", "Conditional ops", ...
    op: str  # the op of the post-grad node it came from ("aten.mul.Tensor"); "" when unknown
    post_grad: str  # that post-grad node; "" when unknown
    kernels: list[str]  # the kernel ids computing it
    line: list[Any] | None  # [file, line] of the user's code, or null


class CudaGraphPartitionRecord(TypedDict):
    """One partition of a graph: nodes run together, inside one CUDA graph or outside any."""

    index: int  # its place among the graph's partitions, in launch order
    captured: bool  # Inductor recorded it for a CUDA graph
    replays: bool  # it replays from one: captured, and no skip of the graph or of it (derived, for views)
    function: str | None  # the wrapper function recorded for it ("partition_0", "call"); null: inline in call
    nodes: list[str]  # its scheduler (fused-group) nodes
    kernels: list[str]  # kernel ids it launches, each once, by first launch
    launches: list[str]  # its launches in wrapper order, a kernel called twice listed twice
    post_grad_nodes: list[str]  # post-grad nodes it computes
    reasons: list[PartitionReasonRecord]  # why not captured, per node (empty when captured)


class CudaGraphSkipRecord(TypedDict):
    """Why a whole graph (or one partition, at run time) runs without CUDA graphs."""

    kind: str  # "mutated input", "cpu tensor", "incompatible op", "dynamic shape", "too many re-recordings", ...
    message: str  # torch's reason, its stack trace left out
    when: str  # "compile" (Inductor, while compiling) | "run" (the CUDA graph tree, at the first run)
    node: str | None  # the post-grad node that caused it
    inputs: list[str]  # the post-grad placeholders concerned (mutated inputs)
    kernels: list[str]  # kernel ids computing that node
    line: list[Any] | None  # [file, line] of the user's code that caused it, or null
    partition: int | None  # the partition the tree gave up on; null: the graph whole


class CudaGraphEventRecord(TypedDict):
    """What the CUDA graph tree did with one of a graph's functions (consecutive replays merged)."""

    kind: str  # "warm-up", "record", "re-record", "replay", "eager", "skip", "many shapes"
    partition: int | None  # the partition function's index; null: the graph recorded whole
    count: int  # how many times in a row
    cuda_graph: int | None  # the tree's id of the CUDA graph recorded or replayed
    reason: str  # a re-record's or skip's reason ("" otherwise)
    pool_bytes: int | None  # the tree's memory pool after a recording
    run: str  # what the explorer was running: "capture", "run", "profile", "measure"


class CudaGraphsRecord(TypedDict):
    """graphs[].cudagraphs: what triton.cudagraphs (mode="reduce-overhead") made of one graph."""

    device: str  # the device the graph runs on
    state: str  # "captured" | "partial" | "skipped" | "no GPU" (derived from the rest, for views)
    partitions: list[CudaGraphPartitionRecord]
    skip: CudaGraphSkipRecord | None  # why the graph runs without CUDA graphs, or null
    events: list[CudaGraphEventRecord]  # seen while the explorer ran the program, oldest first
    user_inputs: dict[str, int]  # post-grad placeholder -> position of the user's input it is
    notes: list[str]  # what the capture could not tell


class CudaGraphTimeRecord(TypedDict):
    """cudagraph_times[]: one call of the program timed with and without its CUDA graphs."""

    with_ms: float  # per call, replaying the CUDA graphs
    without_ms: float  # per call, every kernel launched
    saved_ms: float  # without_ms - with_ms (derived, for views)
    calls: int  # calls per timed loop, at least
    created: str  # when it was measured (UTC, ISO 8601)


CUDAGRAPHS_KEYS = tuple(CudaGraphsRecord.__annotations__)
CUDAGRAPH_PARTITION_KEYS = tuple(CudaGraphPartitionRecord.__annotations__)
PARTITION_REASON_KEYS = tuple(PartitionReasonRecord.__annotations__)
CUDAGRAPH_SKIP_KEYS = tuple(CudaGraphSkipRecord.__annotations__)
CUDAGRAPH_EVENT_KEYS = tuple(CudaGraphEventRecord.__annotations__)
CUDAGRAPH_TIME_KEYS = tuple(CudaGraphTimeRecord.__annotations__)

# where each record sits in a trace (as SCHEMA.md names it) -> its keys
RECORDS: dict[str, tuple[str, ...]] = {
    "": TRACE_KEYS, "meta": META_KEYS, "graphs[]": GRAPH_KEYS, "graphs[].fx": FX_STAGE_KEYS,
    "graphs[].fx.nodes[]": FX_NODE_KEYS_ALL, "graphs[].loop_ir[]": LOOP_IR_KEYS, "graphs[].fused[]": FUSED_KEYS,
    "graphs[].not_fused[]": NOT_FUSED_KEYS, "graphs[].kernels[]": KERNEL_KEYS, "graphs[].wrapper": WRAPPER_KEYS,
    "graphs[].autotune[]": AUTOTUNE_KEYS, "graphs[].features[]": FEATURE_KEYS, "notes[]": NOTE_KEYS,
    "graphs[].cudagraphs": CUDAGRAPHS_KEYS, "graphs[].cudagraphs.partitions[]": CUDAGRAPH_PARTITION_KEYS,
    "graphs[].cudagraphs.partitions[].reasons[]": PARTITION_REASON_KEYS, "graphs[].cudagraphs.skip": CUDAGRAPH_SKIP_KEYS,
    "graphs[].cudagraphs.events[]": CUDAGRAPH_EVENT_KEYS, "cudagraph_times[]": CUDAGRAPH_TIME_KEYS,
}

# ------------------------------------------------------------------------- what the views read
# Views never see the trace whole (widgets/parts.py cuts it into parts): these are the fields that
# reach the browser. Node ``users`` and ``stack`` do not: no view reads them.

STAGES = ("export", "dynamo", "fx", "post_grad", "loop_ir", "fused", "kernels", "wrapper", "memory", "autotune",
          "compile_time")
# "culprit": a level of the bisect that blamed this compilation, ``id`` its index in the summary's culprits
SELECTION_KINDS = ("fx", "post_grad", "loop_ir", "fused", "kernel", "kernel_line", "wrapper_line", "user_line",
                   "culprit")
# A view of a compilation that ``explorer.bisect`` blamed (BisectResult.trace_view) carries, beside the trace
# and never saved with it, ``culprits``: one record per level of the culprit, with what it names in ``graph``
# (the summary passes them to the browser, where selecting one lights them all)
CULPRITS = "culprits"
CULPRIT_KEYS = ("level", "what", "graph", "fx", "post_grad", "fused", "kernels", "user_lines")
FX_NODE_KEYS = ("name", "op", "target", "args", "shape", "dtype", "inputs", "user_line", "module", "post_grad",
                "kernels")
PG_NODE_KEYS = ("name", "op", "target", "args", "shape", "dtype", "inputs", "user_line", "module", "fx", "loop_ir",
                "kernels")


# ------------------------------------------------------------------------- the live watch view
# What a WatchWidget receives (widgets/watch_widget.py), one trait per key of WatchPayload, built from a
# watch report by compiler/io/watch.py and sent a few times a second while the loop runs.


class WatchHeadline(TypedDict):
    summary: str  # the report's one line: steps, compiles (recompiles), graph breaks (fired), frames
    source: str  # what was watched: "a loop", "calls of train_step", or the TORCH_TRACE log read
    error: str | None  # the exception that ended the loop ("ValueError: bad batch"), None when none did
    sample_every: int  # one call in this many of each compiled graph was timed
    step_rule: str  # how the steps were made, in words ("one per optimizer step() (SGD)"); "" when none did


class WatchTimeline(TypedDict):
    steps: int  # the steps closed so far
    per_bar: int  # consecutive steps sharing one bar: 1 until the run has more steps than the view has bars
    bars: list[list[float]]  # one per bar: [first step, last step, mean ms, slowest ms]


class WatchCompileEvent(TypedDict):
    id: str  # the compile id: "0/1" is frame 0's first recompile
    kind: Literal["compile", "recompile"]  # "recompile" when an earlier compile's guard failed
    step: int | None  # the step it began in; None for a log no watch marked
    function: str  # the compiled function
    reason: str  # Dynamo's first recompile reason, one line ("" for a first compile)
    guard: str | None  # the failed guard's code as the earlier compile installed it (a recompile), else None
    file: str | None  # the user file of the failed guard (a recompile), else of the function
    line: int | None  # the line in ``file``
    value: str | None  # the value that broke the guard, when known
    seconds: float  # Dynamo's compile time of the frame
    cache: dict[str, str]  # "fx_graph" / "aotautograd" -> "hit", "miss" or "bypass"
    skipped: str  # why Dynamo gave up on the frame and ran it eagerly; "" when it compiled


class WatchBreakEvent(TypedDict):
    id: str  # "break N", N its place among the run's distinct breaks
    kind: Literal["break"]  # a graph break
    step: int | None  # the step of the first compile that hit it
    function: str  # the function it happened in
    reason: str  # Dynamo's reason for the break
    guard: None  # a break has no guard (the key keeps every event's fields alike)
    file: str | None  # the user file of the break
    line: int | None  # its line
    value: None  # a break has no value
    count: int  # how often it fired: the calls of the graph before it (a log: the compiles that hit it)
    compiles: list[str]  # the compile ids whose tracing hit it


class WatchFrameRow(TypedDict):
    frame: str  # Dynamo's frame id, the N of compile ids "N/..."
    function: str  # the frame's function
    file: str | None  # where it is defined
    line: int | None  # its first line
    calls: int  # calls of its compiled graphs during the watch
    ms: float | None  # estimated time in its graphs (sampled mean x calls); None when no call was timed
    compiles: int  # its compiles, recompiles included
    recompiles: int  # of which recompiles
    breaks: int  # distinct graph breaks inside it
    cudagraph_replays: int  # replays of its graphs' CUDA graphs (mode="reduce-overhead"); 0 without
    cudagraph_skips: int  # functions of its graphs the CUDA graph tree gave up on


class WatchCudaGraphEvent(TypedDict):
    step: int  # the step it happened in
    compile: str  # the compile id of the graph whose function it is ("0/1"); "" when the tree did not say
    function: str  # the function the tree records: "call" (the graph whole) or "partition_N"
    kind: Literal["warm-up", "record", "re-record", "replay", "eager", "skip", "many shapes"]  # what the tree did
    mode: str  # "inference", "forward" or "backward" ("" when unknown)
    count: int  # how many times in the step (replays and eager runs are counted, the rest one by one)
    reason: str  # a re-record's failed invariant, a skip's or warning's message; "" otherwise


class WatchPayload(TypedDict):
    headline: WatchHeadline  # the summary line and what the watch was
    timeline: WatchTimeline  # the step bars
    events: list[WatchCompileEvent | WatchBreakEvent]  # compiles in order, then the distinct breaks
    frames: list[WatchFrameRow]  # one row per compiled frame
    cudagraphs: list[WatchCudaGraphEvent]  # the CUDA graph tree's events per step, oldest first; [] without
    active: bool  # the loop was still running when the payload was made


# ------------------------------------------------------------------------- the compilation view's messages
# What the browser sends the ExplorerWidget (widgets/widget.py) and what it answers, each way one TypedDict;
# the widget dispatches on ``type`` through one table (ExplorerWidget._HANDLERS).


class PartRequest(TypedDict):
    type: Literal["part"]  # a part of the trace the view opens (widgets/js/store.js)
    key: str  # which part: "g0/fx", "g0/kernels", ... (widgets/parts.py PART_KEYS)
    id: int  # the request's number, echoed in the reply
    revision: int  # the compilation the view shows; a reply for another one is refused


class PartReply(TypedDict, total=False):
    type: Literal["part"]
    key: str
    id: int
    revision: int  # the compilation the widget shows now
    error: str  # why the part cannot be sent (absent when it is: the part travels as one UTF-8 JSON buffer)


class WhatIfRequest(TypedDict):
    type: Literal["what_if"]  # an "unfuse" press in the fused stage (widgets/js/whatif.js)
    graph: str  # the graph id
    group: str  # the fused group to split
    measure: bool  # also time both versions on the real inputs
    id: str  # the request's id, echoed in the reply


class ToggleAction(TypedDict):
    type: Literal["toggle"]  # a config toggle flipped (widgets/js/sessionbar.js): recompile with it
    name: str  # the toggle's name (explorer.toggles)
    value: bool  # its new value


class SelectAction(TypedDict):
    type: Literal["select"]  # a compilation of the session's history picked
    index: int  # its index in ``history``


class ReproAction(TypedDict):
    type: Literal["repro"]  # "reproducer" pressed: write a script reproducing the compilation shown


WIDGET_ACTIONS = ("toggle", "select", "repro")  # the requests the widget hands to its on_action callbacks
