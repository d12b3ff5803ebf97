"""The ownership rule (compiler/pipeline/ownership.py, docs/ownership.md) on small graphs written out by
hand, each the shape of a case met in a real model: what Inductor lists, and what each node computes."""

from __future__ import annotations

import torch
import torch.fx

from compiler.pipeline import ownership, wrapper_code
from compiler.pipeline.fx_stage import _erased_for, _folded_factories, _merged_calls, fx_stage
from compiler.model.stages import FxNode, FxStage, LoopIRNode

F32 = "torch.float32"


def node(name, target, inputs=(), shape=(8, 16), dtype=F32, op="call_function", subgraph=None, line=None, fx=()):
    return FxNode(name=name, op=op, target=target, inputs=list(inputs), shape=list(shape) if shape is not None else None,
                  dtype=dtype, subgraph=subgraph, user_line=line, fx=list(fx))


def graph(*nodes):
    by_name = {n.name: n for n in nodes}
    for n in nodes:
        for i in n.inputs:
            if i in by_name:
                by_name[i].users.append(n.name)
    return by_name


def record(name, origins, reads, buffers, kind="pointwise", held=None):
    return {"name": name, "kind": kind, "origins": list(origins), "reads": list(reads), "buffers": list(buffers),
            "buffer_nodes": dict(held or {})}


# torch.scatter(x, 1, order, torch.cumsum(x * 2, 1).sin()): the scatter's lowering copies x (op6) and
# scatters into the copy (op7), and both list everything handed to it, the sine included
SCATTER = graph(
    node("arg0_1", "arg0_1", op="placeholder"), node("arg1_1", "arg1_1", op="placeholder", dtype="torch.int64"),
    node("mul", "aten.mul.Tensor", ["arg0_1"]), node("cumsum", "aten.cumsum.default", ["mul"]),
    node("sin", "aten.sin.default", ["cumsum"]), node("scatter", "aten.scatter.src", ["arg0_1", "arg1_1", "sin"]),
)


def scatter_records():
    return [record("op3", ["mul"], ["arg0_1[c0]"], ["buf3"], held={"buf3": "mul"}),
            record("op4", ["cumsum", "mul"], ["buf3[*]"], ["buf4"], kind="extern", held={"buf4": "cumsum"}),
            record("op6", ["scatter", "sin"], ["arg0_1[c0]"], ["buf6"], held={"buf6": "scatter"}),
            record("op7", ["scatter", "sin"], ["arg1_1[c0]", "buf4[c0]", "buf6[*]"], ["buf7"])]


def test_a_node_computes_only_what_its_reads_make_available():
    records = scatter_records()
    ownership.split_origins(records, {"op3": "mul", "op4": "cumsum", "op6": "scatter", "op7": "scatter"}, SCATTER)
    by_name = {r["name"]: r for r in records}
    assert by_name["op6"]["origins"] == ["scatter"]  # the copy of x: its reads hold no cumsum for the sine
    assert by_name["op6"]["inherited"] == ["sin"]
    assert by_name["op6"]["partial"] == ["scatter"]  # it computes the scatter only in part: no index, no source
    assert by_name["op7"]["origins"] == ["scatter", "sin"]
    assert by_name["op7"]["partial"] == []  # it reads the copy of x the first part made, the index and the cumsum
    assert by_name["op4"]["origins"] == ["cumsum"]  # an extern computes its own op, nothing inlined


def test_without_the_availability_rule_the_copy_would_claim_the_sine():
    """What Inductor lists, kept as ``inherited``: the scatter's copy lists the sine it cannot compute."""
    records = scatter_records()
    ownership.split_origins(records, {}, SCATTER)  # no creators known: nothing is kept for being the creator
    by_name = {r["name"]: r for r in records}
    assert "sin" not in by_name["op6"]["origins"] and "sin" in by_name["op7"]["origins"]


def test_a_node_recomputed_inline_in_two_kernels_is_computed_by_both():
    nodes = graph(node("arg0_1", "arg0_1", op="placeholder"), node("exp", "aten.exp.default", ["arg0_1"]),
                  node("a", "aten.add.Tensor", ["exp"]), node("b", "aten.mul.Tensor", ["exp"]))
    records = [record("op0", ["a", "exp"], ["arg0_1[c0]"], ["buf0"]), record("op1", ["b", "exp"], ["arg0_1[c0]"], ["buf1"])]
    ownership.split_origins(records, {"op0": "a", "op1": "b"}, nodes)
    assert [r["origins"] for r in records] == [["a", "exp"], ["b", "exp"]]


