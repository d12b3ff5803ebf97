"""The live watch view without a browser: its payload (compiler/io/watch.py) from a watch report, walked
against its declaration (``contract.WatchPayload``), and the widget showing what it is handed."""

from __future__ import annotations

import ast
import inspect
import typing

from compiler.io.watch import watch_payload
from compiler.model import contract
from compiler.model.contract import WatchCudaGraphEvent, WatchPayload
from compiler.model.cudagraphs import EventKind
from compiler.model.dynamo import Guard
from compiler.model.watch import BreakCount, CompileEvent, FrameStats, Step, StepRule, WatchReport
from compiler.model.watch_cudagraphs import CudaGraphStepEvent
from tests.contract_check import mismatches
from widgets.watch_widget import WatchWidget


def _report(steps: int = 5) -> WatchReport:
    guard = Guard("EQUALS_MATCH", "L['n'] == 4", "L['n']", ("train.py", 12), "y = x * n", "0/0")
    first = CompileEvent("0/0", "step_fn", "train.py", 10, step=0, seconds=1.5, cache={"fx_graph": "miss"})
    again = CompileEvent("0/1", "step_fn", "train.py", 10, step=3, seconds=0.7,
                         reasons=["0/0: n == 4  # y = x * n  # train.py:12 in step_fn"], guard=guard,
                         guard_line=("train.py", 12), value="5")
    broke = BreakCount("call to print", "train.py", 14, 4, "step_fn", ["0/1"])
    frame = FrameStats("0", "step_fn", "train.py", 10, ["0/0", "0/1"], calls=5, timed_calls=1, timed_seconds=0.002,
                       recompiles=1, graph_breaks=1)
    return WatchReport(steps=[Step(i, 0.01 * (i + 1), {"0/0": 1}) for i in range(steps)], compiles=[first, again],
                       graph_breaks=[broke], frames=[frame], seconds=0.2, sample_every=8,
                       step_rule=StepRule.OPTIMIZER, step_anchor="SGD", active=True)


def test_payload_marks_each_event_at_its_step_with_its_detail():
    payload = watch_payload(_report())
    assert payload["headline"]["summary"].startswith("5 steps")
    assert payload["headline"]["step_rule"] == "one per optimizer step() (SGD)" and payload["active"] is True
    timeline = payload["timeline"]
    assert timeline["steps"] == 5 and timeline["per_bar"] == 1
    assert [bar[0] for bar in timeline["bars"]] == [0, 1, 2, 3, 4]
    assert abs(timeline["bars"][2][2] - 30.0) < 1e-9  # ms
    events = {e["id"]: e for e in payload["events"]}
    assert [e["kind"] for e in payload["events"]] == ["compile", "recompile", "break"]
    recompile = events["0/1"]
    assert (recompile["step"], recompile["reason"], recompile["guard"], recompile["value"]) == (3, "n == 4", "L['n'] == 4", "5")
    assert (recompile["file"], recompile["line"]) == ("train.py", 12)
    assert events["0/0"]["cache"] == {"fx_graph": "miss"} and events["0/0"]["guard"] is None
    broke = events["break 0"]
    assert (broke["step"], broke["reason"], broke["line"], broke["count"]) == (3, "call to print", 14, 4)
    [frame] = payload["frames"]
    assert (frame["calls"], frame["recompiles"], frame["breaks"]) == (5, 1, 1)
    assert abs(frame["ms"] - 10.0) < 1e-9  # 5 calls at the sampled 2 ms


def test_the_payload_is_what_the_contract_declares():
    assert mismatches(watch_payload(_report()), WatchPayload) == []
    empty = watch_payload(WatchReport(source="/tmp/log"))  # a log of a run no watch marked: no steps, no rule
    assert mismatches(empty, WatchPayload) == [] and empty["headline"]["step_rule"] == ""


def test_the_contract_walk_finds_a_missing_key_an_extra_key_and_a_wrong_type():
    payload = watch_payload(_report())
    del payload["headline"]["step_rule"]
    payload["frames"][0]["colour"] = "red"
    payload["events"][1]["step"] = "3"
    found = mismatches(payload, WatchPayload)
    assert "payload.headline: WatchHeadline's key 'step_rule' is missing" in found
    assert "payload.frames[0]: WatchFrameRow has no key 'colour'" in found
    assert any(m.startswith("payload.events[1].step:") for m in found), found
    assert len(found) == 3, found


