"""Listeners on a live watch (``w.add_listener(fn, every=...)``): when they are called, what they are handed (a
snapshot of the report), how often (the one throttle of every view), and that a listener's fault never
reaches the user's loop. Dynamo's ``eager`` backend: the compiles are the events here, not Inductor's code."""

from __future__ import annotations

import pytest
import torch

import explorer
from compiler.model.watch import WatchReport
from compiler.pipeline import watch as watch_module
from compiler.pipeline.watch_listeners import VIEW_INTERVAL, Listeners


@pytest.fixture(autouse=True)
def fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def scale(x):
    return x * 2 + 1


def broken(x):
    y = x.sin()
    torch._dynamo.graph_break()
    return y.cos()


def _loop(w, f, sizes):
    for n in w.steps_of(sizes):
        f(torch.randn(n))


def test_listeners_hear_each_step_each_compile_and_the_end_from_the_loops_thread():
    import threading

    f = torch.compile(scale, backend="eager")
    seen = []

    def listener(report):
        seen.append((report.active, len(report.steps), [c.compile_id for c in report.compiles],
                     len(report.recompiles), threading.get_ident()))

    with explorer.watch(live=False) as w:
        w.add_listener(listener, every=0)
        w.add_listener(listener, every=0)  # added once
        _loop(w, f, [4, 4, 6, 6])
    assert w.listeners == (listener,)
    assert {s[4] for s in seen} == {threading.get_ident()}
    # the end: once, after everything, with the watch no longer active
    assert [s[0] for s in seen].count(False) == 1 and seen[-1][:4] == (False, 4, ["0/0", "0/1"], 1)
    ended_steps = [s[1] for s in seen if s[0]]
    # each of the 3 marked step ends was heard (the 4th step ends with the watch)
    assert sorted(set(ended_steps)) == [0, 1, 2, 3]
    # compile records were heard while the step they happened in was still open: the recompile of step 2
    # is seen before step 2 ends (2 ended steps, the recompile listed)
    assert any(s[0] and s[1] == 2 and s[3] == 1 for s in seen)
    assert any(s[0] and s[1] == 0 and s[2] == ["0/0"] for s in seen)


def test_a_listener_is_handed_a_snapshot_the_loop_going_on_does_not_change():
    f = torch.compile(scale, backend="eager")
    handed = []
    with explorer.watch(live=False) as w:
        w.add_listener(handed.append, every=0)
        _loop(w, f, [4, 4, 6])
    first_step_end = next(r for r in handed if r.active and len(r.steps) == 1)
    assert isinstance(first_step_end, WatchReport)
    assert [s.index for s in first_step_end.steps] == [0] and [c.compile_id for c in first_step_end.compiles] == ["0/0"]
    assert not first_step_end.recompiles  # the recompile of step 2 came after it
    final = handed[-1]
    assert not final.active and [s.index for s in final.steps] == [0, 1, 2] and len(final.recompiles) == 1
    assert w.report() is final  # nothing changed since the end: the same snapshot


def test_a_graph_break_record_is_heard():
    f = torch.compile(broken, backend="eager")
    breaks = []
    with explorer.watch(live=False) as w:
        w.add_listener(lambda report: breaks.append(len(report.graph_breaks)), every=0)
        f(torch.randn(3))
    assert breaks[-1] == 1
    assert 1 in breaks[:-1]  # heard when the break was recorded, before the end


def test_a_listener_that_raises_is_removed_and_noted_and_the_loop_goes_on():
    f = torch.compile(scale, backend="eager")
    calls = []

    def faulty(report):
        raise ValueError("view broke")

    with explorer.watch(live=False) as w:
        w.add_listener(faulty, every=0)
        w.add_listener(calls.append, every=0)
        _loop(w, f, [4, 4, 6])
    assert len(w.steps) == 3 and len(w.recompiles) == 1 and w.error is None
    assert w.listeners == (calls.append,)
    [note] = [n for n in w.notes if "listener" in n]
    assert "faulty" in note and "ValueError: view broke" in note and "removed" in note
    assert calls and calls[-1].active is False and calls[-1].notes == w.notes


def test_remove_listener_stops_the_calls():
    f = torch.compile(scale, backend="eager")
    calls = []
    with explorer.watch(live=False) as w:
        w.add_listener(calls.append, every=0)
        _loop(w, f, [4, 4])
        heard = len(calls)
        w.remove_listener(calls.append)
        w.remove_listener(print)  # never added: nothing happens
        _loop(w, f, [6, 6])
    assert heard and len(calls) == heard


def test_without_listeners_no_report_is_made_while_the_loop_runs(monkeypatch):
    f = torch.compile(scale, backend="eager")
    with monkeypatch.context() as patched:
        patched.setattr(watch_module.Watch, "report", lambda self: pytest.fail("a report made with no listener"))
        with explorer.watch(live=False) as w:
            _loop(w, f, [4, 6])
    assert len(w.recompiles) == 1


def test_a_watched_function_tells_its_listeners_after_each_call():
    f = torch.compile(scale, backend="eager")
    watched = explorer.watch(lambda n: f(torch.randn(n)))
    steps = []
    watched.watch.add_listener(lambda report: steps.append((report.active, len(report.steps))), every=0)
    for n in (4, 6):
        watched(n)
    assert (True, 1) in steps and (True, 2) in steps


def test_a_listener_is_told_at_most_once_per_interval_and_always_at_the_end():
    now = iter([0.0, 0.1, 0.2, 0.3, 0.4, 0.6, 0.65, 0.7])
    listeners = Listeners(clock=lambda: next(now))
    told, made = [], []
    listeners.add(told.append)  # the default interval: VIEW_INTERVAL
    assert VIEW_INTERVAL == 0.25

    def report():
        made.append(1)
        return WatchReport(active=True)

    for _ in range(6):
        listeners.tell(report, active=True)
    assert len(told) == 3  # at 0.0, 0.3 and 0.6: the others fell within 0.25 s of a telling
    listeners.tell(report, active=False)  # 0.65: the end is always told
    assert len(told) == 4 and len(made) == 4  # a report is made only when someone is told
    listeners.tell(report, active=True)  # 0.7, within the interval of the end: nobody is told, none is made
    assert len(told) == 4 and len(made) == 4
    with pytest.raises(ValueError, match="every=-1"):
        listeners.add(print, every=-1)
