"""load_trace on a real 2-rank torchrun job (gloo, CPU), and on damaged, foreign and huge logs.

The job (examples/two_ranks.py) runs once per test session (``two_rank_trace`` in conftest.py).
Rank 1 takes a branch rank 0 does not (other ops, a graph break) and recompiles for another ``n``.
"""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import tracemalloc
from pathlib import Path

import pytest
from rich.console import Console

import explorer
import widgets
from benchmarks.load_trace import synthetic_log
from compiler.model.trace_log import format_record
from explorer.__main__ import main as cli
from tests.paths import EXAMPLES, FIXTURES

JOB = EXAMPLES / "two_ranks.py"


def _line(text: str) -> int:
    return next(n for n, line in enumerate(JOB.read_text().splitlines(), start=1) if text in line)


def _text(obj, width=200) -> str:
    console = Console(file=io.StringIO(), width=width, color_system=None)
    console.print(obj)
    return console.file.getvalue()


def _log(trace_dir: Path, rank: int) -> Path:
    [path] = trace_dir.glob(f"*rank_{rank}_*.log")
    return path


@pytest.fixture(scope="module")
def traces(two_rank_trace):
    return explorer.load_trace(two_rank_trace)


def test_each_rank_and_compile_id_is_a_compilation_with_graphs_and_kernels(traces):
    assert list(traces.ranks) == ["0", "1"]
    assert traces[0].compile_ids == ["0/0"]
    assert traces[1].compile_ids == ["0/0", "1/0", "0/1"]  # the frame after the break; the recompile
    for rank in traces:
        assert not rank.summary.problems, rank.summary.problems
        for c in rank:
            assert not c.live and c.origin["rank"] == int(rank.rank) and c.torch.startswith("2.")
            [graph] = c.graphs
            assert graph.fx.nodes and graph.post_grad.nodes and graph.wrapper.source.startswith("# AOT ID")
            assert {k.language for k in graph.kernels} & {"cpp", "triton"}
    forward = traces[0]["0/0"]
    graph = forward.graphs[0]
    assert "_c10d_functional.all_reduce" in {n.target for n in graph.fx.nodes}  # the collective is in the graph
    assert any("all_reduce" in k.name for k in graph.kernels if k.language == "extern")
    # the C++ kernel computing relu (torch 2.14 fuses it into the all_reduce's input copy)
    fused = next(k for k in graph.kernels if k.language == "cpp" and "relu" in k.post_grad_nodes)
    # its FX nodes (`relu`; torch 2.14 maps it to the product named after `h`) and the job's line
    assert fused.fx_nodes and set(fused.fx_nodes) <= {n.name for n in graph.fx.nodes}
    assert (str(JOB), _line("h = torch.relu")) in fused.user_lines
    assert forward.sources[str(JOB)][_line("h = torch.relu")] == "h = torch.relu(self.fc(x)) * n"
    assert forward.inputs == [{"shape": [4, 16], "dtype": "torch.float32", "device": "cpu", "requires_grad": False,
                               "source": "L['x']"}]


def test_the_ranks_divergence_is_found(traces):
    kinds = {d.kind: d for d in traces.divergence}
    assert {"graph", "recompile", "graph_break"} <= set(kinds)
    graphs = [d for d in traces.divergence if d.kind == "graph"]
    assert [d.compile_id for d in graphs] == ["0/0", "1/0", "0/1"]
    assert "rank 0 vs rank 1" in graphs[0].summary and graphs[1].ranks["0"] == "not compiled"
    assert "n == 1" in kinds["recompile"].ranks["1"] and kinds["recompile"].ranks["0"] == "no recompile"
    assert kinds["graph_break"].ranks == {"0": "no graph break",
                                          "1": f"{JOB}:{_line('takes its own branch')} Failed to trace builtin operator"}
    assert "ranks diverge (" in _text(traces)


def test_a_rank_compilation_carries_its_dynamo_stage(traces):
    broken = traces[1]["0/0"]
    [graph_break] = broken.graph_breaks
    assert graph_break.user_line == (str(JOB), _line("takes its own branch"))
    assert graph_break.resume == "1/0" and graph_break.graphs_before == ["g0"]
    assert traces[1]["1/0"].dynamo.frames[0].function == f"torch_dynamo_resume_in_forward_at_{_line('takes its own branch')}"
    recompiled = traces[1]["0/1"]
    [recompile] = recompiled.recompiles
    assert recompile.reasons[0].startswith("0/0: n == 1") and recompile.graphs == ["g0"]
    assert [(s.source, s.value) for s in recompiled.symbols] == [("L['n']", "2")]
    equals = {g.source: g for g in broken.dynamo.guards_by_kind()["EQUALS_MATCH"]}
    assert equals["L['rank']"].code == "L['rank'] == 1"
    assert equals["L['rank']"].user_line == (str(JOB), _line("if rank == 1"))
    assert broken.compile_metrics[0].values["co_name"] == "forward"


