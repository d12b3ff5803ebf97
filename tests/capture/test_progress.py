"""Progress of compiles, autotuning and profiles: the steps reported, how they are shown, and cancelling.

A display that raises KeyboardInterrupt at a chosen step stands in for Ctrl-C at that point of the
work; the notebook test at the end interrupts a real kernel.
"""

from __future__ import annotations

import queue
import re
import time

import pytest
import torch
from jupyter_client.manager import KernelManager

import explorer
from compiler.model import progress
from compiler._torch import inductor_config
from compiler.pipeline.assemble import InnerRecord
from compiler.pipeline.capture import _Recorder
from explorer import progress as shown
from tests import workloads


def small(x: torch.Tensor) -> torch.Tensor:
    return torch.relu(x @ x).sum(0)


class Recording:
    """A display that keeps every step, and raises KeyboardInterrupt at ``interrupt_at`` (a stage)."""

    def __init__(self, interrupt_at: str | None = None, after: int = 0) -> None:
        self.steps: list[progress.Step] = []
        self.interrupt_at = interrupt_at
        self.after = after

    def __call__(self, step: progress.Step) -> None:
        self.steps.append(step)
        if step.stage == self.interrupt_at and not step.finished and (step.done or 0) >= self.after:
            raise KeyboardInterrupt

    @property
    def stages(self) -> list[str]:
        return [s.stage for s in self.steps if not s.finished]


@pytest.fixture(scope="module")
def compiled():
    seen = Recording()
    c = explorer.compile(small, torch.randn(16, 16), progress_display=seen)
    return c, seen


def test_a_compile_reports_its_stages_in_order_and_finishes(compiled):
    c, seen = compiled
    first = [seen.stages.index(s) for s in ("tracing", "aot", "lowering", "scheduling", "codegen")]
    assert first == sorted(first), seen.stages
    assert seen.stages[-1] == "collecting"
    assert seen.steps[-1].finished and sum(s.finished for s in seen.steps) == 1
    assert all(s.task == "compile small" for s in seen.steps)
    times = [s.elapsed for s in seen.steps]
    assert times == sorted(times)
    assert any(s.detail == "graph 1" for s in seen.steps if s.stage == "codegen")


def test_autotuning_is_counted_as_choices_are_timed():
    seen = Recording()
    recorder = _Recorder({}, "cpu", None)
    recorder.current = InnerRecord(dynamo_index=0, kind="forward")
    with progress.task("compile mm", display=seen):
        recorder.on_autotune("mm", "triton_mm BLOCK_M=64", 0.02, False, "select_algorithm")
        recorder.on_autotune("mm", "extern_mm", 0.01, True, "select_algorithm")
    counted = [(s.stage, s.done) for s in seen.steps if not s.finished]
    assert counted == [("autotuning", 1), ("autotuning", 2)]
    assert "last for mm" in seen.steps[1].detail
    assert [r.choice for r in recorder.current.autotune] == ["triton_mm BLOCK_M=64", "extern_mm"]


def test_cancelling_a_compile_says_where_and_leaves_torch_as_it_was(compiled):
    before, grad = inductor_config.snapshot(), torch.is_grad_enabled()
    with pytest.raises(progress.Cancelled, match=r"compile running_sum was cancelled during codegen; nothing it "
                                                 r"started was kept"):
        explorer.compile(workloads.running_sum, torch.randn(8, 8), progress_display=Recording("codegen"))
    assert inductor_config.snapshot() == before and torch.is_grad_enabled() == grad
    again = explorer.compile(workloads.running_sum, torch.randn(8, 8), progress_display=False)
    assert again.kernels and again.function == "running_sum"
    c, _ = compiled
    assert c.kernels  # an earlier compilation is untouched


def test_a_task_inside_another_reports_to_the_outer_display():
    outer = Recording()
    with progress.task("profile f", display=outer):
        with progress.task("compile f", display=Recording()) as inner:
            inner.step("lowering")
    assert [(s.task, s.stage) for s in outer.steps] == [("profile f", "lowering"), ("profile f", "lowering")]
    assert outer.steps[-1].finished


