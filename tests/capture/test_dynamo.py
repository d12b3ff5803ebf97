"""The Dynamo stage of a capture: guards, graph breaks, symbols, recompiles, Dynamo's metrics.

Built from torch's structured trace records, the same ones a TORCH_TRACE log holds: the last test
writes the capture's log with ``trace_dir`` and checks that load_trace reads the same stage back.
"""

from __future__ import annotations

import contextlib
import inspect
import io
import json
import logging

import pytest
import torch
from rich.console import Console

import explorer
from compiler import CompileError, from_json
from compiler._torch import structured_trace
from tests import workloads


def _line_of(fn, text):
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def _text(obj, width=160):
    console = Console(file=io.StringIO(), width=width, color_system=None)
    console.print(obj)
    return console.file.getvalue()


@pytest.fixture(scope="module")
def dynamic_compilation():
    """branch_on_size with dynamic shapes, compiled for 8 rows then recompiled on 3 rows."""
    c = explorer.compile(workloads.branch_on_size, torch.randn(8, 3), dynamic=True)
    symbols_before = list(c.symbols)
    x = torch.randn(3, 3)
    out = c.recompile(x)
    return c, symbols_before, x, out


def test_guards_name_kind_source_and_user_line(reduction_compilation):
    c, _ = reduction_compilation
    by_kind = c.dynamo.guards_by_kind()
    tensor = by_kind["TENSOR_MATCH"]
    assert [g.source for g in tensor] == ["L['x']"]
    assert "check_tensor(L['x']" in tensor[0].code and "size=[32, 64]" in tensor[0].code
    line = _line_of(workloads.reduction_with_pointwise, "torch.relu(x * 2 + 1)")
    assert tensor[0].user_line == (inspect.getsourcefile(workloads.reduction_with_pointwise), line)
    assert tensor[0].user_code == "y = torch.relu(x * 2 + 1)"
    assert {g.source for g in by_kind["ID_MATCH"]} >= {"G['torch']", "G['torch'].relu"}
    assert all(g.compile_id == c.graphs[0].compile_id for g in c.guards)
    # guards come grouped by kind, and the trace JSON keeps them grouped
    kinds = [g.kind for g in c.guards]
    assert kinds == sorted(kinds, key=kinds.index)
    data = c.to_json()["dynamo"]["guards"]
    assert list(data) == list(by_kind) and data["TENSOR_MATCH"][0]["user_line"] == list(tensor[0].user_line)
    assert c.sources[tensor[0].user_line[0]][line].strip() == "y = torch.relu(x * 2 + 1)"


def test_graph_break_names_reason_line_stack_and_graphs_on_either_side(graph_break_compilation):
    c, _ = graph_break_compilation
    assert len(c.graph_breaks) == 1
    graph_break = c.graph_breaks[0]
    file = inspect.getsourcefile(workloads.with_graph_break)
    assert graph_break.user_line == (file, _line_of(workloads.with_graph_break, "print("))
    assert "print" in graph_break.explanation and graph_break.hints
    assert graph_break.stack == [(file, graph_break.user_line[1], "with_graph_break")]  # the capture's frames dropped
    assert graph_break.graphs_before == ["g0"] and graph_break.graphs_after == ["g1"]
    assert graph_break.compile_id == c.graphs[0].compile_id and graph_break.resume == c.graphs[1].compile_id
    frames = c.dynamo.frames
    assert [f.function for f in frames] == ["with_graph_break", f"torch_dynamo_resume_in_with_graph_break_at_{graph_break.user_line[1]}"]
    assert [f.graphs for f in frames] == [("g0",), ("g1",)]


def test_compile_metrics_are_dynamos_own_per_frame(reduction_compilation):
    c, _ = reduction_compilation
    [metrics] = c.compile_metrics
    assert metrics.compile_id == c.graphs[0].compile_id and metrics.kind == "frame"
    assert metrics.function == "reduction_with_pointwise"
    assert metrics.values["graph_op_count"] == sum(n.op.startswith("call_") for n in c.graphs[0].fx.nodes)
    assert metrics.values["entire_frame_compile_time_s"] > metrics.values["inductor_compile_time_s"] > 0
    assert not any(key.endswith("_config") for key in metrics.values)  # config dumps are not metrics


