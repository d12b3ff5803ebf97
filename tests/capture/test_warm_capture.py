"""Warm captures: a program captured before is served from Inductor's FX graph cache and the explorer's
store beside it, with every stage as the cold capture made it and everything measured run anew (CPU).

Each test uses its own Inductor cache directory, so what it finds stored is what it stored itself. The
truth is the cold capture of the same program in the same process: a served graph must equal it stage by
stage, and its outputs must equal eager's.
"""

from __future__ import annotations

import gzip
import io
from pathlib import Path

import pytest
import torch
from rich.console import Console

import explorer
from compiler._torch import inductor_config
from compiler.pipeline import capture_store
from compiler.render.summary import compact_view
from tests import workloads
from tests.stage_summary import stage_summary


def _stored_files(inductor_cache_dir: Path) -> list[Path]:
    return sorted((inductor_cache_dir / "explorer").rglob("*.json.gz"))


def test_a_training_step_captured_again_is_served_whole_stage_by_stage(inductor_cache_dir):
    from torch._dynamo.utils import counters

    torch.manual_seed(0)
    model, x = workloads.TinyMLP(), torch.randn(4, 16)
    cold = explorer.compile(model, x, backward=True)
    hits = counters["aot_autograd"]["autograd_cache_hit"]
    warm = explorer.compile(model, x, backward=True)

    assert [g.kind for g in cold.graphs] == ["forward", "backward"]
    assert [g.cache for g in cold.graphs] == ["stored", "stored"]
    assert [g.cache for g in warm.graphs] == ["served", "served"]
    assert len(_stored_files(inductor_cache_dir)) == 2
    assert counters["aot_autograd"]["autograd_cache_hit"] == hits + 1  # AOTAutograd traced nothing
    for before, after in zip(cold.graphs, warm.graphs):
        assert stage_summary(after) == stage_summary(before)
        assert after.compiled_fn is not None and after.fx.module is not None
        # the forward's and the backward's post-grad GraphModules, traced again from the Dynamo graph, have
        # the stored stages' nodes
        ops = {n.name for n in after.post_grad.module.graph.nodes if n.op == "call_function"}
        assert ops == {n.name for n in after.post_grad.nodes if n.op == "call_function"}
    torch.testing.assert_close(warm.outputs, model(x))
    report = warm.check_numerics()  # both graphs run against their rebuilt post-grad modules run eagerly
    assert report.ok, report
    assert len(report.kernels) == sum(len(g.kernels) for g in warm.graphs)
    assert {row.graph for row in report.kernels.values() if any(b.compared for b in row.buffers)} == \
        {g.id for g in warm.graphs}


def test_an_inference_graph_is_served_whole_by_aotautograds_cache_and_checks_against_eager(inductor_cache_dir):
    from torch._dynamo.utils import counters

    torch.manual_seed(0)
    args = (torch.randn(8, 16), torch.randn(16, 16), torch.randn(16))
    cold = explorer.compile(workloads.matmul_epilogue, *args)
    hits = counters["aot_autograd"]["autograd_cache_hit"]
    warm = explorer.compile(workloads.matmul_epilogue, *args)

    assert [g.cache for g in warm.graphs] == ["served"]
    assert counters["aot_autograd"]["autograd_cache_hit"] == hits + 1  # AOTAutograd traced nothing
    assert stage_summary(warm.graphs[0]) == stage_summary(cold.graphs[0])
    # no graph was given to Inductor: the post-grad GraphModule is traced again from the Dynamo graph
    ops = {n.name for n in warm.graphs[0].post_grad.module.graph.nodes if n.op == "call_function"}
    assert ops == {n.name for n in warm.graphs[0].post_grad.nodes if n.op == "call_function"}
    console = Console(file=io.StringIO(), width=120)
    console.print(compact_view(warm))
    assert "1 of 1 graphs served warm" in console.file.getvalue().splitlines()[0]
    report = warm.check_numerics()
    assert report.ok, report
    assert set(report.kernels) == {k.id for k in warm.graphs[0].kernels}
    profile = warm.profile(runs=2)
    assert {k.id for k in warm.graphs[0].kernels} <= set(profile.kernel_ms)


def _seconds(intervals):
    merged = []
    for start, end in sorted(intervals):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return sum(end - start for start, end in merged) / 1e9