# Two attentions sharing a mask (docs/ownership.md): the first attention's lowering realizes its query
# (op4) and its mask (op5), and Inductor gives both the union of their inputs' origins
MASKED = graph(
    node("arg0_1", "arg0_1", op="placeholder"), node("mm", "aten.mm.default", ["arg0_1"]),
    node("view_1", "aten.reshape.default", ["mm"]), node("sin", "aten.sin.default", ["view_1"]),
    node("iota", "prims.iota.default", [], dtype="torch.int64"),
    node("unsqueeze", "aten.unsqueeze.default", ["iota"], dtype="torch.int64"),
    node("le", "aten.le.Tensor", ["unsqueeze", "iota"], dtype="torch.bool"),
    node("arg1_1", "arg1_1", op="placeholder", dtype="torch.int64"),
    node("cumsum", "aten.cumsum.default", ["arg1_1"], dtype="torch.int64"),
    node("eq", "aten.eq.Tensor", ["cumsum"], dtype="torch.bool"),
    node("bitwise_and", "aten.bitwise_and.Tensor", ["le", "eq"], dtype="torch.bool"),
    node("full_default", "aten.full.default", [], shape=[]),
    node("where", "aten.where.self", ["bitwise_and", "full_default"]),
    node("sdpa", "aten._scaled_dot_product_flash_attention_for_cpu.default", ["sin", "arg0_1", "where"]),
)
MASK_ORIGINS = ["where", "bitwise_and", "le", "unsqueeze", "iota", "eq", "full_default"]


def test_a_node_computes_only_what_its_output_is_made_of():
    records = [record("op0", ["mm"], ["arg0_1[*]"], ["buf0"], kind="extern", held={"buf0": "mm"}),
               record("op3", ["cumsum"], ["arg1_1[*]"], ["buf3"], kind="extern", held={"buf3": "cumsum"}),
               record("op4", ["sdpa", "sin", "view_1"] + MASK_ORIGINS[2:5] + ["full_default"], ["buf0[c0]"], ["buf4"]),
               record("op5", ["sdpa"] + MASK_ORIGINS, ["buf3[c0]"], ["buf5"])]
    ownership.split_origins(records, {"op0": "mm", "op3": "cumsum", "op4": "sdpa", "op5": "sdpa"}, MASKED)
    by_name = {r["name"]: r for r in records}
    # the query's copy writes sin: the mask's le, iota and constant it lists are made by the mask's node only
    assert by_name["op4"]["origins"] == ["sdpa", "sin", "view_1"]
    assert by_name["op4"]["holds"] == ["sin"]
    assert by_name["op5"]["origins"] == ["sdpa"] + MASK_ORIGINS and by_name["op5"]["holds"] == ["where"]


def test_a_node_inlined_again_after_a_buffer_of_another_value_is_computed_there_too():
    """The producer computes ``exp`` and writes ``scaled`` (exp * 2); the reader reads that buffer and
    needs ``exp`` itself too: Inductor inlined it again, so the reader computes it (it is in no buffer)."""
    nodes = graph(node("arg0_1", "arg0_1", op="placeholder"), node("exp", "aten.exp.default", ["arg0_1"]),
                  node("scaled", "aten.mul.Tensor", ["exp"]), node("out", "aten.add.Tensor", ["scaled", "exp"]))
    records = [record("op0", ["scaled", "exp"], ["arg0_1[c0]"], ["buf0"], held={"buf0": "scaled"}),
               record("op1", ["out", "exp"], ["buf0[c0]", "arg0_1[c0]"], ["buf1"], held={"buf1": "out"})]
    ownership.split_origins(records, {"op0": "scaled", "op1": "out"}, nodes)
    assert [r["origins"] for r in records] == [["scaled", "exp"], ["out", "exp"]]


