"""The trace contract (compiler/model/contract.py): importable alone, one check, packed parts, and its tables
held to the dataclasses they serialise and to SCHEMA.md."""

from __future__ import annotations

import ast
import dataclasses
import gc
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import sympy

from compiler.model import contract
from compiler.model.compilation import Compilation, Note
from compiler.model.cudagraphs import (CudaGraphEvent, CudaGraphPartition, CudaGraphSkip, CudaGraphTime, EventKind,
                                       GraphCudaGraphs, PartitionReason, SkipKind)
from compiler.model.contract import ContractError
from compiler.model.errors import TraceFormatError
from compiler.model.features import FeatureUse
from compiler.model.kernel_ir import KernelIR
from compiler.model.memory import MemoryBuffer, MemoryMeasurement, MemoryStep, MemoryTimeline
from compiler.model.stages import (AutotuneRecord, FusedGroup, FxNode, FxStage, GraphCapture, Kernel, LoopIRNode,
                                   NotFused, Wrapper)
from compiler.model.wrapper_fx import WrapperFx, WrapperFxNode
from widgets.payload import TraceError

ROOT = Path(__file__).resolve().parents[2]
SCHEMA_MD = (ROOT / "compiler" / "SCHEMA.md").read_text()


def _fresh(code: str) -> str:
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True).stdout


# ------------------------------------------------------------------------------- standing alone


def test_contract_imports_only_the_standard_library():
    tree = ast.parse((ROOT / "compiler" / "model" / "contract.py").read_text())
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names}
    imported |= {node.module.split(".")[0] for node in ast.walk(tree)
                 if isinstance(node, ast.ImportFrom) and node.module and node.level == 0}
    relative = [node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.level]
    assert not relative
    assert imported - {"__future__"} <= sys.stdlib_module_names, imported - sys.stdlib_module_names


@pytest.mark.parametrize("module", ["compiler.model.contract", "widgets"])
def test_importing_leaves_torch_out(module):
    # widgets read the contract without the compiler: neither may pull torch in (compiler/__init__ is lazy)
    out = _fresh(f"import sys, {module}; print(sorted(m for m in ('torch', 'sympy', 'rich') if m in sys.modules))")
    assert "torch" not in out, f"import {module} imported {out.strip()}"


def test_contract_loads_as_a_file_alone():
    # outside the package, with nothing of the repository on the path: it needs nothing but itself
    path = ROOT / "compiler" / "model" / "contract.py"
    out = subprocess.run(
        [sys.executable, "-I", "-c",
         "import importlib.util, sys; spec = importlib.util.spec_from_file_location('contract', sys.argv[1]); "
         "module = importlib.util.module_from_spec(spec); spec.loader.exec_module(module); "
         "print(module.TRACE_VERSION, sorted(m for m in sys.modules if m.split('.')[0] in ('compiler', 'torch')))",
         str(path)], cwd="/", capture_output=True, text=True, check=True).stdout
    assert out.split() == [str(contract.TRACE_VERSION), "[]"]


# ---------------------------------------------------------------------------------- the check


@pytest.mark.parametrize("schema", sorted(contract.SCHEMAS))
def test_check_accepts_every_version_up_to_the_newest(schema):
    newest = contract.SCHEMAS[schema][0]
    for version in range(1, newest + 1):
        assert contract.check({"schema": schema, "version": version}, schema, "f.json") == version


@pytest.mark.parametrize("schema", sorted(contract.SCHEMAS))
def test_check_says_what_was_wrong_and_what_to_do(schema):
    newest, what = contract.SCHEMAS[schema]
    with pytest.raises(ContractError, match=f"f.json uses {schema} schema version {newest + 1}, newer .* upgrade"):
        contract.check({"schema": schema, "version": newest + 1}, schema, "f.json")
    with pytest.raises(ContractError, match=f"f.json is not {what} .*'other'.* open it with the reader"):
        contract.check({"schema": "other", "version": 1}, schema, "f.json")
    with pytest.raises(ContractError, match="'version' should be an int, got '2'"):
        contract.check({"schema": schema, "version": "2"}, schema, "f.json")
    with pytest.raises(ContractError, match="'version' should be an int, got True"):
        contract.check({"schema": schema, "version": True}, schema, "f.json")
    with pytest.raises(ContractError, match="got list"):
        contract.check([], schema, "f.json")


