"""The compile-time report's builder on synthetic torch timer events (no compile): nesting spans logged from
worker threads, the explorer's own time, kernel charges from autotuning, and rank divergence by phase."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from compiler.model.compile_time import CompileCall
from compiler.model.compile_time_build import build
from compiler.model.stages import FxNode
from compiler.model.traceset import compile_time_divergence


def _check_sums(phase, tolerance=1e-6):
    if phase.children:
        total = sum(child.seconds for child in phase.children)
        assert abs(total - phase.seconds) <= tolerance * phase.seconds + 1e-5, (phase, total)
    for child in phase.children:
        _check_sums(child, tolerance)


def _call(rank_scale: float) -> CompileCall:
    """A synthetic call: a frame whose Inductor work ran partly on a worker thread that overlaps it."""
    def us(seconds: float) -> float:
        return seconds * 1e6 * rank_scale

    events = [
        {"name": "dynamo", "ph": "B", "ts": us(0), "args": {"compile_id": "0/0"}},
        {"name": "GraphLowering.run", "ph": "B", "ts": us(1), "args": {"compile_id": "0/0"}},
        {"name": "compile_file", "ph": "B", "ts": us(1.5), "args": {"compile_id": "None"}},  # worker thread
        {"name": "GraphLowering.run", "ph": "E", "ts": us(2), "args": {"compile_id": "0/0"}},
        {"name": "compile_file", "ph": "E", "ts": us(3), "args": {"compile_id": "None"}},
        {"name": "dynamo", "ph": "E", "ts": us(4), "args": {"compile_id": "0/0"}},
    ]
    return CompileCall("log", 0, int(5e9 * rank_scale), events, [("hook", int(1.2e9 * rank_scale), int(1.4e9 * rank_scale))])


def test_overlapping_thread_spans_never_exceed_their_parent_and_ranks_diverge_by_phase():
    report = build([_call(1.0)], [])
    _check_sums(report.root, tolerance=1e-6)
    lowering = report.root.walk().__next__().find("GraphLowering.run")[0]
    assert lowering.seconds == pytest.approx(0.8)  # 1 s, less the explorer's 0.2 s inside it
    assert report.explorer_s == pytest.approx(0.2) and report.seconds == pytest.approx(5.0)
    slow = build([_call(3.0)], [])
    found = compile_time_divergence({"0": report, "1": build([_call(1.0)], []), "2": slow})
    assert found and all(d.kind == "compile_phase" and "rank 2" in d.summary for d in found)


def span(name, begin, end, **args):
    """A torch timer's begin and end events (seconds), in frame 0/0."""
    return [{"name": name, "ph": "B", "ts": begin * 1e6, "args": {"compile_id": "0/0", **args}},
            {"name": name, "ph": "E", "ts": end * 1e6, "args": {"compile_id": "0/0", **args}}]


def _kernel(kernel_id, node, fx_node, line):
    return SimpleNamespace(id=kernel_id, name=kernel_id, language="triton", post_grad_nodes=[node],
                           fx_nodes=[fx_node], user_lines=[("model.py", line)])


def _post_grad(kernels):
    """The post-grad graph of stub kernels: each one's node, made from its FX node."""
    return SimpleNamespace(nodes=[FxNode(name=k.post_grad_nodes[0], op="call_function", target="aten.add.Tensor",
                                         fx=list(k.fx_nodes)) for k in kernels])