def test_sizes_and_constants_are_available_everywhere():
    nodes = graph(node("arg1_1", "arg1_1", op="placeholder", shape=[], dtype="SymInt"),
                  node("iota", "prims.iota.default", ["arg1_1"], shape=["s0"], dtype="torch.int64"),
                  node("add", "aten.add.Tensor", ["iota"], shape=["s0"], dtype="torch.int64"))
    records = [record("op0", ["add", "iota"], [], ["buf0"])]
    ownership.split_origins(records, {"op0": "add"}, nodes)
    assert records[0]["origins"] == ["add", "iota"]  # the symbolic size is no tensor the node must read


# GPT-2's attention: one addmm makes q, k and v; views carve them out; the attention reads the views,
# while the mask kernel, lowered with the attention, lists them too
ATTENTION = graph(
    node("addmm", "aten.addmm.default"), node("view_1", "aten.view.default", ["addmm"]),
    node("split", "aten.split.Tensor", ["view_1"]), node("getitem", "operator.getitem", ["split"]),
    node("view_2", "aten.view.default", ["getitem"]), node("permute", "aten.permute.default", ["view_2"]),
    node("iota", "prims.iota.default", []), node("where", "aten.where.self", ["iota"]),
    node("sdpa", "aten._scaled_dot_product_flash_attention_for_cpu.default", ["permute", "where"]),
)


def test_views_belong_to_the_kernels_that_read_them():
    mask, attention, matmul = ["where", "iota", "view_2", "permute", "split"], ["sdpa"], ["addmm", "view_1"]
    moved = ownership.views_to_readers([matmul, mask, attention], ATTENTION)
    assert moved[0] == ["addmm"]
    assert moved[1] == ["where", "iota"]
    assert moved[2] == ["sdpa", "view_1", "split", "getitem", "view_2", "permute"]


def test_a_view_a_kernel_writes_out_stays_with_it():
    """An attention needing a dense mask: the mask's node writes ``expand(where)`` into its own buffer,
    which the attention reads as a value, not through the view."""
    nodes = graph(node("iota", "prims.iota.default", []), node("where", "aten.where.self", ["iota"], shape=(1, 16)),
                  node("expand", "aten.expand.default", ["where"]), node("arg0_1", "arg0_1", op="placeholder"),
                  node("q", "aten.sin.default", ["arg0_1"]),
                  node("sdpa", "aten._scaled_dot_product_efficient_attention.default", ["q", "expand"]))
    records = [record("op0", ["sdpa", "q", "expand", "where", "iota"], ["arg0_1[c0]"], ["buf0"]),
               record("op1", ["sdpa", "expand", "where", "iota"], [], ["buf1"])]
    ownership.split_origins(records, {"op0": "sdpa", "op1": "sdpa"}, nodes)
    assert records[1]["origins"] == ["sdpa", "expand", "where", "iota"] and records[1]["holds"] == ["expand"]
    assert records[0]["origins"] == ["sdpa", "q"]
    placed = ownership.views_to_readers([["sdpa", "q"], records[1]["origins"], ["sdpa"]], nodes, written={"expand"})
    assert placed == [["sdpa", "q"], ["sdpa", "expand", "where", "iota"], ["sdpa"]]
    assert ownership.views_to_readers([["sdpa", "q"], records[1]["origins"], ["sdpa"]], nodes)[2] == ["sdpa", "expand"]


def test_a_view_an_fx_call_made_with_its_value_goes_with_that_value():
    """``x @ w`` made ``mm`` and the reshape after it; the sine reads the reshape: it goes with the matmul,
    and the sine's kernel lists neither it nor (so) the matmul's FX node."""
    nodes = graph(node("arg0_1", "arg0_1", op="placeholder"), node("mm", "aten.mm.default", ["arg0_1"], fx=["matmul"]),
                  node("view_1", "aten.reshape.default", ["mm"], fx=["matmul"]),
                  node("view_2", "aten.view.default", ["view_1"], fx=["x_view"]),
                  node("sin", "aten.sin.default", ["view_2"], fx=["sin"]))
    assert ownership.views_of_calls(nodes, {"mm", "sin"}) == {"view_1": "mm"}
    assert ownership.views_to_readers([["mm"], ["sin", "view_1"]], nodes) == [["mm", "view_1"], ["sin", "view_2"]]


