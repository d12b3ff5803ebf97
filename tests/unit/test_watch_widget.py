"""The live watch widget without a browser: its payload (widgets/watch_payload.py) from a watch report, and
the widget as a watch listener (throttled while the loop runs, always updated at the end)."""

from __future__ import annotations

from compiler.model.dynamo import Guard
from compiler.model.watch import BreakCount, CompileEvent, FrameStats, Step, WatchReport
from widgets.watch_payload import watch_payload
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
                       graph_breaks=[broke], frames=[frame], seconds=0.2, sample_every=8)


def test_payload_marks_each_event_at_its_step_with_its_detail():
    payload = watch_payload(_report())
    assert payload["headline"]["summary"].startswith("5 steps")
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


def test_a_long_run_shares_bars_and_keeps_the_slowest_step():
    report = _report(1000)
    for step in report.steps:
        step.seconds = 0.01
    report.steps[957].seconds = 4.0  # a compile step
    timeline = watch_payload(report, max_bars=100)["timeline"]
    assert timeline["steps"] == 1000 and timeline["per_bar"] == 10 and len(timeline["bars"]) == 100
    first, last, mean, slowest = timeline["bars"][95]
    assert (first, last, slowest) == (950, 959, 4000.0) and mean < slowest


class FakeWatch:
    """A live watch as the widget sees it: the report, ``active`` and the listener calls."""

    def __init__(self) -> None:
        self.report = _report(1)
        self.active = True
        self.listeners: list = []

    def __getattr__(self, name):
        return getattr(self.report, name)

    def add_listener(self, fn) -> None:
        self.listeners.append(fn)

    def remove_listener(self, fn) -> None:
        self.listeners.remove(fn)

    def step(self) -> None:
        self.report.steps.append(Step(len(self.report.steps), 0.01))
        for fn in self.listeners:
            fn(self)


def test_the_widget_follows_the_loop_throttled_and_always_shows_the_end():
    watch = FakeWatch()
    widget = WatchWidget(watch, interval=60.0)
    assert watch.listeners == [widget] and widget.timeline["steps"] == 1 and widget.active
    for _ in range(5):  # within the interval: no update
        watch.step()
    assert widget.timeline["steps"] == 1
    watch.active = False  # the watch's last call, at its end
    watch.step()
    assert widget.timeline["steps"] == 7 and not widget.active
    assert [e["id"] for e in widget.events] == ["0/0", "0/1", "break 0"]
    widget.close()
    assert watch.listeners == []


def test_with_no_interval_every_listener_call_updates():
    watch = FakeWatch()
    widget = WatchWidget(watch, interval=0.0)
    watch.step()
    assert widget.timeline["steps"] == 2  # no interval: every call updates


def test_a_watch_in_a_notebook_shows_the_widget():
    """The display hook of the live watch (compiler/pipeline/watch.py): the widget, with the HTML report as the
    fallback of frontends without widgets."""
    from compiler.pipeline.watch import Watch

    bundle = Watch()._repr_mimebundle_()
    data = bundle[0] if isinstance(bundle, tuple) else bundle
    assert "application/vnd.jupyter.widget-view+json" in data
    assert "watch (live)" in data["text/html"]