def test_every_view_works_on_a_loaded_compilation(traces, tmp_path):
    rank0, rank1 = traces[0]["0/0"], traces[1]["0/0"]
    for c in (rank0, rank1, traces[1]["1/0"]):
        assert "loaded" in repr(c) and "DynamoStage(" in _text(c)
        assert "<table>" in c._repr_html_()
        assert widgets.TraceParts(c.trace_view()).get("g0/kernels")
        assert explorer.load(c.save(tmp_path / "c.json")).to_json() == c.to_json()
    assert explorer.to_html(rank1, tmp_path / "rank1.html").read_text().count("cpp_fused") > 0
    d = explorer.diff(rank0, rank1)  # the two ranks' graphs, kernels paired by the FX nodes they implement
    changed = [k for g in d.graphs for k in g.kernels if k.status != "same"]
    assert any("add" in (k.b or "") for k in changed)  # rank 1's own h * 2 + 1 kernel


def test_a_traceset_saves_to_one_file_and_loads_back(traces, tmp_path):
    path = traces.save(tmp_path / "ranks.json")
    loaded = explorer.load(path)
    assert isinstance(loaded, explorer.TraceSet)
    assert loaded.to_json() == json.loads(path.read_text())
    assert [d.summary for d in loaded.divergence] == [d.summary for d in traces.divergence]
    assert _text(loaded) == _text(traces)
    assert loaded[1]["0/1"].to_json() == traces[1]["0/1"].to_json()


def test_the_command_line_prints_ranks_divergence_and_stages(two_rank_trace, capsys):
    assert cli(["trace", str(two_rank_trace)]) == 0
    out = capsys.readouterr().out
    assert "ranks diverge" in out and "RankTrace(rank 1: 3 compiles" in out
    assert cli(["trace", str(two_rank_trace), "--rank", "1", "--compile", "0/1"]) == 0
    out = capsys.readouterr().out
    assert "recompiles (1)" in out and "cpp_fused_add_mul" in out


def test_show_prints_a_torch_trace_directory_and_a_saved_traceset(tmp_path, capsys):
    nccl = FIXTURES / "torch_trace_nccl"
    assert cli(["show", str(nccl)]) == 0
    out = capsys.readouterr().out
    assert "2 ranks" in out and "ranks diverge (5)" in out
    saved = explorer.load_trace(nccl).save(tmp_path / "ranks.json")
    assert cli(["show", str(saved)]) == 0
    assert "ranks diverge (5)" in capsys.readouterr().out


# ------------------------------------------------------------------------------------------ bad input


def test_missing_empty_and_foreign_paths_are_explained(tmp_path):
    with pytest.raises(explorer.TraceLoadError, match="does not exist"):
        explorer.load_trace(tmp_path / "nowhere")
    with pytest.raises(explorer.TraceLoadError, match="no TORCH_TRACE logs in .*TORCH_TRACE="):
        explorer.load_trace(tmp_path)
    (tmp_path / "notes.log").write_text("just some text\nnot a trace\n")
    with pytest.raises(explorer.TraceLoadError, match="holds no TORCH_TRACE records"):
        explorer.load_trace(tmp_path)


def test_a_truncated_log_keeps_what_was_written(two_rank_trace, tmp_path):
    data = _log(two_rank_trace, 1).read_bytes()
    cut = data.index(b'"frame_compile_id": 1') + 300  # inside the recompile's records
    (tmp_path / "dedicated_log_torch_trace_rank_1_cut.log").write_bytes(data[:cut])
    rank = explorer.load_trace(tmp_path)[1]
    problems = " ".join(rank.summary.problems)
    assert "ends in the middle of a line" in problems and "0/1 have no compilation_metrics" in problems
    assert rank["0/0"].graphs[0].kernels and rank["1/0"].graphs  # what was complete loads in full


def test_malformed_and_unknown_records_are_counted_not_fatal(two_rank_trace, tmp_path):
    lines = _log(two_rank_trace, 0).read_bytes().splitlines(keepends=True)
    unknown = format_record({"future_record": {"x": 1}, "frame_id": 0, "frame_compile_id": 0}, None,
                            created=0.0, pid=1, pathname="torch/future.py", lineno=1).encode()
    damaged = [b"\tan orphan payload line\n"] + lines[:5] + [b"garbage that is not a record\n", unknown, unknown] + lines[5:]
    (tmp_path / "dedicated_log_torch_trace_rank_0_x.log").write_bytes(b"".join(damaged))
    rank = explorer.load_trace(tmp_path)[0]
    problems = " ".join(rank.summary.problems)
    assert "2 malformed line(s) skipped (line 1:" in problems and "line 7: 'garbage that is not a record'" in problems
    assert "future_record x2" in problems
    assert rank.compile_ids == ["0/0"] and rank["0/0"].graphs[0].kernels