def test_symbols_have_sources_ranges_and_guards(dynamic_compilation):
    c, before, _, _ = dynamic_compilation
    rows = {s.source: s for s in before}
    assert set(rows) == {"L['x'].size()[0]", "L['x'].size()[1]"}
    dim0 = rows["L['x'].size()[0]"]
    assert dim0.value == "8" and dim0.initial_range == "[2, int_oo]"
    assert any(g.expr == f"{dim0.name} > 4" for g in dim0.guards)      # the branch on x.shape[0]
    assert dim0.range.startswith("[5, ")                               # ...narrows its range
    assert dim0.guards[0].user_line[1] == _line_of(workloads.branch_on_size, "if x.shape[0] > 4")
    symbols = c.to_json()["dynamo"]["symbols"]
    assert {s["source"] for s in symbols} >= set(rows) and all("range" in s and "guards" in s for s in symbols)


def test_run_with_inputs_the_guards_reject_captures_the_recompile(dynamic_compilation):
    c, _, x, out = dynamic_compilation
    torch.testing.assert_close(out, workloads.branch_on_size(x))
    [recompile] = c.recompiles
    assert "x.size()[0]" in recompile.reasons[0] and "if x.shape[0] > 4" in recompile.reasons[0]
    assert recompile.graphs == ["g1"] and c.graphs[1].compile_id == recompile.compile_id
    assert len(c.graphs) == 2 and c.graphs[1].kernels                  # the new graph, with its stages
    assert [s.range for s in c.symbols if s.compile_id == recompile.compile_id and s.source == "L['x'].size()[0]"] == ["[2, 4]"]
    graphs = len(c.graphs)
    c.recompile(torch.randn(2, 3))  # the recompiled graph's guards hold: nothing new
    assert len(c.graphs) == graphs and len(c.recompiles) == 1


def test_static_shapes_recompile_names_the_failed_guard():
    c = explorer.compile(workloads.reduction_with_pointwise, torch.randn(4, 8))
    x = torch.randn(6, 8)
    torch.testing.assert_close(c.recompile(x), workloads.reduction_with_pointwise(x))
    [recompile] = c.recompiles
    assert recompile.reasons == [f"{c.graphs[0].compile_id}: tensor 'x' size mismatch at index 0. expected 4, actual 6"]
    assert [spec["shape"] for spec in c.inputs] == [[4, 8]]  # the inputs it was compiled for
    loaded = from_json(json.loads(json.dumps(c.to_json())))
    assert loaded.recompiles[0].reasons == recompile.reasons and loaded.to_json() == c.to_json()


def test_a_failed_recompile_leaves_the_compilation_as_it_was():
    def picky(x):
        return x @ x  # square inputs only

    c = explorer.compile(picky, torch.randn(3, 3))
    before = c.to_json()
    with pytest.raises(CompileError) as info:
        c.recompile(torch.randn(2, 5))
    assert info.value.stage == "tracing" and info.value.partial is c
    assert c.to_json() == before


def test_dynamo_stage_renders_in_the_terminal_and_notebook(graph_break_compilation, dynamic_compilation):
    c, _ = graph_break_compilation
    text = _text(c.dynamo)
    assert "graph breaks (1)" in text and "[g0 | g1]" in text and "TENSOR_MATCH (" in text
    assert "Dynamo compilation metrics" in text and "with_graph_break" in text
    assert "DynamoStage(" in _text(c)  # part of the compilation's tree
    dynamic, *_ = dynamic_compilation
    assert "symbols (4)" in _text(dynamic.dynamo) and "recompiles (1)" in _text(dynamic.dynamo)
    html = c._repr_html_()
    assert "graph breaks" in html and "TENSOR_MATCH guards" in html


def test_capture_leaves_torchs_trace_logger_as_found():
    logger = logging.getLogger(structured_trace.TRACE_LOGGER)
    before = (list(logger.handlers), logger.level, logger.propagate)

    def fails(x):
        return x @ x

    with pytest.raises(CompileError):
        explorer.compile(fails, torch.randn(2, 3))
    assert (list(logger.handlers), logger.level, logger.propagate) == before


