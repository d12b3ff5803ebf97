"""The trace contract (compiler/SCHEMA.md) as code: what crosses from the compiler to the views.

One module that both sides import, and that imports nothing but the standard library (not torch, not
sympy, not the rest of ``compiler``), so ``widgets`` can read it without the compiler: the schema name
and version of every file kind, the one check every reader runs, how packed parts are packed, the
keys of every record the trace holds, and every payload a view receives (TypedDicts, one comment per field;
tests/unit/test_payload_declarations.py walks each payload its builder makes against its declaration).
Adding a field to a record means adding it here, writing it in ``compiler/io/trace.py`` and documenting it
in SCHEMA.md; the unit tests say which one was missed.
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
    partitions: list[CudaGraphPartitionRecord]  # the graph's partitions, in launch order
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


class _WrapperText(TypedDict):
    source: str  # the wrapper's code, as Inductor wrote it
    kernel_lines: dict[str, str]  # wrapper line (1-based, as a string) -> the kernel id defined or called there


class WrapperRecord(_WrapperText, total=False):
    """graphs[].wrapper (packed in a file, SCHEMA.md "Packed parts"), and the ``g0/wrapper`` part unpacked."""

    language: str  # "cpp" for a C++ wrapper; absent for "python"
    fx: dict[str, Any]  # the wrapper as an FX graph (SCHEMA.md "wrapper FX graph"), when Inductor made one


WRAPPER_KEYS = tuple(WrapperRecord.__annotations__)
OPTIONAL_WRAPPER_KEYS = WrapperRecord.__optional_keys__
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


class CulpritRecord(TypedDict):
    """One level of a bisect's culprit (compiler/model/bisect.py ``CulpritLevel.to_json``) and what it names."""

    level: str  # "backend", "subsystem", "config change", "avoided by", "it changes", "fused group", "kernel", "lines"
    what: str  # the culprit at that level, in words
    graph: str | None  # the graph id whose items it names; null: it names none
    fx: list[str]  # FX nodes it names
    post_grad: list[str]  # post-grad nodes
    fused: list[str]  # fused groups
    kernels: list[str]  # kernel ids
    user_lines: list[list[Any]]  # [file, line] of the user's code


CULPRIT_KEYS = tuple(CulpritRecord.__annotations__)


class _ViewNode(TypedDict, total=False):
    """What views read of an FX or post-grad node (``graphs[].fx.nodes[]``, SCHEMA.md); a key the trace lacks
    is left out."""

    name: str  # the node's name, unique in its graph
    op: str  # "placeholder", "call_function", "output", ...
    target: str  # the op called ("aten.mm.default"), or the placeholder's name
    args: str  # its arguments, printed
    shape: Any  # the output's shape: a list of ints and symbols, a list of them for several outputs, or null
    dtype: str | None  # the output's dtype ("torch.float32")
    inputs: list[str]  # the nodes it reads
    user_line: list[Any] | None  # [file, line] of the user's code it comes from
    module: str | None  # the nn.Module path it was called in


class FxViewNode(_ViewNode, total=False):
    """A node of the ``g0/fx`` part."""

    post_grad: list[str]  # the post-grad nodes made from it
    kernels: list[str]  # the kernels computing it


class PostGradViewNode(_ViewNode, total=False):
    """A node of the ``g0/post_grad`` part."""

    fx: list[str]  # the FX nodes it comes from
    loop_ir: list[str]  # the loop-IR nodes lowered from it
    kernels: list[str]  # the kernels computing it


FX_NODE_KEYS = tuple(FxViewNode.__annotations__)
PG_NODE_KEYS = tuple(PostGradViewNode.__annotations__)


# ------------------------------------------------------------------------- the compilation view's parts
# What widgets/parts.py sends the compilation view (widgets/widget.py ExplorerWidget, the static HTML export):
# first the summary (the ``summary`` trait), then each part when a view opens it (PART_KEYS, below).
# Records the trace already declares by their keys above travel as they are (``dict[str, Any]`` here).


