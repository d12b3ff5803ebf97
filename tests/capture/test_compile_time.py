"""c.compile_time: where the compile's own time goes, from a capture and from its TORCH_TRACE log.

One compile of a two-module model with a graph break between the modules, then one recompile for a new
batch size, written to a TORCH_TRACE log as it runs: every test reads that one fixture.
"""

from __future__ import annotations

import inspect
import io
import json
import time

import pytest
import torch
from rich.console import Console

import explorer
from compiler import from_json
from compiler.io.traceset import from_json as traceset_from_json
from compiler.model import phases
from compiler.sweeps.point import measures


class Encoder(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = torch.nn.Linear(16, 16)

    def forward(self, x):
        return torch.relu(self.proj(x))  # encoder line


class Head(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = torch.nn.Linear(16, 4)

    def forward(self, x):
        return torch.tanh(self.proj(x)).sum(-1)  # head line


class Model(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.encoder = Encoder()
        self.head = Head()

    def forward(self, x):
        y = self.encoder(x)
        torch._dynamo.graph_break()  # splits the model into two frames
        return self.head(y)


def _line(cls, marker):
    lines, first = inspect.getsourcelines(cls)
    return first + next(i for i, text in enumerate(lines) if marker in text)


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    """The capture, its recompile, the wall time each took, and the TORCH_TRACE directory it wrote."""
    torch.manual_seed(0)
    log_dir = tmp_path_factory.mktemp("compile_time_log")
    model = Model()
    started = time.perf_counter()
    c = explorer.compile(model, torch.randn(4, 16), trace_dir=log_dir)
    capture_s = time.perf_counter() - started
    started = time.perf_counter()
    c.recompile(torch.randn(6, 16))
    recompile_s = time.perf_counter() - started
    return c, capture_s, recompile_s, log_dir


def _check_sums(phase, tolerance=0.02):
    if phase.children:
        total = sum(child.seconds for child in phase.children)
        assert abs(total - phase.seconds) <= tolerance * phase.seconds + 1e-5, (phase, total)
    for child in phase.children:
        _check_sums(child, tolerance)


def test_children_add_up_and_the_top_level_is_the_measured_wall_time(compiled):
    c, capture_s, recompile_s, _ = compiled
    report = c.compile_time
    _check_sums(report.root)
    assert [call.name for call in report.root.children] == ["capture", "recompile"]
    capture, recompile = report.root.children
    assert capture.seconds == pytest.approx(capture_s, rel=0.10)
    assert recompile.seconds == pytest.approx(recompile_s, rel=0.10)
    for call in (capture, recompile):
        explorer_row = [p for p in call.children if p.name == "explorer"]
        assert len(explorer_row) == 1 and 0 < explorer_row[0].seconds < call.seconds
        assert "collecting stages" in [p.name for p in explorer_row[0].children]
    # every leaf is in one category and the categories add up to the whole
    assert sum(report.categories().values()) == pytest.approx(report.seconds, rel=0.02)
    assert report.categories()["kernel_compile"] > 0 and report.categories()["dynamo"] > 0


def test_both_frames_every_graph_and_the_recompile_are_present(compiled):
    c, *_ = compiled
    report = c.compile_time
    functions = {p.args.get("co_name") for p in report.frames()}
    assert "forward" in functions and any(str(f).startswith("torch_dynamo_resume_in_forward") for f in functions)
    for graph in c.graphs:
        phases = report.graph(graph.id)
        assert len(phases) == 1 and phases[0].compile_id == graph.compile_id and phases[0].seconds > 0
    assert [r.compile_id for r in report.recompiles] == [r.compile_id for r in c.recompiles]
    for cost in report.recompiles:
        assert any("size mismatch" in reason for reason in cost.reasons)
        frame = next(p for p in report.frames() if p.compile_id == cost.compile_id)
        assert cost.seconds == pytest.approx(frame.seconds, abs=1e-5)
        assert frame in report.root.children[1].children  # charged to the recompile call, not the capture


def test_top_lines_and_modules_are_the_users(compiled):
    c, *_ = compiled
    report = c.compile_time
    top = report.top_lines(2)
    assert {(row.file, row.line) for row in top} == {(__file__, _line(Encoder, "# encoder line")),
                                                      (__file__, _line(Head, "# head line"))}
    assert all(row.seconds == pytest.approx(row.kernel_s + row.spread_s) for row in report.lines)
    modules = {row.key for row in report.top_modules(10)}
    assert {"encoder", "encoder.proj", "head", "head.proj"} <= modules
    # on CPU torch times C++ builds per graph: no per-kernel seconds are invented, and the data says why
    assert report.kernels == [] and any("one module" in note for note in report.notes)


def test_suggestions_cite_their_evidence(compiled):
    c, *_ = compiled
    report = c.compile_time
    kinds = {s.kind: s for s in report.suggestions}
    assert "mark_dynamic" in kinds["recompiles"].message
    assert len(kinds["recompiles"].evidence) == len(report.recompiles)
    assert kinds["graph_breaks"].evidence == [f"{__file__}:{_line(Model, 'graph_break()')}: "
                                              f"{c.graph_breaks[0].reason}"]


def test_timings_and_categories_are_phases_and_the_captures_own_cache_bypass_blames_nobody(compiled):
    c, *_ = compiled
    assert [k for k in c.timings if phases.find(k) is None or phases.canonical(k) != k] == []
    assert set(c.compile_time.categories()) <= set(phases.CATEGORIES)
    assert "nested" in repr(c.timings) and "c.compile_time.categories()" in repr(c.timings)
    assert [s.message for s in c.compile_time.suggestions if "cold caches" in s.message] == []


def test_the_report_survives_the_trace_json_and_exports_to_chrome(compiled, tmp_path):
    c, *_ = compiled
    report = c.compile_time
    data = json.loads(json.dumps(c.to_json()))
    loaded = from_json(data).compile_time
    assert loaded.seconds == report.seconds and loaded.categories() == report.categories()
    assert [p.id for p in loaded.root.walk()] == [p.id for p in report.root.walk()]
    assert [(r.key, r.seconds) for r in loaded.lines] == [(r.key, r.seconds) for r in report.lines]
    assert len({p.id for p in report.root.walk()}) == len(list(report.root.walk()))
    graph_ids = {g.id for g in c.graphs}
    assert {p.graph for p in report.root.walk() if p.graph} == graph_ids
    line_json = data["compile_time"]["lines"][0]["line"]
    assert line_json[0] == __file__ and isinstance(line_json[1], int)
    trace = json.loads(report.to_chrome_trace(tmp_path / "compile.json").read_text())
    events = trace["traceEvents"]
    assert len(events) == len(list(report.root.walk())) and {e["ph"] for e in events} == {"X"}
    assert {e["args"]["graph"] for e in events if "graph" in e["args"]} == graph_ids
    text = io.StringIO()
    Console(file=text, width=160, color_system=None).print(report)
    assert "recompile" in text.getvalue() and "test_compile_time.py:" in text.getvalue()


def test_a_sweep_row_splits_its_compile_time(compiled):
    c, *_ = compiled
    phases = measures(c)["compile_phases"]
    assert phases == c.compile_time.categories() and "kernel_compile" in phases


def test_the_torch_trace_of_the_same_run_gives_the_same_totals(compiled):
    c, _, _, log_dir = compiled
    live = c.compile_time
    ts = explorer.load_trace(log_dir)
    (rank,) = list(ts)
    logged = rank.compile_time
    assert logged.source == "log" and ts.compile_time_divergence() == []  # one rank: nothing to diverge from
    _check_sums(logged.root)
    assert [p.compile_id for p in logged.frames()] == [p.compile_id for p in live.frames()]
    live_frames = sum(p.seconds for p in live.frames())
    assert sum(p.seconds for p in logged.frames()) == pytest.approx(live_frames, rel=0.10)
    assert logged.categories()["kernel_compile"] == pytest.approx(live.categories()["kernel_compile"], rel=0.10)
    assert [r.compile_id for r in logged.recompiles] == [r.compile_id for r in live.recompiles]
    # one compile of the log, with its graphs: charged to the user's line too
    forward = next(p.compile_id for p in live.frames() if p.args.get("co_name") == "forward")
    from_log = rank[forward].compile_time
    assert from_log.graph("g0")[0].seconds == pytest.approx(live.graph("g0")[0].seconds, rel=0.10)
    saved = traceset_from_json(json.loads(json.dumps(ts.to_json())))
    assert saved[rank.rank].compile_time.categories() == logged.categories()
    assert (__file__, _line(Encoder, "# encoder line")) in {(row.file, row.line) for row in from_log.lines}


WARM_CACHE_PROGRAM = """
import torch
f = torch.compile(lambda x: torch.softmax(x * 2, dim=-1) + x.sum())
f(torch.randn(8, 32))
"""


def test_a_torch_trace_with_a_warm_fx_graph_cache_says_what_the_hit_saved(tmp_path):
    """A plain program run twice on one Inductor cache directory: the second run's TORCH_TRACE log has an
    FX graph cache hit, and the report says how much compiling it skipped (torch's ``time_saved_ns``).
    The directory is this test process's own (tests/conftest.py), where Inductor's probes of the CPU's
    vector instructions are already built: a new directory would have each run build them again."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "TORCHINDUCTOR_FX_GRAPH_CACHE": "1"}
    env.pop("TORCH_TRACE", None)
    subprocess.run([sys.executable, "-c", WARM_CACHE_PROGRAM], env=env, check=True, timeout=300)
    subprocess.run([sys.executable, "-c", WARM_CACHE_PROGRAM], env={**env, "TORCH_TRACE": str(tmp_path / "log")},
                   check=True, timeout=300)
    (rank,) = list(explorer.load_trace(tmp_path / "log"))
    report = rank.compile_time
    [compile_phase] = [p for p in report.root.walk() if p.args.get("cache_state") == "hit"]
    assert compile_phase.args["cache_state"] == "hit"
    assert compile_phase.args["cache_time_saved_s"] > 0  # torch's time_saved_ns, carried over
    assert report.cache_time_saved_s == compile_phase.args["cache_time_saved_s"]
    text = io.StringIO()
    Console(file=text, width=160).print(report)
    assert "cache hit, saved" in text.getvalue()


def test_a_live_view_builds_the_report_only_when_its_stage_opens():
    """The widget's summary shows the compile's total without building the report (the calls' wall times
    it adds up to); the Compile time stage's chart builds it, with that same total."""
    from widgets.compile_time_parts import CHART_KEY
    from widgets.parts import TraceParts

    c = explorer.compile(lambda x: torch.tanh(x) * 2, torch.randn(8, 8))
    parts = TraceParts(c.trace_view())
    total = parts.summary()["compile_time"]["seconds"]
    assert c.compile_time_report is None  # nothing built yet
    chart = parts.get(CHART_KEY)
    assert c.compile_time_report is not None
    assert chart["seconds"] == pytest.approx(total, abs=1e-5) == pytest.approx(c.compile_time.seconds, abs=1e-5)
    assert json.loads(parts.encoded("compile_time"))["root"]["seconds"] == pytest.approx(total, abs=1e-5)
