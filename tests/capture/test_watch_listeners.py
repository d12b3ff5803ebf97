"""Listeners on a live watch (``w.add_listener(fn)``): when they are called, what they see, and that a
listener's fault never reaches the user's loop. Dynamo's ``eager`` backend: the compiles are the events
here, not Inductor's code."""

from __future__ import annotations

import pytest
import torch

import explorer
from compiler.pipeline import watch as watch_module


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

    def listener(w):
        seen.append((w.active, len(w.steps), [c.compile_id for c in w.compiles], len(w.recompiles),
                     threading.get_ident()))

    with explorer.watch(live=False) as w:
        w.add_listener(listener)
        w.add_listener(listener)  # added once
        _loop(w, f, [4, 4, 6, 6])
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


def test_a_graph_break_record_is_heard():
    f = torch.compile(broken, backend="eager")
    breaks = []
    with explorer.watch(live=False) as w:
        w.add_listener(lambda w: breaks.append(len(w.graph_breaks)))
        f(torch.randn(3))
    assert breaks[-1] == 1
    assert 1 in breaks[:-1]  # heard when the break was recorded, before the end


def test_a_listener_that_raises_is_removed_and_noted_and_the_loop_goes_on():
    f = torch.compile(scale, backend="eager")
    calls = []

    def faulty(w):
        raise ValueError("view broke")

    with explorer.watch(live=False) as w:
        w.add_listener(faulty)
        w.add_listener(calls.append)
        _loop(w, f, [4, 4, 6])
    assert len(w.steps) == 3 and len(w.recompiles) == 1 and w.error is None
    assert w._listeners == (calls.append,)
    [note] = [n for n in w.notes if "listener" in n]
    assert "faulty" in note and "ValueError: view broke" in note and "removed" in note
    assert calls and calls[-1] is w


def test_remove_listener_stops_the_calls():
    f = torch.compile(scale, backend="eager")
    calls = []
    with explorer.watch(live=False) as w:
        w.add_listener(calls.append)
        _loop(w, f, [4, 4])
        heard = len(calls)
        w.remove_listener(calls.append)
        w.remove_listener(print)  # never added: nothing happens
        _loop(w, f, [6, 6])
    assert heard and len(calls) == heard


def test_without_listeners_nothing_is_called(monkeypatch):
    def never(self):
        raise AssertionError("_notify called with no listener")

    monkeypatch.setattr(watch_module.Watch, "_notify", never)
    f = torch.compile(scale, backend="eager")
    with explorer.watch(live=False) as w:
        _loop(w, f, [4, 6])
    assert len(w.recompiles) == 1


def test_a_watched_function_tells_its_listeners_after_each_call():
    f = torch.compile(scale, backend="eager")
    watched = explorer.watch(lambda n: f(torch.randn(n)))
    steps = []
    watched.watch.add_listener(lambda w: steps.append((w.active, len(w.steps))))
    for n in (4, 6):
        watched(n)
    assert (True, 1) in steps and (True, 2) in steps