def test_check_raises_the_callers_error_and_both_sides_share_one_base():
    assert issubclass(TraceFormatError, ContractError) and issubclass(TraceError, ContractError)
    assert issubclass(ContractError, ValueError)
    with pytest.raises(TraceFormatError):
        contract.check({}, contract.TRACE_SCHEMA, "f.json", TraceFormatError)
    # views accept a bare dict built by hand: no schema or version is the current one
    assert contract.check({}, contract.TRACE_SCHEMA, "trace", TraceError, missing_ok=True) == contract.TRACE_VERSION
    with pytest.raises(TraceError):
        contract.check({"version": 99}, contract.TRACE_SCHEMA, "trace", TraceError, missing_ok=True)


# ------------------------------------------------------------------------------- packed parts


def test_packed_parts_round_trip_and_say_when_they_do_not_decompress():
    record = {"source": "x = 1\n" * 50, "kernel_lines": {"3": "k"}, "language": "cpp"}
    packed = contract.packed(record, contract.WRAPPER_PACKED_KEYS)
    assert set(packed) == {"language", "packed"} and len(packed["packed"]) < len(record["source"])
    assert contract.unpacked(packed) == record
    assert contract.packed({"language": "cpp"}, contract.WRAPPER_PACKED_KEYS) == {"language": "cpp"}  # nothing to pack
    assert contract.unpacked("not a record") == "not a record"
    with pytest.raises(TraceError, match="packed part does not decompress"):
        contract.unpacked({"packed": "bm90IHpsaWI="}, TraceError)


def test_collector_paused_restores_the_collector():
    assert gc.isenabled()
    with contract.collector_paused():
        assert not gc.isenabled()
        with contract.collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


# --------------------------------------------------------------------------------- SCHEMA.md


def test_schema_md_documents_every_schema_and_version():
    for schema, (version, _) in contract.SCHEMAS.items():
        assert f'"schema": "{schema}", "version": {version}' in SCHEMA_MD or (
            f'"schema": "{schema}",\n  "version": {version}' in SCHEMA_MD), schema
    assert f"# Trace JSON schema (version {contract.TRACE_VERSION})" in SCHEMA_MD


def _documented(key: str) -> bool:
    """``key`` appears in SCHEMA.md as a JSON key (``"key":``) or named in prose (```key``` or a path
    ending in it, ```graphs[].kernels[].key```)."""
    return bool(re.search(rf'"{key}":|`{key}`|\.{key}`', SCHEMA_MD))


def test_schema_md_documents_every_field_of_the_contract():
    packed = contract.KERNEL_IR_PACKED_KEYS + contract.WRAPPER_PACKED_KEYS + contract.LOOP_IR_BODIES_PACKED_KEYS
    undocumented = [f"{record or 'top level'}: {key}" for record, keys in contract.RECORDS.items() for key in keys
                    if not _documented(key)]
    undocumented += [f"packed: {key}" for key in packed if not _documented(key)]
    assert not undocumented, f"fields missing from compiler/SCHEMA.md: {undocumented}"


def test_schema_md_check_finds_a_missing_field(monkeypatch):
    monkeypatch.setitem(contract.RECORDS, "graphs[]", contract.GRAPH_KEYS + ("no_such_key",))
    with pytest.raises(AssertionError, match="graphs\\[\\]: no_such_key"):
        test_schema_md_documents_every_field_of_the_contract()


# ------------------------------------------------------------------- dataclasses <-> the trace

