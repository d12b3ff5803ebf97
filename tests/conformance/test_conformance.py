"""The conformance slice CI runs (``make conformance`` runs everything): programs whose owners are known,
GPT-2, Llama, T5's encoder and a slice of PyTorch's op database, each kernel checked against torch's own
records and the wrapper with no problem allowed; then the programs' and the models' answers asserted
exactly (tests/conformance/expectations.py holds the models' checks the GPU test makes too)."""

from __future__ import annotations

import inspect

import pytest

from . import cases, checks, expectations
from .run import run_case

BUILDERS = {**cases.known_cases(), **cases.model_cases(cases.SLICE_MODELS), "t5_encoder": cases.t5_encoder,
            **dict(cases.op_cases(cases.SLICE_OPS))}
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
        outputs = {u for u in attention.users if nodes[u].target == "operator.getitem"}  # written out by the call
        assert [n for n in kernel.post_grad_nodes if n != attention.name and n not in views | outputs] == []
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


def test_a_query_kernel_claims_none_of_the_mask_its_lowering_lists():
    """Both attentions' lowerings realize a query and a mask; Inductor gives the buffers of each the origins
    of both. The kernel writing ``cos``, the second query, computes it alone (and the second attention in
    part: its query); the masks, with their lines, are the first kernel's."""
    graph = result("masked_attention_twice").compilation.graphs[0]
    second = next(n.name for n in graph.post_grad if n.target.startswith("aten._scaled_dot_product")
                  and "cos" in n.inputs)
    query = next(k for k in graph.kernels if "cos" in k.post_grad_nodes)
    assert sorted(query.post_grad_nodes) == sorted(["cos", second])
    assert sorted(query.fx_nodes) == ["cos", "scaled_dot_product_attention_1"]
    assert query.user_lines == [_line(cases.masked_attention_twice, "return F.scaled_dot_product_attention")]
    masks = next(k for k in graph.kernels if "sin" in k.post_grad_nodes)
    mask_nodes = {"iota", "le", "eq", "bitwise_and", "where", "where_1", "full_default", "full_default_1",
                  "full_default_2", "full_default_3", "unsqueeze", "unsqueeze_1", "unsqueeze_2", "unsqueeze_3"}
    assert mask_nodes <= set(masks.post_grad_nodes)
    assert [k.id for k in graph.kernels if mask_nodes & set(k.post_grad_nodes)] == [masks.id]
    mask_line = _line(cases.masked_attention_twice, "mask = (pos")
    assert [k.id for k in graph.kernels if mask_line in k.user_lines] == [masks.id]


def test_each_write_back_links_to_the_value_it_writes():
    """Functionalization writes ``a`` back with ``copy_`` and ``b`` with ``copy__1`` (the inputs' order);
    Dynamo named ``b.copy_`` ``copy_`` and ``a.copy_`` ``copy__1`` (program order), on one line."""
    graph = result("write_backs_in_a_loop").compilation.graphs[0]
    fx = {n.name: n for n in graph.fx}
    write_backs = {n.inputs[0]: n for n in graph.post_grad if n.target.startswith("aten.copy_")}
    a, b = (graph.post_grad.node(name).fx for name in ("arg0_1", "arg1_1"))
    assert (a, b) == (["l_a_"], ["l_b_"])
    assert write_backs["arg0_1"].fx == ["mul_1", "copy__1"] and fx["copy__1"].inputs[0] == "l_a_"
    assert write_backs["arg1_1"].fx == ["mul", "copy_"] and fx["copy_"].inputs[0] == "l_b_"


def test_an_adamw_step_written_out_links_each_write_back_to_its_own_update():
    """Every update of the loop is on the same lines: each parameter's and moment's write-back links to the
    last in-place call on that tensor (by Dynamo's chain of in-place calls), and to nothing of the others."""
    graph = result("adamw_by_hand").compilation.graphs[0]
    fx = {n.name: n for n in graph.fx}

    def written(name):  # the Dynamo input an in-place call writes, following the chain of in-place calls
        while fx[name].op != "placeholder":
            name = fx[name].inputs[0]
        return name

    write_backs = [n for n in graph.post_grad if n.target.startswith("aten.copy_")]
    assert len(write_backs) == 9  # three parameters, their means and their squares
    for node in write_backs:
        target = graph.post_grad.node(node.inputs[0]).fx
        calls = [f for f in node.fx if fx[f].target.endswith("_")]
        assert calls and {written(f) for f in calls} == set(target), (node.name, node.fx, target)


def test_a_call_nothing_uses_reaches_no_kernel():
    graph = result("unused_twin").compilation.graphs[0]
    (kernel,) = graph.kernels
    assert sorted(kernel.post_grad_nodes) == ["add", "iota"] and sorted(kernel.fx_nodes) == ["add", "rows"]
    assert graph.fx.node("unused").kernels == [] and graph.fx.node("rows").kernels == [kernel.id]