class GraphCounts(TypedDict):
    """How many items each stage of a graph has: the stage buttons' counts, before any stage is sent."""

    fx: int  # FX nodes
    post_grad: int  # post-grad nodes
    loop_ir: int  # loop-IR nodes
    fused: int  # fused groups
    kernels: int  # kernels, extern calls included
    externs: int  # of which extern calls
    wrapper: int  # lines of the wrapper's code
    memory: int  # steps of the memory timeline (0 without one)
    autotune: int  # autotune records


class _GraphHeadKeys(TypedDict):
    counts: GraphCounts  # each stage's size
    parts: list[str]  # the graph's other keys, each a part ``g0/<key>`` ("memory", "cudagraphs", "features")


class GraphHead(_GraphHeadKeys, total=False):
    """A graph in the summary: its header keys as the trace has them (``graphs[]``, SCHEMA.md)."""

    id: str  # "g0"
    index: int  # its place among the compilation's graphs
    kind: str  # "inference", "forward", "backward"
    dynamo_graph: int  # the Dynamo graph it was compiled from
    compile_id: str | None  # Dynamo's compile id ("0/1"); null in a live compilation's graph without one
    timings: dict[str, float]  # seconds per compile phase


class DynamoDigest(TypedDict):
    """What the summary says of the Dynamo stage before it opens (widgets/dynamo_digest.py)."""

    frames: int  # frames Dynamo saw
    skipped_frames: list[str]  # "function: why" of each frame it ran eagerly
    guards: int  # guards installed, every kind counted
    graph_breaks: int  # graph breaks
    symbols: int  # symbolic sizes
    recompiles: int  # recompiles
    after_break: dict[str, str]  # graph id -> the break it runs after ("reason at file:line")


class CompileTimeDigest(TypedDict):
    seconds: float  # the compile time in total: the Compile time stage's button


class ExportDigest(TypedDict):
    """An AOT compilation's Export stage, announced by the summary."""

    inputs: int  # the exported program's inputs
    dynamic_dims: int  # its dynamic dimensions (range constraints)


class _TraceSummaryKeys(TypedDict):
    schema: str  # TRACE_SCHEMA
    version: int  # the trace's version
    meta: dict[str, Any]  # the trace's ``meta`` (META_KEYS)
    parts: list[str]  # the top-level parts there are: "sources", "profiles", "dynamo", ...
    graphs: list[GraphHead]  # every graph, in order


class TraceSummary(_TraceSummaryKeys, total=False):
    """The ``summary`` trait (widgets/parts.py ``TraceParts.summary``): what the first view needs; a few kB for
    any size of model. The keys below are there only when the trace has what they digest."""

    inputs: list[dict[str, Any]]  # the compiled program's inputs: {"shape", "dtype", "device", "requires_grad"}
    outputs: list[dict[str, Any]]  # its outputs, alike
    dynamo: DynamoDigest  # the Dynamo stage's counts
    compile_time: CompileTimeDigest  # the compile time report's total
    culprits: list[CulpritRecord]  # a bisect's culprit, level by level (``CULPRITS``)
    export: ExportDigest  # an AOT compilation's Export stage


class FxPart(TypedDict):
    """``g0/fx``."""

    code: str  # the FX graph's Python code
    nodes: list[FxViewNode]  # its nodes


class PostGradPart(TypedDict):
    """``g0/post_grad``."""

    code: str  # the post-grad graph's Python code
    nodes: list[PostGradViewNode]  # its nodes


class OutlinePart(TypedDict):
    """``g0/fx_outline``, ``g0/post_grad_outline``: what a graph's first drawing reads, in columns."""

    count: int  # the nodes
    columns: dict[str, list[Any]]  # field -> each node's value (an index into ``tables`` where it has one)
    tables: dict[str, list[Any]]  # field -> its distinct values, for fields that repeat (op, target, shape, ...)


class FusedPart(TypedDict):
    """``g0/fused``."""

    fused: list[dict[str, Any]]  # the fused groups (FUSED_KEYS)
    not_fused: list[dict[str, Any]]  # the pairs Inductor did not fuse, with why (NOT_FUSED_KEYS)
    user_lines: dict[str, int]  # group -> how many distinct user lines its kernels compute


class KernelPart(TypedDict, total=False):
    """``g0/kernel/<id>``: a kernel's heavy keys, which the kernels part leaves out."""

    source: str  # its source (an extern call: the wrapper's call)
    ir: dict[str, Any]  # its IR stages and line map (SCHEMA.md "Triton IR"), unpacked