def test_autotuning_is_charged_to_the_kernel_of_its_nodes_and_config_benchmarks_by_name():
    """GPU-shaped events on the CPU: a matmul's template autotuning (owned by the nodes Inductor reported
    its results for) and a Triton kernel's config benchmark at its first launch (named in its metadata)."""
    graph = SimpleNamespace(
        id="g0", compile_id="0/0", kind="forward", autotune=[],
        kernels=[_kernel("triton_tem_fused_mm_0", "mm", "matmul", 3), _kernel("triton_poi_fused_relu_1", "relu", "relu", 4)],
        fx=SimpleNamespace(nodes=[SimpleNamespace(name="matmul", op="call_function", user_line=("model.py", 3), module="lin"),
                                  SimpleNamespace(name="relu", op="call_function", user_line=("model.py", 4), module="")]))
    graph.post_grad = _post_grad(graph.kernels)

    events = (span("inductor_compile", 0, 6, is_backward=False)[:1] + span("Scheduler.__init__", 1, 5)[:1]
              + span("mm_template_precompiling", 1, 2) + span("mm_template_autotuning", 2, 4)
              + span("Scheduler.__init__", 1, 5)[1:] + span("inductor_compile", 0, 6, is_backward=False)[1:]
              + span("CachingAutotuner.benchmark_all_configs", 7, 8, kernel_name="triton_poi_fused_relu_1"))
    call = CompileCall("capture", 0, int(10e9), events, autotune_owners=[(int(4.001e9), 0, ("mm",), 5)])
    report = build([call], [graph])
    tuned = {k.kernel: k for k in report.kernels}
    assert tuned["triton_tem_fused_mm_0"].autotune_s == pytest.approx(3.0)
    assert tuned["triton_tem_fused_mm_0"].candidates == 5
    assert tuned["triton_poi_fused_relu_1"].autotune_s == pytest.approx(1.0)
    lines = {row.line: row for row in report.lines}
    assert lines[3].kernel_s == pytest.approx(3.0) and lines[4].kernel_s == pytest.approx(1.0)
    # the graph's own 3 s (6 s less its kernels' 3 s) are spread over its two nodes
    assert lines[3].spread_s == pytest.approx(1.5) and lines[4].spread_s == pytest.approx(1.5)
    assert report.categories()["autotune"] == pytest.approx(4.0)
    assert [s.kind for s in report.suggestions] == ["autotuning"]


def test_an_autotuning_names_its_matmul_by_the_shapes_torch_logged():
    """``autotune_shape`` (a bias first for addmm) picks the kernel computing the product of those operands."""
    import explorer
    from compiler.model.compile_time_kernels import kernels_of_shape as _kernels_of_shape
    from tests.paths import FIXTURES

    graph = explorer.load(FIXTURES / "gpu_max_autotune.json").graphs[0]
    [template] = [k.id for k in _kernels_of_shape(graph, "256x128, 128x192")]
    assert template == "triton_tem_fused_add_gelu_mm_0"
    assert [k.id for k in _kernels_of_shape(graph, "256x192, 256x128, 128x192")] == [template]  # addmm's bias
    assert _kernels_of_shape(graph, "128x256, 256x192") == [] and _kernels_of_shape(graph, None) == []


def test_a_cache_hit_says_how_much_compiling_it_saved():
    """torch's ``fx_graph_cache_hit`` instant (stamped at the compile's start) carries ``time_saved_ns``:
    the graph's ``inductor_compile`` phase keeps it, and the report adds up every hit's saving."""
    def hit(at, saved_s):
        return {"name": "fx_graph_cache_hit", "ph": "i", "ts": at * 1e6, "args": {"time_saved_ns": int(saved_s * 1e9)}}

    events = (span("dynamo", 0, 4)[:1] + span("inductor_compile", 1.0, 1.2, cache_state="hit") + [hit(0.99, 7.5)]
              + span("inductor_compile", 2.0, 2.1, cache_state="hit") + [hit(2.0, 1.25)]
              + span("inductor_compile", 3.0, 3.5, cache_state="miss") + span("dynamo", 0, 4)[1:])
    report = build([CompileCall("log", 0, int(4e9), events)], [])
    compiles = report.root.find("inductor_compile")
    assert [p.args.get("cache_time_saved_s") for p in compiles] == [7.5, 1.25, None]
    assert report.cache_time_saved_s == pytest.approx(8.75)
    assert build([_call(1.0)], []).cache_time_saved_s == 0.0