def test_gpt2_attention_output_goes_with_the_attention_and_every_kernel_tells_one_story():
    """The ``getitem`` of each attention's output is written out of the call's result: the attention's kernel
    lists it with its FX nodes, and the projection reading it lists only the views the model wrote. Every
    kernel's FX nodes hold those of each post-grad node it lists."""
    graph = result("gpt2").compilation.graphs[0]
    nodes = {n.name: n for n in graph.post_grad}
    for attention in (n for n in graph.post_grad if "scaled_dot_product" in n.target):
        kernel = next(k for k in graph.kernels if attention.name in k.post_grad_nodes and k.language == "extern")
        output = next(u for u in attention.users if nodes[u].target == "operator.getitem")
        assert output in kernel.post_grad_nodes and set(nodes[output].fx) <= set(kernel.fx_nodes)
        assert [k.id for k in graph.kernels if output in k.post_grad_nodes] == [kernel.id]
    for kernel in graph.kernels:
        for name in kernel.post_grad_nodes:
            assert set(nodes[name].fx) <= set(kernel.fx_nodes), (kernel.id, name, nodes[name].fx)


def test_a_sorts_outputs_go_with_the_sort():
    graph = result("scatter_sine").compilation.graphs[0]
    sort = next(k for k in graph.kernels if "sort" in k.post_grad_nodes)
    getitems = [n.name for n in graph.post_grad if n.target == "operator.getitem"]
    assert sorted(sort.post_grad_nodes) == sorted(["sort", *getitems]) and sort.fx_nodes == ["sort"]
    assert graph.kernel("aten.scatter_reduce_.two").post_grad_nodes == ["scatter_add"]


@pytest.mark.parametrize("name,op", [("masked_attention_twice", "sin"), ("masked_attention_twice", "cos"),
                                     ("scatter_sine", "sin"), ("write_backs_in_a_loop", "cos"),
                                     ("llama", "sin"), ("llama", "cos")])
def test_a_kernel_lists_a_sine_or_cosine_exactly_when_its_code_computes_one(name, op):
    """The generated code is the oracle: a C++ kernel computes ``sin``/``cos`` where its source calls it;
    Llama's rotary embedding is inlined into the kernel of each attention that applies it."""
    graph = result(name).compilation.graphs[0]
    expectations.kernels_list_a_function_exactly_where_their_code_calls_it(graph, op)
    if name == "llama":
        assert len({k.id for k in graph.kernels if any(n.startswith(op) for n in k.post_grad_nodes)}) > 1


def test_a_scaled_index_put_is_credited_to_both_kernels_that_compute_the_scale():
    """``y = index_put(...) * 2`` is written to no buffer: the kernel summing it and the kernel adding the
    cumsum (after the extern cumsum, so the two cannot fuse) each multiply by 2 themselves."""
    graph = result("index_put_scaled_twice").compilation.graphs[0]
    first, cumsum, last = graph.kernels
    assert cumsum.language == "extern" and cumsum.post_grad_nodes == ["cumsum"]
    assert sorted(first.post_grad_nodes) == ["index_put", "mul", "sum_1"]
    assert sorted(last.post_grad_nodes) == ["add", "mul", "unsqueeze"]
    assert sorted(first.fx_nodes) == ["index_put", "sum_1", "y"] and sorted(last.fx_nodes) == ["add", "getitem", "y"]
    scale, tail = (_line(cases.index_put_scaled_twice, t) for t in ("y = x.index_put", "return y + s"))
    assert scale in first.user_lines and sorted(last.user_lines) == [scale, tail]
    for kernel in (first, last):  # the generated code multiplies by the 2 of each
        assert "static_cast<float>(2.0)" in kernel.source, kernel.id


def test_llamas_fused_residual_add_and_rmsnorm_kernels_list_the_layers_lines():
    from transformers.models.llama import modeling_llama as llama

    graph = result("llama").compilation.graphs[0]
    forward = llama.LlamaRMSNorm.forward
    norm = {expectations.source_line(forward, t) for t in ("variance = ", "* torch.rsqrt(", "return self.weight")}
    residual = set(expectations.source_lines(llama.LlamaDecoderLayer.forward, "hidden_states = residual + hidden_states"))
    assert len(residual) == 2  # after the attention and after the MLP
    expectations.norm_kernels_list_their_layers_lines(graph, norm, residual)


def test_t5s_fused_residual_add_and_rmsnorm_kernels_list_the_layers_lines():
    from transformers.models.t5 import modeling_t5 as t5

    graph = result("t5_encoder").compilation.graphs[0]
    forward = t5.T5LayerNorm.forward
    norm = {expectations.source_line(forward, t) for t in ("variance = ", "* torch.rsqrt(", "return self.weight")}
    residual = {expectations.source_line(t5.T5LayerSelfAttention.forward, "hidden_states + self.dropout("),
                expectations.source_line(t5.T5LayerFF.forward, "hidden_states + self.dropout(")}
    expectations.norm_kernels_list_their_layers_lines(graph, norm, residual)


def test_llamas_attention_output_transpose_and_views():
    """The kernel reading each attention's output lists ``sdpa_attention.py``'s transpose; every kernel's FX
    nodes hold those of the nodes it lists; the mask the attentions read stays with the kernel writing it."""
    from transformers.integrations import sdpa_attention

    graph = result("llama").compilation.graphs[0]
    transpose = expectations.source_line(sdpa_attention.sdpa_attention_forward, "attn_output.transpose(1, 2)")
    expectations.attention_output_kernels_list_the_transpose(graph, transpose)
    expectations.fx_nodes_hold_those_of_every_listed_node(graph)
    expectations.attention_masks_stay_with_the_kernel_writing_them(graph)