class RooflinePoint(TypedDict):
    """One kernel placed on the roofline (widgets/roofline.py)."""

    kernel: str  # its id
    language: str | None  # "triton", "cpp", "extern"
    seconds: float  # per launch
    bytes: float  # moved per launch
    flops: float  # computed per launch
    intensity: float  # flops / bytes
    flops_per_s: float  # achieved
    bytes_per_s: float  # achieved
    time_source: str  # "Nsight Compute" | "profile"
    bytes_source: str  # "DRAM, Nsight Compute" | "Inductor's estimate"
    dtype: str | None  # the dtype it computes in ("float32")


class RooflineRoofs(TypedDict):
    bandwidth: float | None  # peak DRAM bytes/s; null when nothing records it
    bandwidth_source: str | None  # where it comes from
    compute: float | None  # peak FLOP/s for the points' dtype; null when unknown
    compute_source: str | None  # where it comes from


class RooflinePart(TypedDict):
    """``g0/roofline``: the graph's kernels as roofline points."""

    graph: str  # the graph id
    device: str | None  # the device's name (meta.device_name)
    points: list[RooflinePoint]  # the kernels with a time, bytes and FLOPs
    skipped: list[str]  # kernels timed but with no bytes or FLOPs to place them
    roofs: RooflineRoofs  # the roofs recorded
    how_to: str | None  # what to run when no kernel has a time (null when some do)


class _CompileTimeBlockKeys(TypedDict):
    id: str  # the phase's id
    name: str  # its name
    depth: int  # its row: 0 the root
    x_s: float  # seconds of everything left of it on its row
    seconds: float  # its width
    share: float  # seconds over the total


class CompileTimeBlock(_CompileTimeBlockKeys, total=False):
    """One phase of the Compile time icicle (widgets/compile_time_parts.py)."""

    graph: str  # the graph id it compiled
    kernel: str  # the kernel it compiled
    compile_id: str  # Dynamo's compile id
    category: str  # its report category
    cache: str  # an FX graph cache lookup: "hit", "miss", "bypass"
    cache_saved_s: float  # what a hit saved


class _CompileTimeChartKeys(TypedDict):
    source: str  # "capture" | "log"
    seconds: float  # the total
    explorer_s: float  # the explorer's own time, not torch's
    categories: dict[str, float]  # category -> seconds
    blocks: list[CompileTimeBlock]  # every phase, depth first
    cache_saved_s: float  # what FX graph cache hits saved in all
    kernels: list[dict[str, Any]]  # the costliest kernels' charges (compile_time report, SCHEMA.md)
    lines: list[dict[str, Any]]  # the costliest user lines
    nodes: list[dict[str, Any]]  # the costliest FX nodes
    modules: list[dict[str, Any]]  # the costliest modules
    recompiles: list[dict[str, Any]]  # the recompiles and what they cost
    suggestions: list[dict[str, Any]]  # what would compile faster
    notes: list[str]  # what the report could not tell


class CompileTimeChart(_CompileTimeChartKeys, total=False):
    """``compile_time_chart``: the Compile time stage's icicle and its charge lists."""

    rank: str  # the rank of a multi-rank job's report


