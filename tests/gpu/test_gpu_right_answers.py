"""GPU: kernels own the nodes they compute (cuBLAS matmuls, Triton templates under max-autotune, a
``torch.cond`` branch), line times follow, identical compiles diff as ``same``, runs never compile.

Run with `pytest -m gpu` on a CUDA machine. The truth is read off the post-grad graph: the nodes
written on a line that compute something.
"""

from __future__ import annotations

import pytest
import torch
from torch._dynamo.utils import counters

import explorer
from compiler.model import provenance
from compiler.runs.replay import NotRunnableError
from tests import workloads
from tests.capture.test_right_answers import FC1_LINE, FC2_LINE, LN_LINE, _computed_on, _line

pytestmark = pytest.mark.gpu


def _owners(graph) -> dict[str, str]:
    """Computing post-grad node -> the one kernel that lists it (fails on a node two kernels list; a view is
    listed by each kernel that reads it)."""
    owners: dict[str, str] = {}
    views = {n.name for n in graph.post_grad.nodes if provenance.is_view(n)}
    for kernel in graph.kernels:
        for node in (n for n in kernel.post_grad_nodes if n not in views):
            assert node not in owners, f"{node} claimed by {owners[node]} and {kernel.id}"
            owners[node] = kernel.id
    return owners


def _on_line(graph, line, subgraph=None) -> set[str]:
    """The kernels that own the nodes computed on ``line``."""
    owners = _owners(graph)
    return {owners[n] for n in _computed_on(graph, line, subgraph) if n in owners}


@pytest.fixture(scope="module")
def mlp():
    torch.manual_seed(0)
    model, x = workloads.LayerNormMLP().cuda(), torch.randn(64, 96, device="cuda")
    with torch.no_grad():
        c = explorer.compile(model, x)
    return c, model, x


def test_cublas_matmuls_own_only_their_matmul(mlp):
    c, _, _ = mlp
    graph = c.graphs[0]
    owners = _owners(graph)
    assert c.provenance().complete and not c.provenance().shared
    externs = [k for k in graph.kernels if k.language == "extern"]
    assert len(externs) == 2
    for kernel in externs:
        computing = provenance.computing_nodes(kernel, {n.name: n for n in graph.post_grad.nodes})
        assert [graph.post_grad.node(n).target.split(".")[1] for n in computing] in (["mm"], ["addmm"])
    assert _on_line(graph, LN_LINE) == {next(k.id for k in graph.kernels if "layer_norm" in k.name)}
    for line in (LN_LINE, FC1_LINE, FC2_LINE):  # every computed node has exactly one owner
        assert _computed_on(graph, line) <= set(owners), line


def test_line_times_on_the_gpu_are_their_kernels_times(mlp):
    c, _, _ = mlp
    graph = c.graphs[0]
    p = c.profile(runs=10, warmup=2)
    for line in (LN_LINE, FC1_LINE, FC2_LINE):
        kernels = _on_line(graph, line)
        assert p.line_ms[line] == pytest.approx(sum(p.kernel_ms[k] for k in kernels), rel=1e-6), line
    assert all(p.kernel_ms[k.id] > 0 for k in graph.kernels)


def test_identical_gpu_compiles_diff_as_all_same(mlp):
    c, model, x = mlp
    with torch.no_grad():
        again = explorer.compile(model, x)
    diff = explorer.diff(c, again)
    assert diff.counts()["same"] == len(c.graphs[0].kernels) and diff.counts()["changed"] == 0


def test_gpu_runs_never_compile(mlp):
    c, _, _ = mlp
    before, graphs = counters["frames"]["total"], len(c.graphs)
    with pytest.raises(NotRunnableError, match=r"input 0 has shape \[8, 96\] where the capture had \[64, 96\]"):
        c.run(torch.randn(8, 96, device="cuda"))
    with pytest.raises(NotRunnableError, match="device cpu where the capture had cuda:0"):
        c.run(torch.randn(64, 96))
    assert torch.is_grad_enabled()  # the capture was under no_grad: every run replays it
    c.run()
    c.bench()
    c.check_numerics()
    c.check_determinism(runs=2)
    assert counters["frames"]["total"] == before and len(c.graphs) == graphs


def test_a_triton_template_owns_its_matmul_and_epilogue():
    torch.manual_seed(0)
    args = (torch.randn(256, 128, device="cuda"), torch.randn(128, 192, device="cuda"), torch.randn(192, device="cuda"))
    c = explorer.compile(workloads.matmul_epilogue, *args,
                         config={"max_autotune": True, "max_autotune_gemm_backends": "TRITON"})
    graph = c.graphs[0]
    owners = _owners(graph)
    [template] = [k for k in graph.kernels if k.language == "template"]
    matmul_line = _line(workloads.matmul_epilogue, "y = x @ w")
    epilogue_line = _line(workloads.matmul_epilogue, "gelu(y + b)")
    assert _computed_on(graph, matmul_line) <= set(template.post_grad_nodes)
    assert set(template.post_grad_nodes) <= _computed_on(graph, matmul_line) | _computed_on(graph, epilogue_line)
    assert _computed_on(graph, epilogue_line) <= set(owners)
    assert c.provenance().complete and not c.provenance().shared


def test_a_gpu_branch_kernel_owns_its_branch_and_is_compared():
    torch.manual_seed(0)
    c = explorer.compile(workloads.cond_after_work, torch.randn(256, 256, device="cuda"), torch.ones(4, device="cuda"))
    graph = c.graphs[0]
    true_line = _line(workloads._cancelling_branch, "return")
    [branch] = _on_line(graph, true_line, "true_graph_0")
    kernel = graph.kernel(branch)
    assert set(kernel.post_grad_nodes) == _computed_on(graph, true_line, "true_graph_0")
    assert kernel.user_lines[0] == true_line
    report = c.check_numerics()
    assert report.kernels[branch].compared and report.first_divergent == branch


def test_a_gpu_sort_owns_only_its_own_op():
    c = explorer.compile(workloads.sort_after_pointwise, torch.randn(64, 4096, device="cuda"))
    graph = c.graphs[0]
    line = _line(workloads.sort_after_pointwise, "torch.sort(")
    producer_line = _line(workloads.sort_after_pointwise, "y = x * 2 + 1")
    sorting = _on_line(graph, line)
    assert sorting and not sorting & _on_line(graph, producer_line)  # the sort never claims its input's kernel
    for kernel in sorting:
        assert set(graph.kernel(kernel).post_grad_nodes) <= _computed_on(graph, line) | {
            n.name for n in graph.post_grad.nodes if provenance.is_view(n)}
    assert c.provenance().complete


def test_a_frame_dynamo_skips_on_the_gpu_says_it_ran_eagerly():
    x = torch.randn(8, device="cuda")
    c = explorer.compile(workloads.print_in_loop, x)
    assert torch.equal(c.outputs, x * 8 + 1) and c.graphs == []
    [frame] = c.skipped_frames
    assert frame.function == "print_in_loop" and frame.skipped.startswith("graph break in loop: ")
    [graph_break] = c.graph_breaks
    assert graph_break.reason == "Failed to trace builtin operator" and graph_break.frame_skipped == frame.skipped
    [data_dependent] = explorer.compile(workloads.data_dependent_if, x).graph_breaks
    assert data_dependent.reason == "Data-dependent branching" and not data_dependent.frame_skipped
