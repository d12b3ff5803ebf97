"""One vocabulary of compile phases (compiler/model/phases.py): ``c.timings`` keys, the compile-time report's
categories and a compile's progress stages are all its phases; ``c.timings`` says that torch's timers nest."""

from __future__ import annotations

import ast
from pathlib import Path

from compiler.model import phases, progress
from compiler.model.compilation import Compilation
from compiler.model.compile_time import CATEGORIES
from compiler.pipeline.trace_import import _timings as timings_of_log_metrics

ROOT = Path(__file__).resolve().parents[2]

# a capture's c.timings as saved before the vocabulary (compiler/_torch/timing.py STAGE_TIMERS, "total",
# "aot"), of a GELU on a CPU: codegen's timer holds the C++ builds, so the figures add up to more than total
CAPTURE_TIMINGS = {"total": 12.69, "tracing": 0.11, "pre_grad": 0.01, "joint_graph": 0.62, "post_grad": 0.08,
                   "lowering": 0.06, "scheduling": 0.02, "codegen": 10.54, "compile": 1.94, "autotuning": 0.0,
                   "aot": 0.68}
# a TORCH_TRACE log's c.timings (compiler/pipeline/trace_import.py, from Dynamo's metrics)
LOG_METRICS = {"entire_frame_compile_time_s": 3.0, "backend_compile_time_s": 2.0, "inductor_compile_time_s": 1.5,
               "code_gen_time_s": 0.5, "pre_grad_pass_time_us": 1e5, "joint_graph_pass_time_us": 1e5,
               "post_grad_pass_time_us": 1e5}


def _compilation(timings: dict[str, float]) -> Compilation:
    return Compilation(function="f", device="cpu", device_name="cpu", torch="2.13.0", triton=None, python="3.11",
                       created="", toggles={}, inductor_overrides={}, backward=False, timings=timings, inputs=[],
                       output_specs=[], graphs=[])


def _stage_words(path: Path) -> set[str]:
    """The stage words a module reports: the first argument of every ``progress.step(...)`` / ``.enter(...)``,
    and every ``.stage = "..."`` (a stage reported later as ``progress.step(recorder.stage)``)."""
    words = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args \
                and node.func.attr in ("step", "enter") and isinstance(node.args[0], ast.Constant):
            words.add(node.args[0].value)
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and any(
                isinstance(target, ast.Attribute) and target.attr == "stage" for target in node.targets):
            words.add(node.value.value)
    return words


def test_every_compile_progress_stage_is_a_phase():
    assert all(phases.find(stage) is not None and phases.canonical(stage) == stage
               for stage in progress.COMPILE_STAGES)
    # the capture and the recorders of its stages (compiler/pipeline/recording/), which enter most of them
    reported = set().union(*(_stage_words(path) for path in [ROOT / "compiler/pipeline/capture.py",
                                                             *(ROOT / "compiler/pipeline/recording").glob("*.py")]))
    assert {"tracing", "lowering", "kernel compile", "collecting"} <= reported  # the scan sees the capture's stages
    assert {word: phases.find(word) for word in reported if phases.find(word) is None} == {}
    step = progress.Step("compile f", "kernel compile")
    assert step.place == progress.COMPILE_STAGES.index("kernel_compile") / len(progress.COMPILE_STAGES)
    assert progress.Step("profile f", "warm-up").place is None


def test_every_timings_key_and_report_category_is_a_phase():
    capture = _compilation(dict(CAPTURE_TIMINGS)).timings
    logged = _compilation(timings_of_log_metrics([type("Metric", (), {"values": LOG_METRICS})()])).timings
    for timings in (capture, logged):
        assert [key for key in timings if phases.find(key) is None or phases.canonical(key) != key] == []
    assert set(CATEGORIES) == {p.name for p in phases.PHASES if p.flat}
    assert all(phases.find(p.part_of) is not None for p in phases.PHASES if not p.flat and p.part_of)
    assert phases.category_of("_recursive_joint_graph_passes") == "aot"  # a nested timer, counted in its flat phase
    assert phases.category_of("mm_template_autotuning") == "autotune"


def test_timings_say_torch_timers_nest_and_point_to_the_flat_breakdown():
    c = _compilation(dict(CAPTURE_TIMINGS))
    assert sum(c.timings.values()) - c.timings["total"] > c.timings["total"]  # the figures overlap
    assert repr(c.timings) == (
        "CompileTimings(total 12.69 s; torch's own timers, nested, so they overlap and do not add up: "
        "dynamo 0.11 s, pre_grad 0.01 s, aot 0.68 s {joint_graph 0.62 s}, post_grad 0.08 s, lowering 0.06 s, "
        "scheduling 0.02 s, codegen 10.54 s, kernel_compile 1.94 s; the flat breakdown is "
        "c.compile_time.categories())")
    assert c.timings.nesting["joint_graph"] == "aot" and c.timings.nesting["lowering"] == "total"
    assert c.timings.nesting["total"] is None
    logged = _compilation(timings_of_log_metrics([type("Metric", (), {"values": LOG_METRICS})()])).timings
    assert "backend 2.00 s {pre_grad 0.10 s, joint_graph 0.10 s, inductor 1.50 s {post_grad 0.10 s, codegen " \
           "0.50 s}}" in repr(logged)
    # the words of older traces still find their phase
    assert c.timings["compile"] == c.timings["kernel_compile"] and "tracing" in c.timings
    assert c.timings.get("autotuning") == 0.0


def test_the_compile_time_report_shows_its_flat_breakdown_by_phase_label():
    import io

    from rich.console import Console

    from compiler.model.compile_time import CompileCall
    from compiler.model.compile_time_build import build

    events = [{"name": "dynamo", "ph": "B", "ts": 0.0, "args": {"compile_id": "0/0"}},
              {"name": "compile_file", "ph": "B", "ts": 1e6, "args": {"compile_id": "0/0"}},
              {"name": "compile_file", "ph": "E", "ts": 2e6, "args": {"compile_id": "0/0"}},
              {"name": "dynamo", "ph": "E", "ts": 3e6, "args": {"compile_id": "0/0"}}]
    report = build([CompileCall("log", 0, int(4e9), events)], [])
    text = io.StringIO()
    Console(file=text, width=200, color_system=None).print(report)
    assert "by phase, adding up to 4.00s: Dynamo 2.00s, kernel compile 1.00s, other 1.00s" in text.getvalue()


def test_a_capture_names_its_timings_by_the_phases_own_names():
    """compiler/_torch/timing.py turns torch's timers into c.timings and each graph's timings: its keys are the
    phases' names, not words an older trace used for them (tracing, compile, autotuning)."""
    from compiler._torch import timing

    assert {key: phases.canonical(key) for key in timing.STAGE_TIMERS} == {key: key for key in timing.STAGE_TIMERS}
    assert all(phases.find(key) is not None for key in timing.STAGE_TIMERS)


def test_the_full_view_says_its_timings_nest_and_where_the_flat_breakdown_is():
    import io

    from rich.console import Console

    from compiler.model.slots import rich_of

    console = Console(width=240, record=True, file=io.StringIO())
    console.print(rich_of(_compilation(dict(CAPTURE_TIMINGS))))
    assert "timings (torch's own timers, nested, so they overlap; the flat breakdown: c.compile_time): total 12.690s" \
        in console.export_text()
