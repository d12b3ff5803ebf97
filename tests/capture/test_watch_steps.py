"""The steps of a watch without marks, and with them (compiler/pipeline/watch_steps.py): one per optimizer
``step()``, else one per call of the outermost compiled frame; the loop's marks win over both. Each loop
changes what it feeds the model at known steps (the batch grows at step 4, an attribute the graph
specialised on changes at step 7), so the steps of the recompiles are known; Dynamo's own reasons say
which change caused each. Dynamo's ``eager`` backend: the compiles are the events here."""

from __future__ import annotations

import inspect

import pytest
import torch

import explorer
from compiler._torch import structured_trace, watch_hooks
from compiler.io.watch import watch_payload
from compiler.model.contract import WatchPayload
from compiler.model.watch import StepRule
from tests.contract_check import mismatches

STEPS = 10
GROWS, SCALED = 4, 7  # the batch grows at step 4; model.scale changes at step 7


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.scale = 1

    def forward(self, x):
        y = self.lin(x) * self.scale
        torch._dynamo.graph_break()
        return y.relu()


BREAK_LINE = inspect.getsourcelines(Net.forward)[1] + 2
SIZE_REASON = "tensor 'x' size mismatch at index 0. expected 8, actual 12"


@pytest.fixture(autouse=True)
def fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def _batch(step):
    return torch.randn(8 if step < GROWS else 12, 4)


def _change(model, step):
    if step == SCALED:
        model.scale = 2


def _recompiles(w):
    """(function, step, reason) of each recompile: the forward frame's at 4 (its batch) and 7 (its scale),
    the resume function's (after the break) at 4 (what it receives grew)."""
    return [(c.function.split("_at_")[0], c.step, c.reason) for c in w.recompiles]


EXPECTED = [("forward", GROWS, SIZE_REASON), ("torch_dynamo_resume_in_forward", GROWS,
                                              "tensor 'y' size mismatch at index 0. expected 8, actual 12"),
            ("forward", SCALED, "self.scale == 1")]


def test_a_training_loop_without_marks_has_one_step_per_optimizer_step(tmp_path):
    model = Net()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    f = torch.compile(model, backend="eager")
    with structured_trace.on_trace_records(lambda r: None, log_dir=tmp_path):
        with explorer.watch(live=False) as w:
            for step in range(STEPS):
                _change(model, step)
                for _ in range(2):  # two micro-batches per optimizer step: two calls of the compiled forward
                    f(_batch(step)).sum().backward()
                optimizer.step()
                optimizer.zero_grad()
    assert w.step_rule is StepRule.OPTIMIZER and w.report().steps_made_by == "one per optimizer step() (SGD)"
    assert [s.index for s in w.steps] == list(range(STEPS))
    assert _recompiles(w) == EXPECTED
    [graph_break] = w.graph_breaks
    assert (graph_break.line, graph_break.count) == (BREAK_LINE, 2 * STEPS)
    assert all(sum(s.calls.values()) == 4 for s in w.steps)  # each step: the forward and its resume, twice
    # the log being written was told the steps: read back, the same compiles at the same steps, by the same rule
    logged = explorer.load_watch(tmp_path)
    assert [(c.compile_id, c.step) for c in logged.compiles] == [(c.compile_id, c.step) for c in w.compiles]
    assert logged.step_rule is StepRule.OPTIMIZER


def test_a_loop_without_an_optimizer_has_one_step_per_call_of_the_outermost_compiled_frame():
    model = Net()
    f = torch.compile(model, backend="eager")
    with explorer.watch(live=False) as w:
        for step in range(STEPS):
            _change(model, step)
            f(_batch(step))
    assert w.step_rule is StepRule.COMPILED_CALL
    assert w.report().steps_made_by == "one per call of the outermost compiled frame (forward)"
    assert [s.index for s in w.steps] == list(range(STEPS))
    assert _recompiles(w) == EXPECTED
    [graph_break] = w.graph_breaks
    assert (graph_break.line, graph_break.count) == (BREAK_LINE, STEPS)
    assert all(len(s.frames) == 2 for s in w.steps)  # the forward frame and its resume, in every step
    assert [s.compiles for s in w.steps if s.compiles] == [["0/0", "1/0"], ["0/1", "1/1"], ["0/2"]]
    payload = watch_payload(w.report())  # what the widget is sent, as the contract declares it
    assert mismatches(payload, WatchPayload) == []
    assert [(e["kind"], e["step"]) for e in payload["events"]] == [
        ("compile", 0), ("compile", 0), ("recompile", GROWS), ("recompile", GROWS), ("recompile", SCALED), ("break", 0)]