# Fields that never reach a trace, and why. Every other field of these classes must survive a round trip.
NOT_SAVED = {
    FxStage: {"stage": "the key it is saved under ('fx' / 'post_grad')", "module": "a live GraphModule",
              "module_pending": "a live rebuilder of that GraphModule",
              "code_pending": "a live printer of that GraphModule, run when code is first read"},
    Kernel: {"graph": "the GraphCapture holding it"},
    Wrapper: {"fx_pending": "a live converter, run before saving"},
    GraphCapture: {"compiled_fn": "a live callable", "compilation": "the Compilation holding it",
                   "_json": "a cache of its lazy JSON", "library_files": "the Compilation's, saved there",
                   "cache": "how this process's capture came by it (served or stored), not what it is",
                   "pending": "a loaded graph's JSON while its stages are unbuilt"},
    KernelIR: {"pending": "a builder, run before saving"},
    WrapperFx: {"module": "a live GraphModule"},
    MemoryTimeline: {"graph": "the GraphCapture holding it"},
    GraphCudaGraphs: {"graph": "the GraphCapture holding it"},
    Compilation: {"profiles": "its own serialiser and tests (compiler/io/reports.py)",
                  "numerics": "its own serialiser and tests (compiler/io/reports.py)",
                  "counter_reports": "its own serialiser and tests (compiler/io/reports.py)",
                  "dynamo": "its own serialiser and tests (compiler/io/dynamo.py)",
                  "export": "its own serialiser and tests (compiler/io/export.py)",
                  "compile_time_report": "its own serialiser and tests (compiler/io/compile_time.py)",
                  "compile_calls": "live compile events, summarised by compile_time_report",
                  "_compile_time_of": "a cache counter", "live": "live handles"},
}


def _node(name: str, stage: str) -> FxNode:
    return FxNode(name=name, op="call_function", target="aten.add.Tensor", args="(x, 1)", shape=[8, "s0"],
                  dtype="torch.float32", inputs=["x"], users=["out"], user_line=("/m.py", 3),
                  stack=[("/m.py", 3, "f")], module="encoder", subgraph="cond_true_0",
                  fx=[f"{stage}_fx"], post_grad=[f"{stage}_pg"], loop_ir=["op0"], kernels=["k0"])


