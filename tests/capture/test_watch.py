"""``explorer.watch()`` over loops whose events are known: where the recompile happens and why, which
guard failed with its line and value, how often a graph break fires, what mark_dynamic changes, and the
watch's own conduct (exceptions, nesting, hooks put back, an empty run, a TORCH_TRACE log read back).

Tiny functions and few steps: the compiles are what costs here, so the loops whose point is Dynamo's
own events (guards, breaks, nesting, hooks) compile with the ``eager`` backend; Inductor's path (its
cache records, a full capture on demand, a log read back) is checked on the others.
"""

from __future__ import annotations

import inspect
import io

import pytest
import torch
from rich.console import Console

import explorer
from compiler._torch import watch_hooks
from compiler.pipeline import watch_records


def _line_of(fn, text):
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def _text(obj, width=200):
    console = Console(file=io.StringIO(), width=width, color_system=None)
    console.print(obj)
    return console.file.getvalue()


def _hooks_now():
    """The hooks a watch touches, after torch's first compile in this process has settled its own (it
    drops its lazy TORCH_TRACE handler then, watch or not)."""
    torch.compile(lambda x: x - 1, backend="eager")(torch.randn(1))
    return watch_hooks.installed()


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


class Scaled(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.n = 1

    def forward(self, x):
        return x * self.n + 1


def test_shape_change_at_step_n_is_one_recompile_at_that_step_with_its_reason_and_line():
    f = torch.compile(scale)
    with explorer.watch() as w:
        for step in range(5):
            f(torch.randn(4 if step < 3 else 6))
            w.step()
    assert [s.index for s in w.steps] == [0, 1, 2, 3, 4]
    assert [c.compile_id for c in w.compiles] == ["0/0", "0/1"]
    assert w.compiles[0].step == 0 and not w.compiles[0].is_recompile
    [recompile] = w.recompiles
    assert recompile.step == 3
    assert recompile.reason == "tensor 'x' size mismatch at index 0. expected 4, actual 6"
    assert recompile.value == "6"
    assert recompile.guard is not None and recompile.guard.kind == "TENSOR_MATCH"
    assert recompile.file == __file__ and recompile.line == _line_of(scale, "return x * 2 + 1")
    assert w.steps[3].compiles == ["0/1"] and all(not s.compiles for s in w.steps if s.index not in (0, 3))
    # every step ran the frame once: steps 0-2 its first graph, 3-4 the recompiled one
    assert [s.calls for s in w.steps] == [{"0/0": 1}] * 3 + [{"0/1": 1}] * 2
    [frame] = w.frames
    assert (frame.function, frame.calls, frame.recompiles, frame.compile_ids) == ("scale", 5, 1, ["0/0", "0/1"])
    text = _text(w)
    assert "2 compiles (1 recompiles)" in text and "size mismatch at index 0" in text
    assert "size mismatch at index 0" in w._repr_html_()


def test_int_attribute_change_names_the_failed_guard_and_the_value_that_broke_it():
    model = Scaled()
    f = torch.compile(model, backend="eager")
    x = torch.randn(4)
    with explorer.watch() as w:
        for step in w.steps_of(range(4)):
            if step == 2:
                model.n = 5
            f(x)
    assert len(w.steps) == 4
    [recompile] = w.recompiles
    assert recompile.step == 2
    assert recompile.reason == "self.n == 1"
    assert recompile.guard.kind == "EQUALS_MATCH" and recompile.guard.source == "L['self'].n"
    assert recompile.value == "5"
    assert recompile.line == _line_of(Scaled.forward, "return x * self.n + 1")
    assert "self.n == 1" in _text(w)


def test_graph_break_in_the_loop_body_fires_once_per_step():
    f = torch.compile(broken, backend="eager")
    steps = 4
    with explorer.watch() as w:
        for _ in w.steps_of(range(steps)):
            f(torch.randn(3))
    [graph_break] = w.graph_breaks
    assert graph_break.count == steps
    assert graph_break.line == _line_of(broken, "torch._dynamo.graph_break()")
    assert "graph_break" in graph_break.reason
    assert {f.function: f.calls for f in w.frames} == {"broken": steps, "torch_dynamo_resume_in_broken_at_%d"
                                                        % graph_break.line: steps}
    assert not w.recompiles
    assert all(len(s.frames) == 2 for s in w.steps)


def test_mark_dynamic_removes_the_recompile():
    f = torch.compile(scale, backend="eager")
    with explorer.watch() as w:
        for step in w.steps_of(range(4)):
            x = torch.randn(4 if step < 2 else 6)
            torch._dynamo.mark_dynamic(x, 0)
            f(x)
    assert len(w.compiles) == 1 and not w.recompiles
    assert w.frames[0].calls == 4


def test_an_exception_in_the_loop_ends_the_watch_with_what_it_saw_and_reraises():
    before = _hooks_now()
    f = torch.compile(scale, backend="eager")
    with pytest.raises(ValueError, match="bad batch"):
        with explorer.watch() as w:
            for step in w.steps_of(range(5)):
                if step == 2:
                    raise ValueError("bad batch")
                f(torch.randn(4))
    assert w.error == "ValueError: bad batch"
    assert [s.index for s in w.steps] == [0, 1, 2]
    assert w.frames[0].calls == 2 and len(w.compiles) == 1
    assert "bad batch" in _text(w)
    assert watch_hooks.installed() == before


def test_torchs_item_warning_goes_to_the_watchs_notes_not_to_the_terminal(capfd):
    def with_item(x):
        return x * x.sum().item()

    f = torch.compile(with_item, backend="eager")
    with explorer.watch(live=False) as w:
        for _ in w.steps_of(range(2)):
            f(torch.randn(3))
    assert "Tensor.item()" not in capfd.readouterr().err
    [note] = [n for n in w.notes if "Tensor.item()" in n]
    assert note.startswith("warning from torch._dynamo.variables.tensor: Graph break from `Tensor.item()`")
    assert "capture_scalar_outputs = True" in note and len(note.splitlines()) > 5  # torch's whole warning
    text = _text(w)
    assert "note: warning from torch._dynamo.variables.tensor: Graph break from `Tensor.item()`" in text
    assert "more lines in w.notes" in text and "torch._dynamo.config.capture_scalar_outputs = True" not in text


def test_the_summary_says_what_was_watched_and_print_shows_the_report(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")  # the terminal's width, which print(w) fills
    f = torch.compile(scale, backend="eager")
    with explorer.watch(live=False) as w:
        for n in w.steps_of([4, 6]):
            f(torch.randn(n))
    text = _text(w)
    assert text.startswith("watch of a loop: 2 steps, ") and "live" not in text
    assert "steps: marked by w.step() / w.steps_of()" in text
    print(w)
    printed = capsys.readouterr().out
    assert printed.startswith("watch of a loop: 2 steps, ")
    assert "Compiles and recompiles" in printed and "size mismatch at index 0" in printed
    assert repr(w).startswith("Watch(2 steps, ") and "\n" not in repr(w)  # the repr stays one line


def test_a_watch_inside_a_watch_is_refused_and_the_outer_one_goes_on():
    f = torch.compile(scale, backend="eager")
    with explorer.watch() as outer:
        f(torch.randn(4))
        with pytest.raises(RuntimeError, match="do not nest"):
            with explorer.watch():
                pass
        f(torch.randn(4))
    assert outer.frames[0].calls == 2


def test_the_watch_puts_back_every_hook_it_installed():
    from torch._dynamo.output_graph import OutputGraph

    before = _hooks_now()
    original = OutputGraph.call_user_compiler
    f = torch.compile(scale, backend="eager")
    with explorer.watch() as w:
        during = watch_hooks.installed()
        f(torch.randn(4))
    assert during != before  # the watch did install something
    assert during["trace_structured"] and during["call_user_compiler"] is not original
    assert watch_hooks.installed() == before
    assert OutputGraph.call_user_compiler is original
    # a graph compiled in the watch still runs after it, and is counted by no one
    f(torch.randn(4))
    assert w.frames[0].calls == 1


def test_a_loop_that_never_compiles_gives_an_empty_clear_summary():
    with explorer.watch() as w:
        for _ in w.steps_of(range(3)):
            scale(torch.randn(4))
    assert len(w.steps) == 3 and not w.compiles and not w.graph_breaks and not w.frames
    assert "nothing compiled and no compiled frame ran" in w.summary()
    assert "nothing compiled" in _text(w)
    with pytest.raises(RuntimeError, match="has ended"):
        w.step()


def test_watch_of_a_function_makes_each_call_a_step():
    f = torch.compile(scale, backend="eager")

    @explorer.watch
    def train_step(n):
        return f(torch.randn(n))

    for n in (4, 4, 6):
        train_step(n)
    w = train_step.watch
    assert len(w.steps) == 3 and w.recompiles[0].step == 2
    assert watch_hooks.active() is None
    assert _text(w).startswith("watch of calls of train_step: 3 steps")


def test_a_compile_links_to_its_full_compilation_captured_on_demand():
    f = torch.compile(scale)
    with explorer.watch() as w:
        f(torch.randn(4))
        f(torch.randn(4))
    c = w.compiles[0].compilation()
    assert c.graphs and c.graphs[0].kernels
    assert w.compiles[0].compilation() is c  # captured once


def test_load_watch_reads_the_same_compiles_from_a_torch_trace_log(tmp_path):
    from compiler._torch import structured_trace

    f = torch.compile(Scaled())
    model = f._orig_mod
    with structured_trace.on_trace_records(lambda r: None, log_dir=tmp_path):
        for step in range(3):
            model.n = 1 if step < 2 else 3
            f(torch.randn(4))
    report = explorer.load_watch(tmp_path)
    assert [c.compile_id for c in report.compiles] == ["0/0", "0/1"]
    assert report.recompiles[0].reason == "self.n == 1"
    assert report.recompiles[0].guard.source == "L['self'].n"
    assert report.recompiles[0].step is None and not report.steps
    assert report.compiles[0].compilation().graphs


def test_a_watched_run_marks_its_steps_in_the_log_and_load_trace_reads_the_same_report(tmp_path):
    from compiler._torch import structured_trace

    f = torch.compile(broken, backend="eager")
    with structured_trace.on_trace_records(lambda r: None, log_dir=tmp_path):
        with explorer.watch(live=False) as w:
            for n in w.steps_of([3, 3, 5, 5]):
                f(torch.randn(n))
    live = [(c.compile_id, c.step, c.reason) for c in w.compiles]
    assert [step for _, step, reason in live if reason] == [2, 2]  # the frame and its resume after the break
    logged = explorer.load_watch(tmp_path)
    assert [(c.compile_id, c.step, c.reason) for c in logged.compiles] == live
    ts = explorer.load_trace(tmp_path)
    assert [(c.compile_id, c.step, c.reason) for c in ts.watch().compiles] == live
    assert [(b.reason, b.line) for b in ts.watch().graph_breaks] == [(b.reason, b.line) for b in w.graph_breaks]
    assert ts.watch_divergence() == []  # one rank: nothing to diverge from


def test_reason_values_come_from_dynamo_or_the_frame():
    assert watch_records.reason_value("0/0: tensor 'x' size mismatch at index 0. expected 4, actual 6") == "6"
    assert watch_records.reason_value("0/0: self.n == 1  # line", {"self.n": "7"}.get) == "7"
    assert watch_records.reason_value("0/0: ___check_type_id(L['x'], 123)") is None


def _rank_loop(rank, world, init_file, out_dir):
    """One rank of a two-rank gloo job: rank 1's batch grows at step 3, rank 0's never does."""
    import json

    import torch.distributed as dist

    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=world)
    try:
        f = torch.compile(scale, backend="eager")
        with explorer.watch(live=False) as w:
            for step in w.steps_of(range(5)):
                y = f(torch.randn(6 if rank == 1 and step >= 3 else 4))
                total = torch.tensor([float(y.sum())])
                dist.all_reduce(total)
        summary = {"steps": len(w.steps), "compiles": [c.compile_id for c in w.compiles],
                   "recompiles": [[c.step, c.reason] for c in w.recompiles], "calls": w.frames[0].calls}
        (out_dir / f"rank{rank}.json").write_text(json.dumps(summary))
    finally:
        dist.destroy_process_group()


def test_two_gloo_ranks_where_only_one_recompiles(tmp_path, monkeypatch):
    import json

    import torch.multiprocessing as mp

    from compiler import TraceLoadError

    trace_dir = tmp_path / "trace"
    monkeypatch.setenv("TORCH_TRACE", str(trace_dir))  # read by the ranks' torch at import: one log per rank
    mp.spawn(_rank_loop, args=(2, str(tmp_path / "init"), tmp_path), nprocs=2, join=True)
    ranks = [json.loads((tmp_path / f"rank{r}.json").read_text()) for r in range(2)]
    reason = "tensor 'x' size mismatch at index 0. expected 4, actual 6"
    assert ranks[0] == {"steps": 5, "compiles": ["0/0"], "recompiles": [], "calls": 5}
    assert ranks[1] == {"steps": 5, "compiles": ["0/0", "0/1"], "calls": 5, "recompiles": [[3, reason]]}
    # the same run read back from the ranks' logs: only rank 1 recompiled, at the step the watch marked
    assert not explorer.load_watch(trace_dir, rank=0).recompiles
    [recompile] = explorer.load_watch(trace_dir, rank=1).recompiles
    assert (recompile.reason, recompile.step, recompile.compile_id) == (reason, 3, "0/1")
    with pytest.raises(TraceLoadError, match="rank=N"):
        explorer.load_watch(trace_dir)
    # the TraceSet gives each rank the same report, and says which rank diverged, where and why
    ts = explorer.load_trace(trace_dir)
    assert [(c.compile_id, c.step, c.reason) for c in ts.watch(rank=1).compiles] == [("0/0", 0, ""), ("0/1", 3, reason)]
    assert [(c.compile_id, c.step) for c in ts.watch(rank=0).compiles] == [("0/0", 0)]
    with pytest.raises(KeyError, match="rank=N"):
        ts.watch()
    [divergence] = ts.watch_divergence()
    assert (divergence.kind, divergence.had, divergence.step, divergence.reason) == ("recompile", ("1",), 3, reason)
    assert divergence.summary.startswith("rank 1 recompiled scale at step 3") and reason in divergence.summary
    assert divergence.ranks["0"] == "did not recompile scale at step 3"


def test_watch_cell_magic_binds_the_watch_and_shows_its_summary():
    from IPython.testing import globalipapp
    from IPython.utils.capture import capture_output

    globalipapp.start_ipython()  # one test shell per process: another module may have started it already
    shell = globalipapp.get_ipython()
    shell.run_line_magic("load_ext", "explorer")
    shell.user_ns.update(torch=torch, f=torch.compile(scale, backend="eager"))
    with capture_output() as captured:
        result = shell.run_cell("%%watch run\nfor n in run.steps_of([4, 4, 6]):\n    f(torch.randn(n))\n")
    assert result.success, result.error_in_exec
    w = shell.user_ns["run"]
    assert len(w.steps) == 3 and w.recompiles[0].step == 2
    assert "1 recompiles" in captured.stdout + "".join(str(o.data) for o in captured.outputs)
    with capture_output():
        failed = shell.run_cell("%%watch bad\nraise KeyError('batch')\n")
    assert isinstance(failed.error_in_exec, KeyError) and shell.user_ns["bad"].error == "KeyError: 'batch'"
    assert watch_hooks.active() is None