def test_a_log_of_another_torch_version_is_reported(two_rank_trace, tmp_path):
    text = _log(two_rank_trace, 0).read_text()
    version = json.loads(text.split('"pytorch_version": ', 1)[1].split(",", 1)[0])
    (tmp_path / "dedicated_log_torch_trace_rank_0_old.log").write_text(text.replace(version, "2.9.0"))
    rank = explorer.load_trace(tmp_path)[0]
    assert rank.summary.torch == "2.9.0"
    assert any("written by torch 2.9.0" in p for p in rank.summary.problems)
    assert rank["0/0"].torch == "2.9.0" and rank["0/0"].graphs


def test_a_damaged_payload_is_skipped_and_reported(two_rank_trace, tmp_path):
    lines = _log(two_rank_trace, 0).read_text().splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if '{"dynamo_output_graph"' in line)
    edited = lines[start + 2].replace("forward", "backward", 1)  # edit Dynamo's graph: its checksum no longer matches
    assert edited != lines[start + 2]
    lines[start + 2] = edited
    (tmp_path / "dedicated_log_torch_trace_rank_0_edit.log").write_text("".join(lines))
    rank = explorer.load_trace(tmp_path)[0]
    c = rank["0/0"]
    assert c.graphs[0].fx.nodes == [] and c.graphs[0].kernels  # the damaged graph left out, the rest kept
    assert any("do not match their checksum" in p and str(start + 1) in p for p in rank.index.problems.messages())


def test_two_logs_of_one_rank_are_both_kept(two_rank_trace, tmp_path):
    for name in ("a", "b"):
        shutil.copy(_log(two_rank_trace, 1), tmp_path / f"dedicated_log_torch_trace_rank_1_{name}.log")
    traces = explorer.load_trace(tmp_path)
    assert list(traces.ranks) == ["1", "1@dedicated_log_torch_trace_rank_1_b"]
    assert any("more than one log for rank 1" in p for p in traces.problems)


def _record(metadata: dict, payload: str | None = None) -> str:
    if payload is not None:
        metadata = {**metadata, "has_payload": hashlib.md5(payload.encode()).hexdigest()}
    return format_record(metadata, payload, created=0.0, pid=1, pathname="torch/x.py", lineno=1)


def test_nothing_in_a_log_is_evaluated(tmp_path):
    marker = tmp_path / "pwned"
    attack = f"__import__('pathlib').Path({str(marker)!r}).touch()"
    ids = {"frame_id": 0, "frame_compile_id": 0, "attempt": 0}
    graph = f'class GraphModule(torch.nn.Module):\n    def forward(self, L_x_: "f32[2][1]cpu"):\n        l_x_ = L_x_\n        y: "f32[2][1]cpu" = {attack}\n        return (y,)\n'
    code = f"# AOT ID: ['0_inference']\nimport os\n{attack}\nk = async_compile.cpp_pybinding([], r'''{attack}''')\n"
    log = "".join([
        _record({"dynamo_start": {"stack": []}, **ids}),
        _record({"dynamo_output_graph": {"sizes": {}}, **ids}, graph),
        _record({"artifact": {"name": "inductor_post_grad_graph", "encoding": "string"}, **ids}, graph),
        _record({"inductor_output_code": {"filename": "x.py"}, **ids}, code),
        _record({"artifact": {"name": "recompile_reasons", "encoding": "json"}, **ids}, json.dumps([attack])),
        _record({"dynamo_cpp_guards_str": {}, **ids}, f"+- RootGuardManager\n| +- LAMBDA_GUARD: {attack}  # f.py:1 in f"),
        _record({"compilation_metrics": {"co_name": attack, "pytorch_version": "2.13.0"}, **ids}),
    ])
    (tmp_path / "dedicated_log_torch_trace_x.log").write_text(log)
    traces = explorer.load_trace(tmp_path)
    c = traces[0]["0/0"]
    _text(traces), _text(c), c._repr_html_(), c.to_json(), explorer.to_html(c, tmp_path / "c.html")
    assert not marker.exists()
    assert c.graphs[0].kernels[0].name == "k" and attack in c.graphs[0].kernels[0].source  # kept as text
    assert c.guards[0].code == attack and c.recompiles[0].reasons == [attack]


def test_a_huge_log_streams_in_bounded_memory(two_rank_trace, tmp_path):
    log = tmp_path / "big" / "dedicated_log_torch_trace_rank_0_big.log"
    log.parent.mkdir()
    copies = synthetic_log(sorted(two_rank_trace.glob("*.log")), 8_000_000, log)
    explorer.load_trace(two_rank_trace)  # what the first load imports is not memory the log's size asks for
    tracemalloc.start()
    try:
        traces = explorer.load_trace(log.parent)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(traces[0]) == 4 * copies  # every copy's compiles, each a compile of its own
    # what the index keeps grows with the records (byte ranges), not their payloads: on torch 2.11, whose records
    # are smaller, a quarter of this file; a third holds on every torch, under the half the 1 GB job is held to
    assert peak < log.stat().st_size / 3, f"indexing a {log.stat().st_size / 1e6:.0f} MB log peaked at {peak / 1e6:.1f} MB"
    last = traces[0].compile_ids[-1]
    assert traces[0][last].graphs  # a compile from the end of the file builds from its byte ranges