def _sample() -> Compilation:
    """A compilation whose every saved field holds something other than its default."""
    x, r = sympy.Symbol("p0", integer=True), sympy.Symbol("r0_0", integer=True)
    loop = LoopIRNode(name="op0", kind="reduction", buffers=["buf0"], buffer_nodes={"buf0": "add"}, device="cpu",
                      dtype="torch.float32", size=["8"], stride=["1"], ranges={x: sympy.Integer(8), r: sympy.Integer(4)},
                      sizes=[[sympy.Integer(8)], [sympy.Integer(4)]], indexing={"index0": 4 * x + r},
                      reads=["arg0_1[c0]"], writes=["buf0[c0]"], body="def body(): ...", origins=["add"],
                      inherited_origins=["mul"], extern_target="aten.mm", group="op0_op1", eliminated=True,
                      kernels=["k0"])
    ir = KernelIR(stages={"ttir": "module {}"}, line_map={"ttir": [None, 1]}, meta={"registers": 32},
                  notes=["no SASS"], truncated={"ptx": 10}, source_file="/tmp/k.py")
    kernel = Kernel(id="k0", name="triton_k0", language="triton", source="def k():\n    pass", group="op0_op1",
                    loop_ir=["op0"], post_grad_nodes=["add"], fx_nodes=["add"], user_lines=[("/m.py", 3)],
                    line_nodes={2: ["add"]}, wrapper_lines=[7], meta={"num_warps": 4},
                    provenance_note="a copy of graph inputs", ir=ir)
    wrapper_fx = WrapperFx(status="built", reason="none", code="def forward(): ...",
                           nodes=[WrapperFxNode(name="buf0", op="call_function", kind="alloc", target="empty",
                                                args="[8]", inputs=["arg0_1"], kernel="k0", buffer="buf0",
                                                frees=["buf1"])],
                           seconds=0.5, dropped_lines=2)
    memory = MemoryTimeline(
        steps=[MemoryStep(index=1, call="k0", kernel="k0", wrapper_line=7, allocated=["buf0"], freed=["buf1"],
                          peak_bytes=64, live_bytes=32)],
        buffers=[MemoryBuffer(name="buf0", bytes=32, dtype="torch.float32", shape=[8], kind="reuse", alloc_step=1,
                              free_step=2, storage="buf1", reuses="buf1", reused_by="buf2", freed_by="del",
                              output=True, wrapper_line=6, free_line=9)],
        peak_bytes=64, peak_step=1, at_peak=["buf0"], input_bytes=8, output_bytes=16,
        estimate={"peak_bytes": 70}, measured=MemoryMeasurement(peak_bytes=65, baseline_bytes=1, estimated_bytes=64,
                                                                device="NVIDIA H100"),
        mismatches=["buf3 freed twice"], notes=["planned"])
    cudagraphs = GraphCudaGraphs(
        device="cuda:0",
        partitions=[CudaGraphPartition(index=0, captured=True, function="partition_0", nodes=["op0_op1"],
                                       kernels=["k0"], launches=["k0", "k0"], post_grad_nodes=["add"],
                                       reasons=[PartitionReason(node="op2", reason="cpu ops", op="aten.mul.Tensor",
                                                                post_grad="mul", kernels=("k1",),
                                                                line=("/m.py", 4))])],
        skip=CudaGraphSkip(kind=SkipKind.MUTATED_INPUT, message="skipping cudagraphs due to mutated inputs",
                           when="run", node="copy_", inputs=["arg1_1"], kernels=["k0"], line=("/m.py", 3), partition=0),
        events=[CudaGraphEvent(kind=EventKind.REPLAY, partition=0, count=3, cuda_graph=2, reason="static input moved",
                               pool_bytes=4096, run="measure")],
        user_inputs={"arg0_1": 0}, notes=["a note"])
    graph = GraphCapture(
        index=1, kind="forward", dynamo_graph=2, cudagraphs=cudagraphs,
        fx=FxStage(stage="fx", code="def forward(x): ...", nodes=[_node("add", "fx")]),
        post_grad=FxStage(stage="post_grad", code="def forward(arg0_1): ...", nodes=[_node("add", "post_grad")]),
        loop_ir=[loop], fused=[FusedGroup(name="op0_op1", kind="fused", nodes=["op0"], origins=["add"],
                                          kernels=["k0"])],
        kernels=[kernel],
        wrapper=Wrapper(source="def call(args):\n    k0.run()", kernel_lines={2: "k0"}, language="cpp", fx=wrapper_fx),
        autotune=[AutotuneRecord(kernel="k0", choice="BLOCK=64", time_ms=float("inf"), chosen=True,
                                 source="triton_heuristics")],
        not_fused=[NotFused(node1="op0", node2="op1", reason="node1 is extern")],
        timings={"codegen": 0.5}, compile_id="0/1", memory=memory,
        features=[FeatureUse(system="block_ptr", summary="block pointers", kernel="k0", lines=(2,), nodes=("add",),
                             wrapper_lines=(7,), detail={"count": 1})],
    )
    return Compilation(function="f", device="cuda", device_name="NVIDIA H100", torch="2.13.0", triton="3.5.0",
                       python="3.11.7", created="2026-11-26T00:00:00Z", toggles={"deterministic": True},
                       inductor_overrides={"deterministic": True}, backward=True, timings={"total": 1.5},
                       inputs=[{"shape": [8], "dtype": "torch.float32"}], output_specs=[{"shape": [8]}],
                       graphs=[graph], sources={"/m.py": {3: "y = x + 1"}}, library_files={"/t.py": "torch"},
                       origin={"log": "/tmp/log", "rank": 1},
                       notes=[Note("warning", "torch._dynamo.variables.tensor", "Graph break from `Tensor.item()`")],
                       cudagraph_times=[CudaGraphTime(with_ms=0.5, without_ms=1.25, calls=20,
                                                      created="2026-11-26T00:00:00Z")])


