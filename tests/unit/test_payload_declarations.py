"""Every payload a view receives, built from recorded fixtures by the code that sends it, walked against its
declaration in compiler/model/contract.py (tests/contract_check.py: every key declared, every required key
there, every value of its declared type, all the way down): the compilation view's summary and every part it
can fetch, a bisect's culprits, the "what if" replies, the sweep view's table, points and diffs, the TraceSet
view's summary and compilations. The watch view's payload has its own test (test_watch_widget.py)."""

from __future__ import annotations

import ast
import dataclasses
import gzip
import inspect
import json
import typing
from pathlib import Path
from typing import Any

import pytest

import explorer
from compiler.model import contract
from compiler.model.bisect import CulpritLevel
from compiler.model.contract import (CompileSummaryRecord, CulpritRecord, DiffPayload, DivergenceRecord,
                                     SweepRowRecord, SweepSummary, TraceSetSummary, TraceSummary, WhatIfAnswer,
                                     WhatIfRefused, part_declaration)
from compiler.model.traceset import CompileSummary, Divergence
from compiler.sweeps.result import Sweep, SweepRow
from tests.contract_check import mismatches
from tests.paths import FIXTURES
from tests.unit.test_what_if_widget import GROUP, unfused_softmax
from widgets import SweepParts, TraceParts, TraceSetParts
from widgets.widget import ExplorerWidget


def _read(path: Path) -> Any:
    return json.loads(gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes())


TRACES = sorted(p for p in [*FIXTURES.glob("*.json"), *FIXTURES.glob("*.json.gz"), *FIXTURES.glob("counters/*.json")]
                if _read(p).get("schema") == contract.TRACE_SCHEMA)


def _sent(value: Any) -> Any:
    """What the browser gets: the value through strict JSON (tuples become lists)."""
    return json.loads(json.dumps(value, allow_nan=False))


def _walk(parts: Any, prefix: str = "") -> list[str]:
    """Every mismatch of the summary of ``parts`` (a TraceParts) and of every part it can send."""
    found = mismatches(_sent(parts.summary()), TraceSummary, f"{prefix}summary")
    keys = list(parts.keys()) + [f"{gid}/post_grad_outline" for gid in parts.graphs]  # keys() lists the FX one
    for key in keys:
        found += mismatches(json.loads(parts.encoded(key)), part_declaration(key), f"{prefix}{key}")
    return found


def test_the_fixtures_cover_the_parts_there_are():
    assert len(TRACES) >= 20
    seen = {key.split("/", 1)[1].split("/")[0] if "/" in key else key
            for path in TRACES for key in TraceParts(_read(path)).keys()}
    assert seen == set(contract.TRACE_PARTS) - {"origin"} | set(contract.GRAPH_PARTS) - {"post_grad_outline"}


@pytest.mark.parametrize("path", TRACES, ids=lambda p: p.name)
def test_every_part_of_a_saved_trace_is_what_the_contract_declares(path):
    assert _walk(TraceParts(_read(path))) == []


@pytest.mark.parametrize("path", [FIXTURES / "widget_sample.json", FIXTURES / "gpu_training.json",
                                  FIXTURES / "gpu_cudagraphs_partitions.json", FIXTURES / "export_dynamic.json.gz"],
                         ids=lambda p: p.name)
def test_every_part_of_a_loaded_compilation_is_what_the_contract_declares(path):
    """A Compilation's view serializes its graphs and kernels as they are read (compiler/io/trace.py)."""
    assert _walk(TraceParts(explorer.load(path))) == []


def _culprits(trace: dict) -> list[CulpritLevel]:
    graph = trace["graphs"][0]
    kernel = graph["kernels"][-1]
    return [CulpritLevel("backend", "inductor"),
            CulpritLevel("fused group", f"g0 {kernel['group']}", "g0", post_grad=kernel["post_grad_nodes"],
                         fused=[kernel["group"]], kernels=[kernel["id"]], user_lines=[tuple(kernel["user_lines"][0])])]


def test_a_bisect_views_culprits_are_what_the_contract_declares():
    trace = _read(FIXTURES / "widget_sample.json")
    levels = [level.to_json() for level in _culprits(trace)]
    assert [mismatches(level, CulpritRecord) for level in levels] == [[], []]
    summary = _sent(TraceParts({**trace, contract.CULPRITS: levels}).summary())
    assert mismatches(summary, TraceSummary) == [] and summary["culprits"] == _sent(levels)


def _reply(widget: ExplorerWidget, monkeypatch: pytest.MonkeyPatch) -> dict:
    sent: list[dict] = []
    monkeypatch.setattr(widget, "send", lambda content, buffers=None: sent.append(content))
    widget._on_message(widget, {"type": "what_if", "group": GROUP, "graph": "g0", "measure": False, "id": "w1"}, [])
    [reply] = sent
    return _sent(reply)