def test_a_warm_captures_own_work_is_a_phase_of_its_own_and_every_interval_counts(inductor_cache_dir):
    """c.compile_time's ``served`` phase: the store read and the served stages loaded inside the capture, then the
    post-grad GraphModule traced again when first read, as a ``replay`` call; the capture's ``startup`` (imports,
    settings, the store opened) before torch.compile ran; each second of a call in exactly one row."""
    from compiler.model import phases

    args = (torch.randn(8, 16), torch.randn(16, 16), torch.randn(16))
    explorer.compile(workloads.matmul_epilogue, *args)
    warm = explorer.compile(workloads.matmul_epilogue, *args)
    assert [g.cache for g in warm.graphs] == ["served"]
    [call] = warm.compile_calls
    served = [(s, e) for name, s, e in call.hooks if phases.hook_category(name) == "served"]
    assert {name for name, _, _ in call.hooks if phases.hook_category(name) == "served"} == {
        phases.READING_STORE, phases.LOADING_SERVED}
    report = warm.compile_time
    [capture] = report.root.children
    rows = {p.name: p for p in capture.children if p.category in ("served", "startup")}
    named = [c for c in rows["served"].children if c.name != "other"]
    assert {c.name for c in named} == {phases.READING_STORE, phases.LOADING_SERVED}
    # on a loaded machine the moments between the two are seconds of their own ("other"), in no named row
    assert sum(c.seconds for c in rows["served"].children) == pytest.approx(rows["served"].seconds, abs=1e-6)
    assert rows["served"].seconds == pytest.approx(_seconds(served), abs=1e-6)
    assert [c.name for c in rows["startup"].children] == [phases.STARTING]
    assert rows["startup"].start_s == 0.0  # the report's seconds are rounded to the microsecond
    assert capture.seconds == pytest.approx((call.end_ns - call.start_ns) / 1e9, abs=1e-6)
    assert sum(p.seconds for p in capture.children) == pytest.approx(capture.seconds, abs=1e-5)

    module = warm.graphs[0].post_grad.module  # traced again now, on first read
    assert module is not None and [c.kind for c in warm.compile_calls] == ["capture", "replay"]
    replay = warm.compile_calls[1]
    assert [name for name, _, _ in replay.hooks] == [phases.RETRACING]
    report = warm.compile_time  # built again: it has a call more
    assert [(p.name, [(r.name, [c.name for c in r.children]) for r in p.children]) for p in report.root.children][1] \
        == ("replay", [("served", [phases.RETRACING])])
    assert report.categories()["served"] == pytest.approx(
        rows["served"].seconds + (replay.end_ns - replay.start_ns) / 1e9, abs=1e-5)
    warm.graphs[0].post_grad.module  # read again: nothing traced, nothing added
    assert len(warm.compile_calls) == 2


def test_a_served_graph_keeps_its_wrapper_fx_once_the_cold_capture_built_it(inductor_cache_dir):
    x = torch.randn(64)
    cold = explorer.compile(workloads.reduction_with_pointwise, x)
    served_first = explorer.compile(workloads.reduction_with_pointwise, x)
    assert served_first.graphs[0].wrapper.fx.reason == capture_store.NO_WRAPPER_FX

    built = cold.graphs[0].wrapper.fx  # building it (on the CPU: finding why it cannot be) stores the graph again
    served = explorer.compile(workloads.reduction_with_pointwise, x)
    assert served.graphs[0].cache == "served"
    kept = served.graphs[0].wrapper.fx
    assert (kept.status, kept.reason, kept.nodes) == (built.status, built.reason, built.nodes)
    assert kept.reason != capture_store.NO_WRAPPER_FX


def _double_then_sum(t):
    doubled = t * 2
    return doubled.sum()


def _twice_summed(values):
    twice = values * 2
    return twice.sum()


def test_a_program_of_the_same_graph_written_elsewhere_is_not_served_the_others_stages(inductor_cache_dir):
    """Inductor's key is the same for both (it sees neither names nor lines); their stages are not."""
    x = torch.randn(64)
    first = explorer.compile(_double_then_sum, x)
    other = explorer.compile(_twice_summed, x)
    assert [g.cache for g in (*first.graphs, *other.graphs)] == ["stored", "stored"]
    assert [n.name for n in other.graphs[0].fx.nodes][:1] == ["l_values_"]
    assert {line for k in other.graphs[0].kernels for _, line in k.user_lines} == {
        _twice_summed.__code__.co_firstlineno + 1, _twice_summed.__code__.co_firstlineno + 2}
    assert [g.cache for g in explorer.compile(_twice_summed, x).graphs] == ["served"]