def _saved_fields(obj: Any) -> list[dataclasses.Field]:
    skipped = NOT_SAVED.get(type(obj), {})
    return [f for f in dataclasses.fields(obj) if f.name not in skipped]


def _walk(obj: Any, path: str = "c"):
    """Every dataclass in ``obj`` with its path, ``obj`` first."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        yield path, obj
        for f in _saved_fields(obj):
            yield from _walk(getattr(obj, f.name), f"{path}.{f.name}")
    elif isinstance(obj, (list, tuple)):
        for i, item in enumerate(obj):
            yield from _walk(item, f"{path}[{i}]")


def _plain(value: Any) -> Any:
    """A value compared across the round trip: tuples as lists, keys and sympy expressions as text."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in _saved_fields(value)}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if hasattr(value, "items"):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, sympy.Basic):
        return str(value)
    return value


def test_the_sample_sets_every_saved_field():
    # a field added to a stage class must be set here, so the round trip below checks it is saved
    unset = []
    for path, obj in _walk(_sample()):
        for f in _saved_fields(obj):
            default = f.default if f.default is not dataclasses.MISSING else (
                f.default_factory() if f.default_factory is not dataclasses.MISSING else dataclasses.MISSING)
            value = getattr(obj, f.name)
            if default is not dataclasses.MISSING and value == default or value in (None, "", [], {}, ()):
                unset.append(f"{path}.{f.name}")
    assert not unset, f"give these a non-default value in _sample(): {unset}"
    classes = {type(obj) for _, obj in _walk(_sample())}
    assert {FxNode, FxStage, LoopIRNode, FusedGroup, NotFused, Kernel, Wrapper, AutotuneRecord, GraphCapture,
            FeatureUse, KernelIR, WrapperFx, WrapperFxNode, MemoryTimeline, MemoryStep, MemoryBuffer,
            MemoryMeasurement, Compilation, GraphCudaGraphs, CudaGraphPartition, PartitionReason, CudaGraphSkip,
            CudaGraphEvent, CudaGraphTime} <= classes


@pytest.mark.parametrize("packed_parts", [False, True])
def test_every_saved_field_survives_to_json_and_back(packed_parts):
    from compiler.io.trace import from_json, to_json

    original = _sample()
    data = json.loads(json.dumps(to_json(original, packed_parts=packed_parts)))
    loaded = from_json(data)
    before = dict(_walk(original))
    after = dict(_walk(loaded))
    assert before.keys() == after.keys()
    lost = [f"{path}.{f.name}" for path, obj in before.items() for f in _saved_fields(obj)
            if _plain(getattr(obj, f.name)) != _plain(getattr(after[path], f.name))]
    assert not lost, f"fields that to_json -> from_json lost or changed: {lost}"


