"""Graphs compiled before a watch began (compiler/_torch/watch_earlier.py): their calls and the graph breaks
after them are counted during the watch, and their globals are put back after it. Dynamo's ``eager``
backend: the caches and the breaks are Dynamo's."""

from __future__ import annotations

import inspect

import pytest
import torch

import explorer
from compiler.pipeline.watch_records import EARLIER_REASON


@pytest.fixture(autouse=True)
def fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def broken(x):
    y = x.sin()
    torch._dynamo.graph_break()
    return y.cos()


BREAK_LINE = inspect.getsourcelines(broken)[1] + 2


def _graph_globals():
    return {k: v for k, v in globals().items() if k.startswith("__compiled_fn_")}


def test_a_break_after_a_graph_compiled_before_the_watch_is_counted_and_the_graph_put_back():
    f = torch.compile(broken, backend="eager")
    f(torch.randn(3))
    before = _graph_globals()
    assert before
    with explorer.watch(live=False) as w:
        for _ in w.steps_of(range(3)):
            f(torch.randn(3))
    assert not w.compiles
    [graph_break] = w.graph_breaks
    assert (graph_break.line, graph_break.count, graph_break.reason) == (BREAK_LINE, 3, EARLIER_REASON)
    assert graph_break.filename == __file__ and graph_break.function == "broken"
    assert {f.function: f.calls for f in w.frames} == {"broken": 3, f"torch_dynamo_resume_in_broken_at_{BREAK_LINE}": 3}
    assert all(len(s.frames) == 2 for s in w.steps)
    assert _graph_globals() == before  # the graphs themselves again, not the watch's wrappers
    assert "1 graph breaks (fired 3x)" in w.summary()


def test_a_break_seen_both_before_and_during_the_watch_is_one_entry_with_dynamos_reason():
    f = torch.compile(broken, backend="eager")
    f(torch.randn(3))
    with explorer.watch(live=False) as w:
        for n in w.steps_of([3, 3, 5, 5]):  # steps 2 and 3 recompile: the break is recorded then
            f(torch.randn(n))
    assert w.recompiles
    [graph_break] = w.graph_breaks
    assert graph_break.line == BREAK_LINE and graph_break.count == 4
    assert "graph_break" in graph_break.reason and graph_break.reason != EARLIER_REASON


def test_earlier_graphs_that_do_not_run_in_the_watch_add_nothing():
    f = torch.compile(broken, backend="eager")
    f(torch.randn(3))
    with explorer.watch(live=False) as w:
        broken(torch.randn(3))  # eager: no compiled graph runs
    assert not w.graph_breaks and not w.frames
