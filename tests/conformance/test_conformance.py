"""The conformance slice CI runs (``make conformance`` runs everything): programs whose owners are known,
GPT-2, and a slice of PyTorch's op database, each kernel checked against torch's own records and the
wrapper with no problem allowed; then the four programs' answers asserted exactly."""

from __future__ import annotations

import inspect

import pytest

from . import cases, checks
from .run import run_case

BUILDERS = {**cases.known_cases(), **cases.model_cases(["gpt2"]), **dict(cases.op_cases(cases.SLICE_OPS))}
_results: dict[str, checks.CaseResult] = {}


def result(name: str) -> checks.CaseResult:
    if name not in _results:
        _results[name] = run_case(name, BUILDERS[name])
    return _results[name]


@pytest.mark.parametrize("name", list(BUILDERS))
def test_every_kernel_agrees_with_torchs_records_or_a_rule(name):
    outcome = result(name)
    assert not outcome.error or outcome.error.startswith("skipped"), outcome.error
    assert not outcome.problems, "\n".join(f"[{p.check}] {p.graph}/{p.kernel}: {p.detail}" for p in outcome.problems)


def _line(fn, text):
    source, start = inspect.getsourcelines(fn)
    return (inspect.getsourcefile(fn), start + next(i for i, line in enumerate(source) if text in line))


def test_tour_matmul_line_owns_the_addmm_that_computes_it():
    c = result("tour").compilation
    graph = c.graphs[0]
    addmm = graph.kernel("extern_kernels.addmm")
    assert addmm.post_grad_nodes == [n.name for n in graph.post_grad if n.target.startswith("aten.addmm")]
    assert sorted(addmm.fx_nodes) == ["add", "y"]  # the rewrite's mm brings its FX node
    matmul, bias = _line(cases.tour, "y = x @ w"), _line(cases.tour, "gelu(y + b)")
    assert addmm.user_lines == [bias, matmul]
    assert graph.fx.node("y").kernels == ["extern_kernels.addmm"]
    profile = c.profile(runs=3, warmup=1)
    assert profile.line_ms.get(matmul, 0.0) > 0  # the matmul's line gets time


def test_scatter_of_a_cumsums_sine_the_sine_is_the_kernel_that_computes_it():
    graph = result("scatter_sine").compilation.graphs[0]
    sine_kernels = [k.id for k in graph.kernels if ".sin()" in k.source]
    assert len(sine_kernels) == 1
    assert [k.id for k in graph.kernels if "sin" in k.post_grad_nodes] == sine_kernels
    copy = next(k for k in graph.kernels if "mul" in k.post_grad_nodes)  # x * 2, fused with the copies of x
    assert "sin" not in copy.post_grad_nodes and "cumsum" not in copy.post_grad_nodes
    scatter_add = {k.id for k in graph.kernels if "scatter_add" in k.post_grad_nodes}
    assert scatter_add == {copy.id, "aten.scatter_reduce_.two"}  # the zeros it starts from, then the scatter
    reduce = graph.kernel("aten.scatter_reduce_.two")
    assert reduce.language == "extern" and reduce.wrapper_lines
    assert reduce.user_lines == [_line(cases.scatter_sine, "scatter_add(1, idx, s)")]
    assert graph.kernel(sine_kernels[0]).user_lines == [_line(cases.scatter_sine, "torch.cumsum(x * 2, 1).sin()")]


def test_cond_branch_kernels_claim_their_own_lines_only():
    graph = result("cond_one_line_branches").compilation.graphs[0]
    true_line = _line(cases.one_line_branches, "lambda t: (t - 1) * 2")
    false_line = _line(cases.one_line_branches, "lambda t: t * 3")
    cond_line = _line(cases.one_line_branches, "torch.cond(")

    def kernel_in(prefix):
        return next(k for k in graph.kernels if any(n.startswith(prefix) for n in k.post_grad_nodes))

    assert kernel_in("true_graph_0.").user_lines == [true_line]
    assert kernel_in("false_graph_0.").user_lines == [false_line]
    assert [k.user_lines for k in graph.kernels if not any("." in n for n in k.post_grad_nodes)] == [[cond_line]]


def test_gpt2_qkv_views_belong_to_the_attention_that_reads_them():
    graph = result("gpt2").compilation.graphs[0]
    nodes = {n.name: n for n in graph.post_grad}
    attentions = [n for n in graph.post_grad if "scaled_dot_product" in n.target]
    assert len(attentions) == 2  # one per layer
    for attention in attentions:
        # the extern call computes it; the mask kernel the attention's lowering made computes it in part
        kernel = next(k for k in graph.kernels if attention.name in k.post_grad_nodes and k.language == "extern")
        views, ends = _views_back(attention.name, nodes)
        assert {nodes[n].target for n in ends} >= {"aten.addmm.default"}  # they carve q, k, v out of c_attn's matmul
        split = next(n for n in views if nodes[n].target.startswith("aten.split"))
        assert views <= set(kernel.post_grad_nodes)
        assert [k.id for k in graph.kernels if k is not kernel and views & set(k.post_grad_nodes)] == []
        assert [n for n in kernel.post_grad_nodes if n != attention.name and n not in views] == []
        assert graph.fx.node(nodes[split].fx[0]).user_line in kernel.user_lines  # the line of the split
    mask = next(k for k in graph.kernels if k.language != "extern" and "where" in " ".join(k.post_grad_nodes))
    assert not any(nodes[n].target.startswith(("aten.split", "aten.permute")) for n in mask.post_grad_nodes)


def _views_back(name, nodes):
    """The views between a node and the values it reads (walking back through views only), and the nodes
    where the walk stops."""
    views, ends, stack = set(), set(), list(nodes[name].inputs)
    while stack:
        current = stack.pop()
        if current in views or current not in nodes:
            continue
        if checks.returns_alias(nodes[current].target):
            views.add(current)
            stack.extend(nodes[current].inputs)
        else:
            ends.add(current)
    return views, ends