def test_trace_dir_writes_a_log_that_loads_as_the_live_stage(tmp_path, graph_break_compilation):
    x = torch.randn(8, 8)
    live = explorer.compile(workloads.with_graph_break, x, trace_dir=tmp_path)
    assert live.origin["log"].startswith(str(tmp_path))
    traces = explorer.load_trace(tmp_path)
    [rank] = list(traces)
    assert rank.compile_ids == [g.compile_id for g in live.graphs]
    for graph in live.graphs:
        loaded = rank[graph.compile_id]
        [copy] = loaded.graphs
        assert [n.name for n in copy.fx.nodes] == [n.name for n in graph.fx.nodes]
        assert [(n.name, n.target, n.shape) for n in copy.post_grad.nodes] == [(n.name, n.target, n.shape) for n in graph.post_grad.nodes]
        assert [(k.id, k.source, k.post_grad_nodes) for k in copy.kernels] == [(k.id, k.source, k.post_grad_nodes) for k in graph.kernels]
        live_guards = [(g.kind, g.code, g.source, g.user_line) for g in live.guards if g.compile_id == graph.compile_id]
        assert [(g.kind, g.code, g.source, g.user_line) for g in loaded.guards] == live_guards
    assert traces[0][live.graphs[0].compile_id].graph_breaks[0].resume == live.graph_breaks[0].resume
    assert not rank.summary.problems


@contextlib.contextmanager
def trace_logger_alone():
    """torch's trace logger with no handler, as in a notebook (pytest adds its log capture's while a test runs)."""
    logger = logging.getLogger(structured_trace.TRACE_LOGGER)
    saved, logger.handlers = logger.handlers, []
    try:
        yield logger
    finally:
        logger.handlers = saved


def test_records_nobody_reads_are_not_built_while_the_capture_alone_listens():
    import torch._inductor.graph as inductor_graph
    import torch._logging

    original = torch._logging._internal.trace_structured
    built, got = [], []

    def payload(kind):
        return lambda: built.append(kind) or f"{kind} text"

    def emit():
        torch._logging.trace_structured("unread", dict, payload_fn=payload("unread"), suppress_context=True)
        torch._logging.trace_structured("read", lambda: {"a": 1}, payload_fn=payload("read"), suppress_context=True)
        torch._logging._internal.trace_structured_artifact("read_artifact", "string", payload("artifact"))

    def listening():
        return structured_trace.on_trace_records(got.append, reads={"read", "read_artifact"}, payloads={"read_artifact"})

    with trace_logger_alone() as logger:
        with listening():
            assert inductor_graph.trace_structured is not original  # a module that imported it by name sees the filter
            emit()
        assert built == ["artifact"]
        assert [(r.name, r.payload) for r in got] == [("read", None), ("read_artifact", "artifact text")]
        assert inductor_graph.trace_structured is original and torch._logging.trace_structured is original
        logger.addHandler(logging.NullHandler())  # as TORCH_TRACE's handler: every record is built for it
        with listening():
            emit()
    assert built == ["artifact", "unread", "read", "artifact"]


def test_a_capture_builds_the_trace_records_it_reads_and_a_log_gets_them_all(monkeypatch, tmp_path):
    from compiler.pipeline.capture import COMPILE_TIME_READS
    from compiler.pipeline.dynamo_records import READS

    built = []
    real = torch._logging._internal.log_trace_structured_event  # called for every record torch builds
    x = torch.randn(8, 8)
    with trace_logger_alone() as logger:

        def spy(name, record):
            if logger.handlers:  # the capture's own handler is on: a record built for it
                built.append(name)
            return real(name, record)

        monkeypatch.setattr(torch._logging._internal, "log_trace_structured_event", spy)
        c = explorer.compile(workloads.with_graph_break, x)
        assert set(built) - {"artifact"} <= READS | COMPILE_TIME_READS and "inductor_output_code" not in built
        assert c.dynamo.graph_breaks and c.dynamo.guards  # its break reasons and guards were built
        built.clear()
        explorer.compile(workloads.with_graph_break, x, trace_dir=tmp_path)
    assert "inductor_output_code" in built and "dynamo_output_graph" in built, " ".join(sorted(set(built)))