def test_every_field_of_the_watch_payload_has_its_comment():
    source = inspect.getsource(contract)
    tree = ast.parse(source)
    lines = source.splitlines()
    declared = [node for node in tree.body if isinstance(node, ast.ClassDef) and node.name.startswith("Watch")]
    assert {c.name for c in declared} == {"WatchHeadline", "WatchTimeline", "WatchCompileEvent", "WatchBreakEvent",
                                          "WatchFrameRow", "WatchCudaGraphEvent", "WatchPayload"}
    bare = [f"{c.name}.{field.target.id}" for c in declared for field in c.body  # type: ignore[union-attr]
            if isinstance(field, ast.AnnAssign) and "  # " not in lines[field.lineno - 1]]
    assert bare == []


def test_the_cuda_graph_trees_events_and_each_frames_replays_reach_the_view():
    report = _report()
    report.cudagraph_events = [
        CudaGraphStepEvent(0, "0/0", EventKind.WARMUP, "call", "inference"),
        CudaGraphStepEvent(2, "0/0", EventKind.REPLAY, "call", "inference", 4),
        CudaGraphStepEvent(3, "0/1", EventKind.RERECORD, "call", "inference", 1, "static input data pointer changed")]
    report.frames[0].cudagraph_replays, report.frames[0].cudagraph_skips = 4, 1
    payload = watch_payload(report)
    assert mismatches(payload, WatchPayload) == []
    assert [(e["step"], e["compile"], e["function"], e["kind"], e["count"], e["reason"]) for e in payload["cudagraphs"]] == [
        (0, "0/0", "call", "warm-up", 1, ""), (2, "0/0", "call", "replay", 4, ""),
        (3, "0/1", "call", "re-record", 1, "static input data pointer changed")]
    [frame] = payload["frames"]
    assert (frame["cudagraph_replays"], frame["cudagraph_skips"]) == (4, 1)
    assert watch_payload(_report())["cudagraphs"] == []  # a run without CUDA graphs
    # the contract's kinds are the tree's (the contract imports nothing, so it spells them out)
    kinds = typing.get_args(typing.get_type_hints(WatchCudaGraphEvent)["kind"])
    assert sorted(kinds) == sorted(k.value for k in EventKind)
    widget = WatchWidget(payload)
    assert [e["kind"] for e in widget.cudagraphs] == ["warm-up", "replay", "re-record"]


def test_a_long_run_shares_bars_and_keeps_the_slowest_step():
    report = _report(1000)
    for step in report.steps:
        step.seconds = 0.01
    report.steps[957].seconds = 4.0  # a compile step
    timeline = watch_payload(report, max_bars=100)["timeline"]
    assert timeline["steps"] == 1000 and timeline["per_bar"] == 10 and len(timeline["bars"]) == 100
    first, last, mean, slowest = timeline["bars"][95]
    assert (first, last, slowest) == (950, 959, 4000.0) and mean < slowest


def test_the_widget_shows_each_payload_it_is_handed_and_tells_when_it_closes():
    closed = []
    widget = WatchWidget(watch_payload(_report(1)), on_close=lambda: closed.append(1))
    assert widget.timeline["steps"] == 1 and widget.active
    assert [e["id"] for e in widget.events] == ["0/0", "0/1", "break 0"]
    ended = _report(7)
    ended.active = False
    widget.show(watch_payload(ended))
    assert widget.timeline["steps"] == 7 and not widget.active
    assert widget.headline["step_rule"] == "one per optimizer step() (SGD)"
    widget.close()
    widget.close()
    assert closed == [1]


def test_a_watch_in_a_notebook_shows_the_widget_following_it():
    """The display hook of the live watch: the widget explorer fills the model's ``watch_widget`` slot with,
    a listener of the watch, with the HTML report as the fallback of frontends without widgets."""
    import explorer  # noqa: F401 - fills the model's view slots
    from compiler.pipeline.watch import Watch

    watch = Watch()
    bundle = watch._repr_mimebundle_()
    data = bundle[0] if isinstance(bundle, tuple) else bundle
    assert "application/vnd.jupyter.widget-view+json" in data
    assert "watch of a loop" in data["text/html"]
    assert len(watch.listeners) == 1  # the widget follows the watch