def test_a_graphs_wait_for_its_kernel_builds_is_split_by_what_each_build_took():
    """torch times a graph's wait for its Triton builds (``async_compile.wait``) and, per kernel, the build
    in its compile worker (``triton_kernel_info``): each kernel gets the wait's share of its build, the
    graph keeps the rest, and the lines' charges still add up to the graph's compile."""
    from compiler.model.compile_time_build import kernel_builds_event

    graph = SimpleNamespace(
        id="g0", compile_id="0/0", kind="inference", autotune=[],
        kernels=[_kernel("triton_poi_fused_add_0", "add", "add", 3), _kernel("triton_per_fused_sum_1", "sum", "sum", 4)],
        fx=SimpleNamespace(nodes=[SimpleNamespace(name="add", op="call_function", user_line=("model.py", 3), module=""),
                                  SimpleNamespace(name="sum", op="call_function", user_line=("model.py", 4), module="")]))
    graph.post_grad = _post_grad(graph.kernels)

    builds = kernel_builds_event({"triton_poi_fused_add_0": {"compile_time_us": 300_000, "num_warps": 4},
                                  "triton_per_fused_sum_1": {"compile_time_us": 100_000},
                                  "triton_other_graph_9": {"compile_time_us": 50_000}}, 5.0e6, "0/0")
    events = (span("inductor_compile", 0, 6, is_backward=False)[:1] + span("async_compile.wait", 4, 5)
              + [builds] + span("inductor_compile", 0, 6, is_backward=False)[1:])
    report = build([CompileCall("capture", 0, int(6e9), events)], [graph])
    kernels = {k.kernel: k for k in report.kernels}
    assert kernels["triton_poi_fused_add_0"].compile_s == pytest.approx(0.75)
    assert kernels["triton_per_fused_sum_1"].compile_s == pytest.approx(0.25)
    assert (kernels["triton_poi_fused_add_0"].build_s, kernels["triton_per_fused_sum_1"].build_s) == (0.3, 0.1)
    lines = {row.line: row for row in report.lines}
    assert lines[3].kernel_s == pytest.approx(0.75) and lines[4].kernel_s == pytest.approx(0.25)
    assert sum(row.seconds for row in report.lines) == pytest.approx(6.0)  # nothing charged twice
    assert kernel_builds_event({"k": {"num_warps": 4}}, 1.0, None) is None  # no build time: no event


def test_a_captures_startup_and_a_warm_captures_own_work_are_rows_of_their_own_each_second_once():
    """A call of 5 s: 1 s starting (imports, settings), Dynamo 1-3 s, collecting the stages 3-5 s, inside which
    0.5 s loaded a served graph's stages: that half second is the ``served`` row's, not also the explorer's."""
    from compiler.model import phases

    s = 1_000_000_000
    events = [{"name": "dynamo", "ph": "B", "ts": 1e6, "args": {"compile_id": "0/0"}},
              {"name": "dynamo", "ph": "E", "ts": 3e6, "args": {"compile_id": "0/0"}}]
    hooks = [(phases.STARTING, 0, s), ("collecting stages", 3 * s, 5 * s), (phases.LOADING_SERVED, 3 * s + s // 2, 4 * s)]
    report = build([CompileCall("capture", 0, 5 * s, events, hooks)], [])
    [call] = report.root.children
    assert [(p.name, p.seconds, [(c.name, c.seconds) for c in p.children]) for p in call.children] == [
        ("dynamo", 2.0, []),
        ("startup", 1.0, [(phases.STARTING, 1.0)]),
        ("explorer", 1.5, [("collecting stages", 1.5)]),
        ("served", 0.5, [(phases.LOADING_SERVED, 0.5)])]
    assert report.categories() == {"startup": 1.0, "dynamo": 2.0, "served": 0.5, "explorer": 1.5}
    assert sum(report.categories().values()) == report.seconds == 5.0
    assert report.explorer_s == 1.5