def test_the_outputs_of_an_extern_call_belong_to_its_kernel():
    call = LoopIRNode("op6", "extern", buffers=["buf6"], reads=["buf4[*]"], origins=["sdpa"], extern_target="aten.sdpa")
    first = LoopIRNode("op7", "extern", buffers=["buf7"], reads=["buf6[*]"], origins=["sdpa", "getitem"])
    unused = LoopIRNode("op8", "extern", buffers=["buf8"], origins=["sdpa"], eliminated=True)
    other = LoopIRNode("op9", "extern", buffers=["buf9"], reads=["buf7[*]"], origins=["mm"], extern_target="mm")
    assert ownership.outputs_of_calls([[call], [other]], [call, first, unused, other]) == [[first], []]


def test_a_view_no_kernel_reads_stays_where_it_was_listed():
    nodes = graph(node("add", "aten.add.Tensor"), node("view", "aten.view.default", ["add"]))
    assert ownership.views_to_readers([["add", "view"]], nodes) == [["add", "view"]]


def test_a_node_computed_in_part_reads_no_views():
    nodes = graph(node("arg0_1", "arg0_1", op="placeholder"), node("idx", "aten.sort.default", ["arg0_1"]),
                  node("getitem", "operator.getitem", ["idx"]), node("scatter_add", "aten.scatter_add.default",
                                                                     ["arg0_1", "getitem"]))
    moved = ownership.views_to_readers([["scatter_add"], ["scatter_add"]], nodes, [{"scatter_add"}, set()])
    assert moved == [["scatter_add"], ["scatter_add", "getitem"]]


def test_a_view_brings_its_fx_node_only_when_that_fx_node_is_a_view_too():
    fx = {"sort": node("sort", "torch.sort"), "q": node("q", "view")}
    fx["sort"].post_grad, fx["q"].post_grad = ["sort", "getitem"], ["view_2"]
    post_grad = graph(node("sort", "aten.sort.default", fx=["sort"]), node("getitem", "operator.getitem", ["sort"], fx=["sort"]),
                      node("view_2", "aten.view.default", ["getitem"], fx=["q"]),
                      node("scatter", "aten.scatter.src", ["getitem", "view_2"]))
    linked, fx_nodes = ownership.linking_nodes([post_grad[n] for n in ("scatter", "getitem", "view_2")], post_grad, fx)
    assert [n.name for n in linked] == ["scatter", "view_2"] and fx_nodes == ["q"]
    # a getitem the kernel writes out (one output of its call) brings its FX node like a node it computes
    linked, fx_nodes = ownership.linking_nodes([post_grad["getitem"]], post_grad, fx, written={"getitem"})
    assert [n.name for n in linked] == ["getitem"] and fx_nodes == ["sort"]


def test_a_cat_written_in_place_belongs_to_the_kernels_writing_its_parts():
    part_a = LoopIRNode("op0", "pointwise", buffers=["buf0"], origins=["div"])
    part_b = LoopIRNode("op1", "pointwise", buffers=["buf1"], origins=["sub"])
    cat = LoopIRNode("op2", "nop", buffers=["buf2"], reads=["buf0[*]", "buf1[*]"], origins=["cat"])
    other = LoopIRNode("op3", "pointwise", buffers=["buf3"], reads=["buf2[c0]"], origins=["relu"])
    assert ownership.parts_in_place([[part_a, part_b], [other]], [part_a, part_b, cat, other]) == [["cat"], []]


def test_the_line_of_a_higher_order_op_belongs_to_no_kernel_of_its_subgraphs():
    cond_line, inner_line = ("model.py", 3), ("model.py", 7)
    nodes = graph(node("true_graph_0", "true_graph_0", op="get_attr", shape=None),
                  node("false_graph_0", "false_graph_0", op="get_attr", shape=None),
                  node("cond", "torch.ops.higher_order.cond", ["gt", "true_graph_0", "false_graph_0"], line=cond_line),
                  node("true_graph_0.inner", "true_graph_0.inner", op="get_attr", shape=None, subgraph="true_graph_0"),
                  node("true_graph_0.cond", "torch.ops.higher_order.cond", ["true_graph_0.inner"], line=inner_line,
                       subgraph="true_graph_0"),
                  node("true_graph_0.inner.sin", "aten.sin.default", subgraph="true_graph_0.inner"),
                  node("false_graph_0.cos", "aten.cos.default", subgraph="false_graph_0"))
    lines = ownership.enclosing_op_lines(nodes)
    assert lines == {"true_graph_0": {cond_line}, "false_graph_0": {cond_line},
                     "true_graph_0.inner": {cond_line, inner_line}}