# A part key -> what it holds. Top-level parts are the trace's keys beyond the header (TRACE_PARTS) and two
# made from the compile-time report; a graph's parts are ``<graph id>/<name>`` (GRAPH_PARTS), a kernel's
# ``<graph id>/kernel/<kernel id>`` (KernelPart).
TRACE_PARTS: dict[str, Any] = {
    "sources": dict[str, dict[str, str]],  # file -> line (as a string) -> its text, for the user lines linked
    "profiles": list[dict[str, Any]],  # c.profile() reports, oldest first
    "numerics": list[dict[str, Any]],  # c.check_numerics() reports
    "counters": list[dict[str, Any]],  # c.counters() reports (Nsight Compute)
    "dynamo": dict[str, Any],  # the Dynamo stage
    "origin": dict[str, Any],  # where an imported trace came from
    "export": dict[str, Any],  # an AOT compilation's exported program
    "library_files": dict[str, Any],  # library frames' files
    "compile_time": dict[str, Any],  # the compile-time report
    "notes": list[dict[str, Any]],  # what the capture could not do (NOTE_KEYS)
    "cudagraph_times": list[CudaGraphTimeRecord],  # calls timed with and without CUDA graphs
    "compile_time_chart": CompileTimeChart,
    "compile_time_chrome": str,  # the Chrome trace's text (a JSON string the browser hands on unread)
}
GRAPH_PARTS: dict[str, Any] = {
    "fx": FxPart, "post_grad": PostGradPart, "fx_outline": OutlinePart, "post_grad_outline": OutlinePart,
    "loop_ir": list[dict[str, Any]],  # loop-IR nodes without ``body`` (LOOP_IR_KEYS)
    "loop_ir_bodies": dict[str, str],  # loop-IR node -> its body
    "fused": FusedPart,
    "kernels": list[dict[str, Any]],  # kernel records without source and ir, with ``source_lines`` (KERNEL_KEYS)
    "kernel": KernelPart,
    "wrapper": WrapperRecord,
    "autotune": list[dict[str, Any]],  # AUTOTUNE_KEYS; an infinite time_ms as "inf"
    "roofline": RooflinePart,
    # the graph's optional records: null in a live compilation's graph without one (a saved trace leaves them out)
    "memory": dict[str, Any] | None,  # the memory timeline (SCHEMA.md "Memory timeline")
    "features": list[dict[str, Any]],  # FEATURE_KEYS
    "cudagraphs": CudaGraphsRecord | None,
}


def part_declaration(key: str) -> Any:
    """What the part ``key`` holds (a type of TRACE_PARTS or GRAPH_PARTS); KeyError for a key not declared."""
    gid, sep, rest = key.partition("/")
    if not sep:
        return TRACE_PARTS[key]
    return GRAPH_PARTS["kernel" if rest.startswith("kernel/") else rest]


def stage_counts(graph: Mapping[str, Any], error: type[Exception]) -> dict[str, int]:
    """How big each stage of a graph's JSON is, as a summary shows it, without reading its nodes
    (``error``: what a wrapper whose packed part does not decompress raises)."""
    size = lambda value: len(value) if isinstance(value, list) else 0  # noqa: E731
    wrapper = unpacked(graph.get("wrapper") or {}, error)
    return {"fx": size((graph.get("fx") or {}).get("nodes")), "post_grad": size((graph.get("post_grad") or {}).get("nodes")),
            "loop_ir": size(graph.get("loop_ir")), "fused": size(graph.get("fused")),
            "kernels": size(graph.get("kernels")),
            "externs": sum(1 for k in graph.get("kernels") or [] if k.get("language") == "extern"),
            "wrapper": len(str(wrapper.get("source", "")).splitlines()) if wrapper.get("source") else 0,
            "memory": size((graph.get("memory") or {}).get("steps")),
            "autotune": size(graph.get("autotune"))}


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
    type: Literal["part"]  # the answer to a PartRequest
    key: str  # the part asked for
    id: int  # the request's number
    revision: int  # the compilation the widget shows now
    error: str  # why the part cannot be sent (absent when it is: the part travels as one UTF-8 JSON buffer)


class WhatIfRequest(TypedDict):
    type: Literal["what_if"]  # an "unfuse" press in the fused stage (widgets/js/whatif.js)
    graph: str  # the graph id
    group: str  # the fused group to split
    measure: bool  # also time both versions on the real inputs
    id: str  # the request's id, echoed in the reply


class WhatIfKernelRow(TypedDict):
    """One kernel pair of the edited graph, paired by the FX nodes they compute (as explorer.diff pairs them)."""

    status: str  # "same", "changed", "added", "removed"
    before: str  # the kernel as compiled ("" when added)
    before_bytes: float | None  # the bytes it moves; null when there is none
    before_ms: float | None  # its time, once measured
    after: str  # the kernel with the edit ("" when removed)
    after_bytes: float | None  # the bytes it moves; null when there is none
    after_ms: float | None  # its time, once measured
    nodes: list[str]  # the FX nodes they compute