def test_the_contract_tables_are_the_keys_the_trace_holds():
    from compiler.io.trace import to_json

    data = to_json(_sample())
    graph = data["graphs"][0]
    assert tuple(data) == tuple(k for k in contract.TRACE_KEYS if k in data)
    assert set(contract.TRACE_KEYS) - set(data) <= contract.OPTIONAL_TRACE_KEYS
    assert tuple(data["meta"]) == tuple(k for k in contract.META_KEYS if k in data["meta"])
    assert set(contract.META_KEYS) - set(data["meta"]) <= contract.OPTIONAL_META_KEYS
    assert tuple(graph) == contract.GRAPH_KEYS
    assert tuple(to_json(_sample(), lazy=True)["graphs"][0]) == contract.GRAPH_KEYS  # what views are given
    assert tuple(graph["fx"]) == contract.FX_STAGE_KEYS
    assert tuple(graph["fx"]["nodes"][0]) == contract.FX_NODE_KEYS_ALL
    assert tuple(graph["loop_ir"][0]) == contract.LOOP_IR_KEYS
    assert tuple(graph["fused"][0]) == contract.FUSED_KEYS
    assert tuple(graph["not_fused"][0]) == contract.NOT_FUSED_KEYS
    assert tuple(graph["kernels"][0]) == contract.KERNEL_KEYS
    assert tuple(graph["wrapper"]) == contract.WRAPPER_KEYS
    assert tuple(graph["autotune"][0]) == contract.AUTOTUNE_KEYS
    assert tuple(graph["features"][0]) == contract.FEATURE_KEYS
    assert tuple(graph["cudagraphs"]) == contract.CUDAGRAPHS_KEYS
    assert tuple(graph["cudagraphs"]["partitions"][0]) == contract.CUDAGRAPH_PARTITION_KEYS
    assert tuple(graph["cudagraphs"]["partitions"][0]["reasons"][0]) == contract.PARTITION_REASON_KEYS
    assert tuple(graph["cudagraphs"]["skip"]) == contract.CUDAGRAPH_SKIP_KEYS
    assert tuple(graph["cudagraphs"]["events"][0]) == contract.CUDAGRAPH_EVENT_KEYS
    assert tuple(data["cudagraph_times"][0]) == contract.CUDAGRAPH_TIME_KEYS
    assert set(contract.FX_NODE_KEYS) | set(contract.PG_NODE_KEYS) <= set(contract.FX_NODE_KEYS_ALL)
    packed = to_json(_sample(), packed_parts=True)["graphs"][0]
    assert set(packed) == set(contract.GRAPH_KEYS) | {"loop_ir_bodies"}
    assert set(packed["wrapper"]) == set(contract.WRAPPER_KEYS) - set(contract.WRAPPER_PACKED_KEYS) | {"packed"}
    ir = packed["kernels"][0]["ir"]
    assert "packed" in ir and not set(contract.KERNEL_IR_PACKED_KEYS) & set(ir)


def test_optional_keys_are_left_out_when_empty():
    from compiler.io.trace import to_json

    c = _sample()
    graph = c.graphs[0]
    graph.features, graph.compile_id, graph.memory, graph.cudagraphs = [], None, None, None
    graph.fx.nodes[0].subgraph = None
    graph.loop_ir[0].inherited_origins = []
    graph.kernels[0].provenance_note, graph.kernels[0].ir = None, None
    graph.wrapper.language, graph.wrapper.fx = "python", None
    saved = to_json(c)["graphs"][0]
    assert set(saved) == set(contract.GRAPH_KEYS) - contract.OPTIONAL_GRAPH_KEYS
    assert set(saved["fx"]["nodes"][0]) == set(contract.FX_NODE_KEYS_ALL) - contract.OPTIONAL_FX_NODE_KEYS
    assert set(saved["loop_ir"][0]) == set(contract.LOOP_IR_KEYS) - contract.OPTIONAL_LOOP_IR_KEYS
    assert set(saved["kernels"][0]) == set(contract.KERNEL_KEYS) - contract.OPTIONAL_KERNEL_KEYS
    assert set(saved["wrapper"]) == set(contract.WRAPPER_KEYS) - contract.OPTIONAL_WRAPPER_KEYS


def test_every_view_refuses_other_kinds_and_newer_versions_through_the_one_check():
    from widgets import SweepParts, TraceParts, TraceSetParts
    from widgets.sweep import SweepError
    from widgets.traceset import TraceSetError

    for parts, schema, error in [(TraceParts, contract.TRACE_SCHEMA, TraceError),
                                 (TraceSetParts, contract.TRACESET_SCHEMA, TraceSetError),
                                 (SweepParts, contract.SWEEP_SCHEMA, SweepError)]:
        assert issubclass(error, ContractError)
        newest, what = contract.SCHEMAS[schema]
        with pytest.raises(error, match=f"{schema} schema version {newest + 1}, newer"):
            parts({"schema": schema, "version": newest + 1, "graphs": [], "ranks": [], "rows": [], "traces": []})
        other = next(s for s in contract.SCHEMAS if s != schema)
        with pytest.raises(error, match=f"is not {what}"):
            parts({"schema": other, "version": 1})