def test_the_loops_marks_win_over_the_optimizer():
    model = Net()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    f = torch.compile(model, backend="eager")
    with explorer.watch(live=False) as w:
        for step in range(STEPS):
            _change(model, step)
            for _ in range(2):  # an optimizer step per micro-batch: 20 of them, 10 marked steps
                f(_batch(step)).sum().backward()
                optimizer.step()
                optimizer.zero_grad()
            w.step()
    assert w.step_rule is StepRule.MARKED
    assert [s.index for s in w.steps] == list(range(STEPS))
    assert _recompiles(w) == EXPECTED
    assert [(b.line, b.count) for b in w.graph_breaks] == [(BREAK_LINE, 2 * STEPS)]


def test_steps_found_before_the_first_mark_are_folded_into_step_0_also_in_the_log(tmp_path):
    def scale(x):
        return x * 2 + 1

    f = torch.compile(scale, backend="eager")
    with structured_trace.on_trace_records(lambda r: None, log_dir=tmp_path):
        with explorer.watch(live=False) as w:
            f(torch.randn(4))  # step 0 of the calls...
            f(torch.randn(6))  # ... step 1: the recompile, written into the log as step 1 when step 1 ends
            f(torch.randn(6))
            assert w.step_rule is StepRule.COMPILED_CALL and [s.index for s in w.steps] == [0, 1]
            for n in w.steps_of([6, 6, 6]):  # the first mark: everything before it is step 0
                f(torch.randn(n))
    assert w.step_rule is StepRule.MARKED
    assert [s.index for s in w.steps] == [0, 1, 2]
    assert [sum(s.calls.values()) for s in w.steps] == [4, 1, 1]
    assert [(c.compile_id, c.step) for c in w.compiles] == [("0/0", 0), ("0/1", 0)]
    logged = explorer.load_watch(tmp_path)  # the later mark of 0/1 (step 0) wins over the earlier (step 1)
    assert [(c.compile_id, c.step) for c in logged.compiles] == [("0/0", 0), ("0/1", 0)]
    assert logged.step_rule is StepRule.MARKED


def test_a_watched_function_makes_each_call_a_step_whatever_it_calls():
    model = Net()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    f = torch.compile(model, backend="eager")

    @explorer.watch
    def train_step(step):
        _change(model, step)
        f(_batch(step)).sum().backward()
        optimizer.step()
        optimizer.zero_grad()

    for step in range(STEPS):
        train_step(step)
    w = train_step.watch
    assert w.step_rule is StepRule.CALL and w.report().source == "calls of train_step"
    assert [s.index for s in w.steps] == list(range(STEPS))
    assert _recompiles(w) == EXPECTED


def test_an_optimizer_step_inside_compiled_code_is_not_seen_and_changes_nothing_dynamo_does():
    """The watch's optimizer hook returns at once while Dynamo traces it: the compiled step graph-breaks where
    torch's own code does, no more, with the watch or without."""
    import contextlib

    from torch._dynamo.utils import counters

    def breaks_of_a_compiled_step(watched: bool) -> tuple[dict, StepRule | None]:
        torch._dynamo.reset()
        counters.clear()
        model = torch.nn.Linear(4, 4)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        step = torch.compile(optimizer.step, backend="eager")
        with explorer.watch(live=False) if watched else contextlib.nullcontext() as w:
            for _ in range(3):
                model(torch.randn(2, 4)).sum().backward()
                step()
        return dict(counters["graph_break"]), (w.step_rule if watched else None)

    plain, _ = breaks_of_a_compiled_step(False)
    watched, rule = breaks_of_a_compiled_step(True)
    assert watched == plain
    assert rule is StepRule.COMPILED_CALL  # the compiled step() was not told to the watch
    assert watch_hooks.active() is None