class WhatIfSideTotals(TypedDict):
    """One side of the comparison, in all."""

    kernels: int  # its kernels
    bytes: float  # the bytes they move
    peak_bytes: int | None  # the planned memory peak
    ms: float | None  # the time of its kernels, once measured
    numerics_ok: bool | None  # its outputs matched eager (null: not checked)
    max_rel: float | None  # the largest relative error against eager


class WhatIfTotals(TypedDict):
    before: WhatIfSideTotals  # as compiled
    after: WhatIfSideTotals  # with the edit


class WhatIfComparison(TypedDict):
    """What the fused view draws beside a group for an "unfuse" (widgets/what_if_payload.py)."""

    group: str  # the fused group asked for
    graph: str  # the graph edited
    label: str  # the edit, in words
    verdict: str  # what it costs or saves, one sentence
    note: str  # what the edit cannot promise ("" when nothing)
    measured: bool  # both sides were timed
    kernels: list[WhatIfKernelRow]  # the kernel pairs
    totals: WhatIfTotals  # each side in all


class WhatIfRefusal(TypedDict):
    """The message shown instead of a comparison (widgets/what_if_payload.py ``what_if_error``)."""

    group: str  # the fused group asked for
    error: str  # a refusal in its own words; another failure as "Type: message"


class WhatIfAnswer(WhatIfComparison):
    """The widget's reply to a WhatIfRequest with a comparison."""

    type: Literal["what_if"]  # the answer to a WhatIfRequest
    id: str  # the request's id


class WhatIfRefused(WhatIfRefusal):
    """The widget's reply to a WhatIfRequest it could not answer with a comparison."""

    type: Literal["what_if"]  # the answer to a WhatIfRequest
    id: str  # the request's id
    graph: str  # the graph asked for


WhatIfReply = WhatIfAnswer | WhatIfRefused


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


# ------------------------------------------------------------------------- the sweep view
# What a SweepWidget receives (widgets/sweep_widget.py): the ``sweep`` trait, SweepParts.summary() of
# widgets/sweep.py; each point's parts are a compilation's (``p3`` its TraceSummary, ``p3/g0/fx`` a part), and
# part ``d{i}-{j}`` the diff of two points (explorer.diff(...).to_json(), also the widget's ``diff`` trait).


class SweepMeta(TypedDict):
    """The sweep as a whole (SCHEMA.md "Sweep file", ``meta``)."""

    function: str  # what was swept
    device: str  # "cpu" | "cuda"
    engine: str  # "local" | "ray"
    options: dict[str, Any]  # backward, runs, warmup, check, grad_enabled
    workers: list[str]  # the workers that ran the points
    wall_s: float  # the sweep's time
    created: str  # when it ran (UTC, ISO 8601)
    cancelled: bool  # interrupted: some rows are "cancelled"


class SweepRowRecord(TypedDict):
    """One point of a sweep: a row of ``rows`` in a sweep file (compiler/sweeps/result.py ``SweepRow``)."""

    index: int  # the point's number
    config: dict[str, Any]  # toggle names / raw Inductor keys as asked
    input_set: int  # which input set
    shapes: list[list[int]]  # its tensor inputs' shapes ([] when the sweep has one input set)
    status: str  # "ok" | "failed" | "cancelled" | "pending"
    stage: str | None  # where a failed point stopped
    error: str | None  # why it failed
    compile_s: float | None  # its compile time
    compile_phases: dict[str, float]  # compile_s by phase
    run_ms: float | None  # one call in a loop of back-to-back calls
    device_ms: float | None  # its kernels' time per run
    threads: int | None  # CPU threads it ran with (null on the GPU)
    timed: list[float]  # [start, end] (epoch s) of run_ms and the profile
    timed_alone: bool | None  # CPU workers: no other worker ran meanwhile
    peak_bytes: int | None  # measured peak on the GPU
    planned_peak_bytes: int | None  # the largest planned peak of a graph
    max_error: float | None  # the worst kernel's max relative error against eager
    ok: bool | None  # numerics within tolerance (null: not checked)
    kernels: int | None  # its kernels
    graphs: int | None  # its graphs
    graph_breaks: int | None  # its graph breaks
    recompiles: int | None  # its recompiles
    worker: str  # the worker that ran it
    gpu: str  # its GPU ("" on CPU)
    wall_s: float | None  # the point's time in its worker
    stage_s: dict[str, float]  # where that time went: load, compile, profile, ...
    traceback: str  # a failure's traceback