def test_cancelling_a_profile_keeps_earlier_profiles_and_stops_the_profiler(compiled):
    c, _ = compiled
    kept = list(c.profiles)
    previous = progress.set_display(lambda task: Recording("profiling", after=2))
    try:
        with pytest.raises(explorer.progress.Cancelled, match="profile small was cancelled during profiling"):
            c.profile(runs=5, warmup=1)
    finally:
        progress.set_display(previous)
    assert c.profiles == kept
    assert not torch.autograd.profiler._is_profiler_enabled
    seen = Recording()
    progress.set_display(lambda task: seen)
    try:
        p = c.profile(runs=3, warmup=1)
    finally:
        progress.set_display(previous)
    assert c.profiles == kept + [p]
    assert [(s.stage, s.done, s.total) for s in seen.steps[:5]] == [
        ("warm-up", 0, 1), ("profiling", 0, 3), ("profiling", 1, 3), ("profiling", 2, 3), ("attributing", 3, 3)]


class FakeClock:
    """A clock that moves only when told: the throttle's "too soon" without waiting or racing."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_short_work_shows_nothing_and_a_shown_bar_is_taken_away():
    clock = FakeClock()
    throttle = shown.Throttle(clock)
    assert not throttle.wanted(progress.Step("compile f", "tracing", elapsed=0.1))
    assert not throttle.wanted(progress.Step("compile f", "aot", elapsed=0.2, finished=True))
    assert throttle.wanted(progress.Step("compile f", "lowering", elapsed=0.6))
    clock.now += shown.REFRESH_S / 2
    assert not throttle.wanted(progress.Step("compile f", "lowering", elapsed=0.61))  # too soon, same stage
    assert throttle.wanted(progress.Step("compile f", "scheduling", elapsed=0.62))  # a new stage passes
    clock.now += shown.REFRESH_S / 2
    assert not throttle.wanted(progress.Step("compile f", "scheduling", elapsed=0.65))  # too soon after the new stage
    clock.now += shown.REFRESH_S
    assert throttle.wanted(progress.Step("compile f", "scheduling", elapsed=0.75))  # the same stage, later
    assert throttle.wanted(progress.Step("compile f", "scheduling", elapsed=0.76, finished=True))


def test_the_bar_says_stage_counts_and_how_far():
    bundle = shown.bar_bundle(progress.Step("profile f", "profiling", 3, 12, "", 1.25))
    assert bundle["text/plain"] == "profile f: profiling 3/12 · 1.2 s"
    assert 'value="0.250"' in bundle["text/html"] and "ie-progress" in bundle["text/html"]
    staged = shown.bar_bundle(progress.Step("compile f", "codegen", detail="graph 1<2>", elapsed=2.0))
    assert "graph 1&lt;2&gt;" in staged["text/html"]
    assert f'value="{progress.COMPILE_STAGES.index("codegen") / len(progress.COMPILE_STAGES):.3f}"' in staged["text/html"]
    assert "value=" not in shown.bar_bundle(progress.Step("f", "attributing"))["text/html"]  # indeterminate


def test_notebook_bar_appears_then_goes_away(monkeypatch):
    import IPython.display

    calls: list[tuple[str, dict, str]] = []
    monkeypatch.setattr(IPython.display, "display",
                        lambda bundle, raw, display_id: calls.append(("display", bundle, display_id)))
    monkeypatch.setattr(IPython.display, "update_display",
                        lambda bundle, raw, display_id: calls.append(("update", bundle, display_id)))
    bar = shown.NotebookBar()
    clock = FakeClock()
    bar.throttle = shown.Throttle(clock)
    bar(progress.Step("compile f", "tracing", elapsed=0.1))
    bar(progress.Step("compile f", "lowering", elapsed=0.8))
    bar(progress.Step("compile f", "lowering", elapsed=0.85))  # too soon: dropped
    clock.now += shown.REFRESH_S
    bar(progress.Step("compile f", "codegen", elapsed=1.0))
    bar(progress.Step("compile f", "codegen", elapsed=1.1, finished=True))
    assert [kind for kind, _, _ in calls] == ["display", "update", "update"]
    assert {display_id for _, _, display_id in calls} == {bar.display_id}
    assert "lowering" in calls[0][1]["text/plain"] and calls[-1][1] == {"text/plain": ""}


LONG_COMPILE_OPS = ("cos", "sin", "tanh", "exp", "sigmoid", "erf", "log1p", "atan")


def _run_cell(km, kc, code: str, interrupt_on_bar: bool = False, timeout_s: float = 300) -> list[dict]:
    """Execute ``code`` in the kernel and return its iopub messages; with ``interrupt_on_bar``, press the
    notebook's stop button (an interrupt) once the progress bar appears, and again each second while the
    bar still moves, as a user would when a SIGINT lands where Python cannot act on it."""
    msg_id = kc.execute(code)
    messages: list[dict] = []
    last_interrupt = None
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            message = kc.get_iopub_msg(timeout=1)
        except queue.Empty:
            continue
        if message["parent_header"].get("msg_id") != msg_id:
            continue
        messages.append(message)
        bar = message["msg_type"] in ("display_data", "update_display_data")
        if interrupt_on_bar and bar and (last_interrupt is None or time.monotonic() - last_interrupt > 1.0):
            km.interrupt_kernel()
            last_interrupt = time.monotonic()
        if message["msg_type"] == "status" and message["content"]["execution_state"] == "idle":
            return messages
    raise TimeoutError(f"the cell did not finish in {timeout_s} s: {code!r}")


def _bars(messages: list[dict]) -> list[tuple[str, str, str]]:
    return [(m["msg_type"], m["content"]["transient"]["display_id"], m["content"]["data"].get("text/plain", ""))
            for m in messages if m["msg_type"] in ("display_data", "update_display_data")]


def test_in_a_notebook_the_bar_appears_goes_away_and_an_interrupt_cancels_cleanly(kernel_specs):
    km = KernelManager(kernel_name="explorer-notebooks", kernel_spec_manager=kernel_specs)
    km.start_kernel()
    kc = km.client()
    kc.start_channels()
    try:
        kc.wait_for_ready(timeout=120)
        first = _run_cell(km, kc, "import torch, explorer\n"
                                  "def f(x): return (x.sin() + 1).sum()\n"
                                  "c = explorer.compile(f, torch.randn(64))")
        bars = _bars(first)
        assert bars and bars[0][0] == "display_data" and bars[0][2].startswith("compile f: ")
        assert {display_id for _, display_id, _ in bars} == {bars[0][1]}  # one bar, updated in place
        assert bars[-1][0] == "update_display_data" and bars[-1][2] == ""  # and emptied at the end
        assert any("ie-progress" in m["content"]["data"].get("text/html", "") for m in first
                   if m["msg_type"] == "display_data")

        graphs = "\n    torch._dynamo.graph_break()\n".join(f"    x = (x.{op}() * x).softmax(0)" for op in LONG_COMPILE_OPS)
        cancelled = _run_cell(km, kc, "from compiler._torch import inductor_config\n"
                                      "before = inductor_config.snapshot()\n"
                                      f"def g(x):  # a graph per op: long enough to be interrupted\n{graphs}\n"
                                      "    return x\n"
                                      "d = explorer.compile(g, torch.randn(64))", interrupt_on_bar=True)
        errors = [m["content"] for m in cancelled if m["msg_type"] == "error"]
        assert len(errors) == 1, f"the compile ended before the interrupt landed: {_bars(cancelled)}"
        (error,) = errors
        assert error["ename"] == "Cancelled"
        assert re.fullmatch(r"compile g was cancelled during [a-z ]+; nothing it started was kept, and torch's "
                            r"settings are as they were before it", error["evalue"]), error["evalue"]
        bars = _bars(cancelled)
        assert {display_id for _, display_id, _ in bars} == {bars[0][1]} and bars[-1][2] == ""

        after = _run_cell(km, kc, "print(c.function, 'd' in globals(), inductor_config.snapshot() == before)\n"
                                  "def h(x): return x.cos() + 1\n"
                                  "e = explorer.compile(h, torch.randn(64)); print(len(e.kernels) > 0)")
        printed = "".join(m["content"]["text"] for m in after if m["msg_type"] == "stream" and m["content"]["name"] == "stdout")
        assert printed.split() == ["f", "False", "True", "True"]
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def test_terminal_bar_shows_the_stage_and_is_erased_at_the_end():
    import io

    from rich.console import Console

    out = io.StringIO()
    bar = shown.TerminalBar(Console(file=out, force_terminal=True, width=100))
    bar(progress.Step("compile f", "lowering", detail="graph 1", elapsed=0.7))  # drawn at once, not at a tick
    bar(progress.Step("compile f", "autotuning", 12, None, "12 choices timed, last for mm", elapsed=0.9))
    assert bar.progress is not None and bar.progress.live.is_started
    bar(progress.Step("compile f", "autotuning", elapsed=1.0, finished=True))
    assert not bar.progress.live.is_started
    text = out.getvalue()
    assert "compile f: lowering · graph 1" in text
