"""Runs execute the captured compiled program itself, whatever happened to Dynamo's caches since.

A capture holds Dynamo's cache entries of every frame it compiled while the Compilation lives; the
frames only it runs (its copy of the entry function, the resume functions after a graph break) also
through ``torch._dynamo.reset()``. No run may compile anything: where the program is gone (a reset
cleared a frame of the user's own code), the run says so and compiles nothing.
"""

from __future__ import annotations

import gc

import pytest
import torch
from torch._dynamo.eval_frame import _debug_get_cache_entry_list
from torch._dynamo.utils import counters

import explorer
from compiler.runs import replay
from compiler.runs.replay import NotRunnableError


def breaks_between(x: torch.Tensor) -> torch.Tensor:
    y = x.sin() + 1
    torch._dynamo.graph_break()
    return (y.cos() * x).sum(dim=-1)


class Inner(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.fc(x).relu()
        torch._dynamo.graph_break()
        return y * 2


class Outer(torch.nn.Module):
    def __init__(self, inner: torch.nn.Module) -> None:
        super().__init__()
        self.inner = inner
        self.fc = torch.nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(self.inner(x)).sin()


class HeldInner(Inner):
    def forward(self, x: torch.Tensor) -> torch.Tensor:  # its own code object, for the release test
        y = self.fc(x).tanh()
        torch._dynamo.graph_break()
        return y - 1


def _frames_compiled() -> int:
    return counters["frames"]["total"]


@pytest.fixture(scope="module")
def function_capture():
    torch.manual_seed(0)
    c = explorer.compile(breaks_between, torch.randn(4, 8))
    return c, c.run().detach().clone()


@pytest.mark.parametrize("run", ["run", "profile", "check_numerics", "check_determinism"])
def test_every_kind_of_run_survives_a_dynamo_reset_without_compiling(function_capture, run):
    c, expected = function_capture
    graphs = len(c.graphs)
    torch._dynamo.reset()
    before = _frames_compiled()
    result = {"run": lambda: c.run(), "profile": lambda: c.profile(runs=2, warmup=1),
              "check_numerics": c.check_numerics, "check_determinism": lambda: c.check_determinism(runs=2)}[run]()
    assert _frames_compiled() == before, f"{run} compiled frames behind the user's back"
    assert len(c.graphs) == graphs == 2
    if run == "run":
        assert torch.equal(result, expected)
    if run == "profile":
        assert result.kernel_ms and result.attributed_ms > 0
    if run == "check_numerics":
        assert result.ok and len(result.kernels) == len(c.kernels)
    if run == "check_determinism":
        assert result.bitwise_equal


def test_a_run_that_would_need_a_new_graph_says_so_and_compiles_nothing(function_capture):
    c, _ = function_capture
    torch._dynamo.reset()
    graphs, before = len(c.graphs), _frames_compiled()
    with pytest.raises(NotRunnableError, match="would compile a new graph") as error:
        replay.runner(c, (torch.randn(5, 8),))()  # another batch size: Dynamo's guards fail
    assert "Nothing was compiled" in str(error.value)
    assert len(c.graphs) == graphs and _frames_compiled() == before


def test_a_graph_break_inside_a_submodule_runs_without_compiling_until_a_reset_clears_it():
    torch.manual_seed(0)
    c = explorer.compile(Outer(Inner()), torch.randn(4, 8))
    graphs, before = len(c.graphs), _frames_compiled()
    c.run()
    c.profile(runs=2, warmup=1)
    assert _frames_compiled() == before and len(c.graphs) == graphs == 3  # the submodule's frame stayed cached
    torch._dynamo.reset()  # clears the cache of the user's Inner.forward, as the user asked
    with pytest.raises(NotRunnableError, match="compiled code was freed"):
        c.profile(runs=2)
    assert _frames_compiled() == before and len(c.graphs) == graphs
    again = explorer.compile(Outer(Inner()), torch.randn(4, 8))  # capturing the same code after a reset works
    assert len(again.graphs) == 3 and again.run().shape == (4, 8)


def test_the_held_caches_go_with_the_last_compilation():
    """Frames converted on shared code (a submodule's forward) are reset when the last compilation
    holding them is freed, so repeated captures do not pile cache entries up on the user's code."""
    model, x = Outer(HeldInner()), torch.randn(4, 8)
    first = explorer.compile(model, x)
    second = explorer.compile(model, x)
    code = HeldInner.forward.__code__
    assert len(_debug_get_cache_entry_list(code)) == 2  # one entry per live capture
    del first
    gc.collect()
    assert len(_debug_get_cache_entry_list(code)) == 2  # the second capture still holds the code
    assert torch.equal(second.run(), second.run())
    del second
    gc.collect()
    assert _debug_get_cache_entry_list(code) == []


def _python_calls(fn) -> int:
    import cProfile
    import pstats

    fn()
    profiler = cProfile.Profile()
    profiler.enable()
    fn()
    profiler.disable()
    return pstats.Stats(profiler).total_calls


def test_a_call_of_the_captured_program_does_what_plain_torch_compile_does():
    """torch.compile(dynamic=False) patched Dynamo's config around every call: 30 more Python calls and
    about 10 us a call, which sweeps' run_ms and a launch-bound GPU program paid."""
    def plain_twin(x):
        y = x.sin() + 1
        return (y.cos() * x).sum(dim=-1)

    def captured_twin(x):
        y = x.sin() + 1
        return (y.cos() * x).sum(dim=-1)

    x = torch.randn(4, 8)
    plain = torch.compile(plain_twin)
    c = explorer.compile(captured_twin, x)
    assert _python_calls(lambda: c.live.compiled(x)) <= _python_calls(lambda: plain(x))
    with pytest.raises(NotRunnableError):  # still static: another shape would compile, and a run may not
        c.run(torch.randn(5, 8))