def test_the_what_if_replies_are_what_the_contract_declares(monkeypatch):
    trace = _read(FIXTURES / "widget_sample.json")
    answered = _reply(ExplorerWidget(trace, what_if=lambda group, graph, measure: unfused_softmax()), monkeypatch)
    assert mismatches(answered, WhatIfAnswer) == [] and len(answered["kernels"]) == 2
    assert mismatches(answered, contract.WhatIfReply) == []
    refused = _reply(ExplorerWidget(trace), monkeypatch)  # a trace: nothing to recompile
    assert mismatches(refused, WhatIfRefused) == [] and "live compilation" in refused["error"]

    def fails(group, graph, measure):
        raise RuntimeError("the worker died")

    failed = _reply(ExplorerWidget(trace, what_if=fails), monkeypatch)
    assert mismatches(failed, WhatIfRefused) == [] and failed["error"] == "RuntimeError: the worker died"


def _sweep() -> Sweep:
    """Three points: two that ran (the default and max-autotune traces recorded on a GPU), one that failed."""
    names = ["gpu_default.json", "gpu_max_autotune.json"]
    rows = [SweepRow(0, {}, status="ok", stage="done", compile_s=4.1, compile_phases={"dynamo": 0.5}, run_ms=0.31,
                     device_ms=0.2, timed=[1.0, 2.0], peak_bytes=1 << 20, max_error=1e-6, ok=True, kernels=2, graphs=1,
                     graph_breaks=0, recompiles=0, worker="w0", gpu="cuda:0", wall_s=5.0, stage_s={"compile": 4.1}),
            SweepRow(1, {"max_autotune": True}, status="ok", stage="done", run_ms=0.25, ok=None, worker="w1"),
            SweepRow(2, {"coordinate_descent_tuning": True}, status="failed", stage="lowering", error="boom",
                     traceback="Traceback ...", worker="w0")]
    traces = [(FIXTURES / name).read_text() for name in names] + [None]
    return Sweep("matmul_epilogue", "cuda", "local", rows, traces, options={"runs": 10}, workers=["w0", "w1"],
                 wall_s=12.5, created="2026-01-01T00:00:00Z")


@pytest.mark.parametrize("saved", [False, True], ids=["sweep", "saved sweep"])
def test_the_sweep_views_payloads_are_what_the_contract_declares(saved):
    sweep = _sweep()
    parts = SweepParts(json.loads(json.dumps(sweep.to_json())) if saved else sweep, diff_of=lambda i, j: sweep.diff(i, j).to_json())
    summary = _sent(parts.summary())
    assert mismatches(summary, SweepSummary) == []
    assert [(row["key"], row["ratio"]) for row in summary["rows"]] == [("p0", 0.31 / 0.25), ("p1", 1.0), (None, None)]
    assert summary["best"] == 1 and parts.pairs() == [(0, 1)]
    assert mismatches(json.loads(parts.encoded("d0-1")), DiffPayload) == []
    assert mismatches(json.loads(parts.encoded("p1")), TraceSummary) == []
    key = "p1/g0/kernels"
    assert mismatches(json.loads(parts.encoded(key)), part_declaration(key.split("/", 1)[1])) == []


@pytest.mark.parametrize("saved", [False, True], ids=["TraceSet", "saved TraceSet"])
def test_the_traceset_views_payloads_are_what_the_contract_declares(saved, tmp_path):
    ts = explorer.load_trace(FIXTURES / "torch_trace_nccl")
    parts = TraceSetParts(json.loads(ts.save(tmp_path / "ranks.json").read_text()) if saved else ts)
    summary = _sent(parts.summary())
    assert mismatches(summary, TraceSetSummary) == []
    assert len(summary["ranks"]) == 2 and summary["divergence"]
    key = parts.key(*parts.first())
    found = mismatches(json.loads(parts.encoded(key)), TraceSummary, key)
    for inner in TraceParts(parts.trace_parts(key).trace).keys():
        found += mismatches(json.loads(parts.encoded(f"{key}/{inner}")), part_declaration(inner), f"{key}/{inner}")
    assert found == []


@pytest.mark.parametrize("declared, made", [(CulpritRecord, CulpritLevel), (SweepRowRecord, SweepRow),
                                            (CompileSummaryRecord, CompileSummary), (DivergenceRecord, Divergence)],
                         ids=lambda v: v.__name__)
def test_records_made_from_dataclasses_declare_every_field(declared, made):
    assert tuple(declared.__annotations__) == tuple(f.name for f in dataclasses.fields(made))


def test_every_field_of_every_declared_payload_has_its_comment():
    source = inspect.getsource(contract)
    lines = source.splitlines()
    classes = [node for node in ast.parse(source).body if isinstance(node, ast.ClassDef)
               and typing.is_typeddict(getattr(contract, node.name))]
    assert len(classes) > 40
    bare = [f"{c.name}.{field.target.id}" for c in classes for field in c.body  # type: ignore[union-attr]
            if isinstance(field, ast.AnnAssign) and "  # " not in lines[field.lineno - 1]]
    assert bare == []