class SweepTableRow(SweepRowRecord):
    """A row of the sweep view's table."""

    key: str | None  # the part key of its trace ("p3"); null: the point left none
    ratio: float | None  # its run_ms over the best point's


class SweepSummary(TypedDict):
    """The ``sweep`` trait: what the first view reads."""

    schema: str  # SWEEP_SCHEMA
    version: int  # SWEEP_VERSION
    meta: SweepMeta  # the sweep as a whole
    best: int | None  # the fastest point that ran with numerics that held
    rows: list[SweepTableRow]  # every point, in order
    diffs: bool  # the view can diff two points (parts ``d{i}-{j}``)


class DiffToggle(TypedDict):
    name: str  # a toggle that differs
    a: Any  # its value in the first compilation
    b: Any  # in the second


class DiffTiming(TypedDict):
    stage: str  # a compile phase
    a: float | None  # its seconds in the first compilation
    b: float | None  # in the second


class DiffPayload(TypedDict):
    """explorer.diff(a, b).to_json() (compiler/io/diff.py): what the second compilation changed."""

    a: str  # the first compilation's label
    b: str  # the second's
    torch: list[str]  # each one's torch version
    run_ms: list[float | None]  # each one's run time, when profiled
    summary: str  # the diff in one line
    toggles: list[DiffToggle]  # settings that differ
    graphs: list[dict[str, Any]]  # per graph pair: nodes and kernels added, removed, changed
    timings: list[DiffTiming]  # compile phases side by side
    outputs: dict[str, Any]  # the outputs compared, when both ran


# ------------------------------------------------------------------------- the TraceSet view
# What a TraceSetWidget receives (widgets/traceset_widget.py): the ``traceset`` trait, TraceSetParts.summary() of
# widgets/traceset.py; each compilation's parts are a compilation's (``c3`` its TraceSummary, ``c3/g0/fx`` a part).


class CompileSummaryRecord(TypedDict):
    """One compile of one rank as the log's index sees it (compiler/model/traceset.py ``CompileSummary``)."""

    compile_id: str  # Dynamo's compile id ("0/1")
    function: str  # the compiled function
    graph: str | None  # md5 of Dynamo's printed graph; null: no graph
    graph_nodes: int | None  # its nodes
    seconds: float  # its compile time
    graph_breaks: list[str]  # "file:line reason"
    recompile_reasons: list[str]  # why it recompiled


class _RankFacts(TypedDict):
    rank: str  # the rank
    log: str  # its TORCH_TRACE log
    torch: str | None  # the torch version it ran
    problems: list[str]  # what the reader skipped: malformed lines, unknown records, truncation
    seconds: float  # its compile time in all
    graphs: int  # compiles that made a graph
    graph_break_count: int  # graph breaks in all
    recompile_count: int  # recompiles


class RankSummaryRecord(_RankFacts):
    """A rank's ``summary`` in a TraceSet file (compiler/io/traceset.py ``summary_to_json``)."""

    compiles: list[CompileSummaryRecord]  # its compiles, in log order


class CompileEntry(CompileSummaryRecord):
    key: str  # the part key of the compilation ("c3")


class RankEntry(_RankFacts):
    """A rank in the TraceSet view."""

    compiles: list[CompileEntry]  # its compiles, each with its part key


class DivergenceRecord(TypedDict):
    """One way the ranks did not compile alike (compiler/model/traceset.py ``Divergence``)."""

    kind: str  # "graph" | "recompile" | "graph_break" | "compile_time" | "compile_phase"
    summary: str  # in words
    ranks: dict[str, str]  # rank -> what that rank did
    compile_id: str | None  # the compile concerned; null for kinds about the whole rank


class TraceSetSummary(TypedDict):
    """The ``traceset`` trait: what the first view reads."""

    schema: str  # TRACESET_SCHEMA
    version: int  # TRACESET_VERSION
    path: str  # the directory of logs read
    problems: list[str]  # what differs across the ranks as a whole (torch versions, ...)
    divergence: list[DivergenceRecord]  # where the ranks diverge
    ranks: list[RankEntry]  # every rank, with its compiles
