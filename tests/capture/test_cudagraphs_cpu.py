"""``mode="reduce-overhead"`` on the CPU: compiled as torch.compile compiles it there (no CUDA graphs), and the
compilation says that CUDA graphs need a GPU; a bad mode is refused before anything compiles."""

from __future__ import annotations

import pytest
import torch

import explorer
from compiler import CudaGraphFixError, ToggleError
from compiler._torch import inductor_config
from compiler.model.cudagraphs import CudaGraphState
from compiler.runs.cudagraph_time import CudaGraphsNotMeasurable
from tests import workloads


@pytest.fixture(scope="module")
def compiled():
    torch.manual_seed(0)
    x, state = torch.randn(16, 16), torch.zeros(16, 16)
    c = explorer.compile(workloads.mutates_state, x, state.clone(), mode="reduce-overhead", cache=False)
    return c, x, state


def test_reduce_overhead_on_the_cpu_compiles_as_torch_compile_does_and_says_gpus_only(compiled):
    c, x, state = compiled
    torch._dynamo.reset()
    plain_state = state.clone()
    expected = torch.compile(workloads.mutates_state, mode="reduce-overhead")(x, plain_state)  # torch's own
    torch.testing.assert_close(c.outputs, expected)
    assert c.toggles == {"cudagraphs": True} and c.inductor_overrides.get("triton.cudagraphs") is True
    (graph,) = c.graphs
    assert graph.cudagraphs.state == CudaGraphState.NO_GPU and graph.cudagraphs.events == []
    (note,) = [n for n in c.notes if n.source == "triton.cudagraphs"]
    assert note.message.startswith("CUDA graphs need a GPU: mutates_state runs on cpu (graph g0)")
    # the scheduler's one partition holds every fused group, each left out as a CPU op
    (partition,) = graph.cudagraphs.partitions
    assert partition.nodes == [g.name for g in graph.fused] and not partition.captured
    assert {r.reason for r in partition.reasons} == {"cpu ops"}
    assert sorted(partition.kernels) == sorted(k.id for k in graph.kernels)
    assert graph.cudagraphs.user_inputs == {n.name: i for i, n in enumerate(
        n for n in graph.post_grad.nodes if n.op == "placeholder")}


def test_nothing_to_time_or_fix_without_a_gpu_and_the_views_say_why(compiled):
    c, _, _ = compiled
    with pytest.raises(CudaGraphsNotMeasurable, match="CUDA graphs need a GPU: mutates_state runs on cpu"):
        c.cudagraphs.measure()
    with pytest.raises(CudaGraphFixError, match="CUDA graphs need a GPU"):
        c.cudagraphs.what_if()
    from rich.console import Console

    from compiler.api import compact_view

    console = Console(record=True, width=120)
    console.print(compact_view(c))
    assert "CUDA graphs: none on cpu (they need a GPU)" in console.export_text()


def test_a_saved_reduce_overhead_trace_loads_the_same(compiled, tmp_path):
    c, _, _ = compiled
    loaded = explorer.load(c.save(tmp_path / "t.json"))
    assert loaded.to_json()["graphs"][0]["cudagraphs"] == c.to_json()["graphs"][0]["cudagraphs"]
    assert loaded.graphs[0].cudagraphs.graph is loaded.graphs[0]


def test_config_wins_over_the_mode_and_without_cuda_graphs_nothing_is_kept():
    c = explorer.compile(workloads.reduction_with_pointwise, torch.randn(8, 8), mode="reduce-overhead",
                         config={"cudagraphs": False}, cache=False)
    assert c.toggles == {"cudagraphs": False}
    assert [g.cudagraphs for g in c.graphs] == [None]
    assert not [n for n in c.notes if n.source == "triton.cudagraphs"]


def test_an_unknown_mode_is_refused_before_anything_compiles():
    before = inductor_config.get("triton.cudagraphs")
    with pytest.raises(ToggleError, match=r"unknown mode 'reduce_overhead' \(did you mean 'reduce-overhead'\?\); "
                                          r"torch.compile's modes here: .*max-autotune"):
        explorer.compile(workloads.reduction_with_pointwise, torch.randn(8, 8), mode="reduce_overhead")
    with pytest.raises(ToggleError, match="mode must be a string"):
        explorer.compile(workloads.reduction_with_pointwise, torch.randn(8, 8), mode=1)
    assert inductor_config.get("triton.cudagraphs") == before


def test_a_watch_of_a_cpu_loop_sees_no_cuda_graph_event():
    torch._dynamo.reset()
    compiled = torch.compile(workloads.reduction_with_pointwise, mode="reduce-overhead")
    with explorer.watch(live=False) as w:
        for x in w.steps_of([torch.randn(8, 8) for _ in range(3)]):
            compiled(x)
    assert w.cudagraph_events == []
    (frame,) = w.frames
    assert frame.calls == 3 and frame.cudagraph_replays == 0 and not frame.replays_cuda_graphs