def test_a_capture_writing_a_torch_trace_is_cold(inductor_cache_dir, tmp_path):
    x = torch.randn(64)
    explorer.compile(workloads.reduction_with_pointwise, x)
    logged = explorer.compile(workloads.reduction_with_pointwise, x, trace_dir=tmp_path / "log")
    assert [g.cache for g in logged.graphs] == [""]


def test_cache_false_captures_cold_and_stores_nothing(inductor_cache_dir):
    x = torch.randn(64)
    explorer.compile(workloads.reduction_with_pointwise, x)
    stored = _stored_files(inductor_cache_dir)
    cold = explorer.compile(workloads.reduction_with_pointwise, x, cache=False)
    assert [g.cache for g in cold.graphs] == [""]
    assert _stored_files(inductor_cache_dir) == stored


def test_a_changed_config_or_explorer_makes_the_capture_cold(inductor_cache_dir, monkeypatch):
    x = torch.randn(64)
    explorer.compile(workloads.reduction_with_pointwise, x)
    other_config = explorer.compile(workloads.reduction_with_pointwise, x, config={"max_fusion_size": 2})
    assert [g.cache for g in other_config.graphs] == ["stored"]

    monkeypatch.setattr(capture_store, "stamp", lambda: "another-explorer")
    other_explorer = explorer.compile(workloads.reduction_with_pointwise, x)
    assert [g.cache for g in other_explorer.graphs] == ["stored"]


def test_caches_the_user_turned_off_stay_off_and_config_is_left_as_found(inductor_cache_dir):
    x = torch.randn(64)
    explorer.compile(workloads.reduction_with_pointwise, x)
    import torch._functorch.config as functorch_config

    before = inductor_config.snapshot()
    autograd_cache = functorch_config.enable_autograd_cache
    with torch._inductor.config.patch(force_disable_caches=True):
        off = explorer.compile(workloads.reduction_with_pointwise, x)
    assert [g.cache for g in off.graphs] == [""]
    served = explorer.compile(workloads.reduction_with_pointwise, x)
    assert [g.cache for g in served.graphs] == ["served"]
    assert inductor_config.snapshot() == before
    assert functorch_config.enable_autograd_cache == autograd_cache


def test_a_capture_asking_for_autotuning_times_it_whole_and_lists_only_what_the_user_asked(inductor_cache_dir):
    x = torch.randn(64)
    tuned = explorer.compile(workloads.reduction_with_pointwise, x, config={"coordinate_descent_tuning": True})
    assert [g.cache for g in tuned.graphs] == ["stored"]
    # the capture turned autotuning's cache off for itself; that is no setting of the user's
    assert tuned.inductor_overrides == {"coordinate_descent_tuning": True}
    assert torch._inductor.config.autotune_local_cache is True


def test_a_damaged_store_entry_is_captured_cold_again(inductor_cache_dir):
    x = torch.randn(64)
    explorer.compile(workloads.reduction_with_pointwise, x)
    (entry,) = _stored_files(inductor_cache_dir)
    entry.write_bytes(gzip.compress(b"{not json"))
    again = explorer.compile(workloads.reduction_with_pointwise, x)
    assert [g.cache for g in again.graphs] == ["stored"]
    torch.testing.assert_close(again.outputs, workloads.reduction_with_pointwise(x))
    assert [g.cache for g in explorer.compile(workloads.reduction_with_pointwise, x).graphs] == ["served"]


def test_a_failed_rebuild_leaves_the_module_out_and_says_so(inductor_cache_dir, monkeypatch):
    """A served graph's post-grad GraphModule is traced again when first read; if that fails the warning says
    what is missing and how to get it, and the rest of the graph stays."""
    from torch._inductor import compile_fx

    args = (torch.randn(8, 16), torch.randn(16, 16), torch.randn(16))
    explorer.compile(workloads.matmul_epilogue, *args)
    warm = explorer.compile(workloads.matmul_epilogue, *args)
    assert [g.cache for g in warm.graphs] == ["served"]

    def broken(*_args, **_kwargs):
        raise RuntimeError("no trace today")

    monkeypatch.setattr(compile_fx, "compile_fx", broken)
    with pytest.warns(UserWarning, match=r"post_grad_replay rebuild failed \(RuntimeError: no trace today\); "
                                         r"the served graph's post-grad GraphModule is left out"):
        assert warm.graphs[0].post_grad.module is None
    assert warm.graphs[0].post_grad.nodes and warm.graphs[0].kernels