def test_a_logs_claims_keep_each_node_with_its_first_claimant_and_views_with_readers():
    claims = [["addmm", "view_1"], ["where", "iota", "view_2", "permute", "split", "addmm"], ["sdpa", "where"]]
    assert ownership.log_claims(claims, list(ATTENTION.values())) == [
        ["addmm"], ["where", "iota"], ["sdpa", "view_1", "split", "getitem", "view_2", "permute"]]


def test_a_logs_kernel_called_before_a_nodes_inputs_gives_it_up():
    """The scatter of a cumsum's sine read from a TORCH_TRACE log: Inductor's map lists the sine for the copy
    kernel called before the cumsum, and for the scatter kernel called after it."""
    claims = [["mul", "scatter", "sin"], ["cumsum", "mul"], ["scatter", "sin"]]
    assert ownership.log_claims(claims, list(SCATTER.values())) == [["mul"], ["cumsum"], ["scatter", "sin"]]


def test_a_rewrite_of_a_rewrite_brings_every_erased_ancestor():
    rewrites = {("addmm_default", 2): [("mm", 2), ("y", 1), ("add", 2), ("add", 1)],
                ("fused", 2): [("addmm_default", 2)]}
    assert _erased_for([("fused", 2)], rewrites) == [("addmm_default", 2), ("mm", 2), ("y", 1), ("add", 2), ("add", 1)]
    assert _erased_for([("other", 2)], rewrites) == []


def test_an_extern_call_without_a_handle_is_found_by_name_in_call_order():
    wrapper = "\n".join([
        "        buf8 = empty_strided_cpu((8, 16), (16, 1), torch.float32)",
        "        # [Provenance debug handles] cpp_fused_0:1",
        "        cpp_fused_0(arg0_1, buf8)",
        "        aten.scatter_reduce_.two(buf8,1,buf2,buf1, reduce='sum', include_self=True)",
        "        # aten.scatter_reduce_.two(buf9, ...) in a comment is no call",
        "        aten.scatter_reduce_.two(buf9,1,buf2,buf1, reduce='sum', include_self=True)",
    ])
    written = [("op9", ["aten.scatter_reduce_.two"]), ("op12", ["aten.scatter_reduce_.two", "at::scatter_reduce"])]
    found = wrapper_code.unhandled_calls(written, wrapper, taken={3})
    assert [(c.node, c.name, c.line) for c in found] == [("op9", "aten.scatter_reduce_.two", 4),
                                                        ("op12", "aten.scatter_reduce_.two", 6)]


def test_a_call_cse_merged_goes_with_its_identical_twin():
    graph = torch.fx.Graph()  # x + arange(4) + arange(4) + arange(4, dtype=float64), as Dynamo records it
    total = graph.placeholder("x")
    for kwargs in ({}, {}, {"dtype": torch.float64}):
        total = graph.call_function(torch.add, (total, graph.call_function(torch.arange, (4,), kwargs)))
    graph.output(total)
    stage = fx_stage("fx", torch.fx.GraphModule(torch.nn.Module(), graph))
    stage.node("arange").post_grad = ["iota"]
    assert _merged_calls(stage) == {"arange_1": "arange"}  # the float64 arange is another call


def test_a_dead_call_is_no_twin():
    graph = torch.fx.Graph()  # rows = arange(4); unused = arange(4); return x + rows
    x = graph.placeholder("x")
    rows = graph.call_function(torch.arange, (4,))
    graph.call_function(torch.arange, (4,))
    graph.output(graph.call_function(torch.add, (x, rows)))
    stage = fx_stage("fx", torch.fx.GraphModule(torch.nn.Module(), graph))
    stage.node("arange").post_grad = ["iota"]
    assert _merged_calls(stage) == {}


def test_a_factory_folded_into_its_users_node_goes_with_it():
    stage = FxStage("fx", "", [node("arange", "torch.arange", [], shape=[16], dtype="torch.int64"),
                               node("position_ids", "operator.add", ["arange"], shape=[16], dtype="torch.int64"),
                               node("x", "x", op="placeholder"), node("relu", "torch.relu", ["x"])])
    stage.node("arange").users, stage.node("position_ids").post_grad = ["position_ids"], ["iota"]
    assert _folded_factories(stage) == {"arange": ["position_ids"]}  # relu reads a tensor: not a factory
