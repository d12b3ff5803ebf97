"""c.what_if(...): one fusion decision changed, the same program compiled again, both sides compared (CPU).

Models whose fusions are known: a pointwise chain whose three values are all returned (three scheduler nodes,
one fused group), a reduction with its pointwise epilogue (one group), the same chain with Inductor's
``max_fusion_size`` at 2 (it declines the last fusion for that score), two reductions over different
dimensions (kept apart by the C++ code generator, a legality check) and a matmul with its relu (an extern call).
One compile of each, shared by the module; every what_if is one more compile.
"""

from __future__ import annotations

import io

import pytest
import torch
from rich.console import Console
from torch._inductor import config as inductor_config

import explorer
from compiler.model.what_if import WhatIfError
from compiler.model.what_if_order import launch_order


def chain(x):
    a = x + 1
    b = a * 2
    c = b.relu()
    return a, b, c


def softmax_like(x):
    s = x.sum(-1, keepdim=True)
    return x / s


def two_reductions(x):
    return x.sum(0), x.sum(1)


def matmul_relu(x, w):
    return torch.relu(x @ w)


def branches(x, w, y):
    """Two independent branches, three kernels: x * 2 (C++), its matmul (extern), y.abs() + 1 (C++)."""
    return (x * 2) @ w, y.abs() + 1


def two_fusions(x):
    a = x + 1
    b = a * 2
    c = b.relu()
    return a, b, c / c.sum(-1, keepdim=True)


def _launched(compilation):
    """The kernels in the order the wrapper launches them, each as the post-grad nodes it computes."""
    kernels = {k.id: k for k in compilation.kernels}
    return [set(kernels[k].post_grad_nodes) for k in launch_order(compilation.graphs[0])]


def _state(c):
    """What a what_if must leave as it was: every kernel, group and report of the compilation."""
    return ([(k.id, k.source, k.post_grad_nodes, k.group) for k in c.kernels],
            [(f.name, f.nodes, f.kernels) for g in c.graphs for f in g.fused],
            c.toggles, len(c.profiles), len(c.numerics), len(c.graphs))


@pytest.fixture(scope="module")
def x():
    torch.manual_seed(0)
    return torch.randn(8, 16)


@pytest.fixture(scope="module")
def unfused(x):
    """The chain, its state and torch's config before the edit, the WhatIf, and both afterwards."""
    c = explorer.compile(chain, x)
    state, config = _state(c), inductor_config.save_config()
    w = c.what_if(unfuse=c.kernels[0])
    return c, state, config, w, _state(c), inductor_config.save_config()


@pytest.fixture(scope="module")
def prevented(x):
    c = explorer.compile(softmax_like, x.abs() + 1)
    return c, c.what_if(prevent=("s", "truediv"), measure=True)


@pytest.fixture(scope="module")
def capped(x):
    """The chain with max_fusion_size=2: Inductor declines fusing the third node for that score."""
    return explorer.compile(chain, x, config={"max_fusion_size": 2})


@pytest.fixture(scope="module")
def reductions(x):
    return explorer.compile(two_reductions, x)


@pytest.fixture(scope="module")
def branched(x):
    """The two branches, and abs + 1 asked to run before x * 2 (launched before it, with its matmul)."""
    inputs = (x, torch.randn(16, 4), torch.randn(4, 4))
    c = explorer.compile(branches, *inputs)
    return inputs, c, c.what_if(order=("abs_1", "mul"))


@pytest.fixture(scope="module")
def two_fused(x):
    """A graph of two fusions and its report made in this process."""
    c = explorer.compile(two_fusions, x)
    return c, c.fusion_report(measure=False)


def test_unfuse_a_pointwise_chain_gives_one_kernel_per_node(unfused, x):
    c, _, _, w, _, _ = unfused
    assert [k.post_grad_nodes for k in c.kernels] == [["add", "mul", "relu"]]
    assert [k.post_grad_nodes for k in w.after.kernels] == [["add"], ["mul"], ["relu"]]
    assert [f.nodes for f in w.after.graphs[0].fused] == [["op0"], ["op1"], ["op2"]]
    assert w.kernel_counts() == (1, 3)
    assert {(n.node1, n.node2, n.reason) for n in w.after.graphs[0].not_fused} >= {
        ("op0", "op1", "kept apart by what_if"), ("op1", "op2", "kept apart by what_if")}
    for got, want in zip(w.after.outputs, chain(x)):
        assert torch.equal(got, want)
    assert w.before is c and w.after is not c


def test_unfuse_leaves_the_original_and_torchs_config_as_they_were(unfused):
    c, state, config, _, state_after, config_after = unfused
    assert state_after == state
    assert config_after == config


def test_unfuse_links_both_sides_by_fx_node_and_gives_the_verdict(unfused):
    _, _, _, w, _, _ = unfused
    pairs = {(k.status, k.a, k.b, tuple(k.nodes)) for k in w.diff.kernels}
    assert pairs == {("changed", "cpp_fused_add_mul_relu_0", "cpp_fused_add_0", ("a", "b", "c")),
                     ("added", None, "cpp_fused_mul_1", ("b",)), ("added", None, "cpp_fused_relu_2", ("c",))}
    # bytes crossing each C++ kernel's edge: x read and a, b, c written (4 x 512 B), then 2 x 512 B per kernel
    assert [k.bytes for k in w.sides[0].kernels] == [2048.0]
    assert [k.bytes for k in w.sides[1].kernels] == [1024.0, 1024.0, 1024.0]
    assert w.verdict == ("unfusing op0_op1_op2 (add, mul, relu) costs 1.0 KiB more traffic and time not measured "
                         "(w.measure()) (1 -> 3 kernels)")
    out = io.StringIO()
    Console(file=out, width=200).print(w)
    text = out.getvalue()
    assert w.verdict in text and "cpp_fused_mul_1" in text and "peak memory (planned)" in text
    assert "cpp_fused_relu_2" in w._repr_html_()


def test_prevent_splits_a_reduction_from_its_epilogue_and_measures_both(prevented, x):
    c, w = prevented
    assert [k.post_grad_nodes for k in c.kernels] == [["sum_1", "div"]]
    assert [k.post_grad_nodes for k in w.after.kernels] == [["sum_1"], ["div"]]
    torch.testing.assert_close(w.after.outputs, softmax_like(x.abs() + 1))  # the sum's order is the kernel's
    before, after = w.sides
    assert before.total_ms > 0 and after.total_ms > 0
    assert all(k.ms is not None for k in before.kernels + after.kernels)
    assert before.numerics_ok is True and after.numerics_ok is True
    assert after.line_ms  # time per user line, both sides
    assert w.verdict.startswith("keeping s and truediv apart costs ") and "ms" in w.verdict
    assert w.verdict.endswith("(1 -> 2 kernels)")
    assert (len(c.profiles), len(c.numerics)) == (0, 0)  # measured on the WhatIf, not kept on the original


def test_fuse_a_pair_inductor_declined_for_its_score(capped, x):
    g = capped.graphs[0]
    assert [f.nodes for f in g.fused] == [["op0", "op1"], ["op2"]]
    assert [(n.node1, n.node2, n.reason) for n in g.not_fused] == [("op0_op1", "op2", "exceeds max fusion")]
    w = capped.what_if(fuse=("op0_op1", "op2"))
    assert [f.nodes for f in w.after.graphs[0].fused] == [["op0", "op1", "op2"]]
    assert w.edit.note == "Inductor declined it: exceeds max fusion"
    assert w.after.toggles == {"max_fusion_size": 2}  # everything else as captured
    for got, want in zip(w.after.outputs, chain(x)):
        assert torch.equal(got, want)


def test_fuse_refuses_what_inductor_cannot_do_with_the_reason(reductions, x):
    with pytest.raises(WhatIfError, match="still declined this fusion with its score heuristics relaxed, so it is not "
                                          "a score decision: its code generator's own check"):
        reductions.what_if(fuse=("op0", "op1"))
    mm = explorer.compile(matmul_relu, x, torch.randn(16, 4))
    with pytest.raises(WhatIfError, match=r"cannot fuse op0: it is an extern call .* \(a legality rule, not a score\)"):
        mm.what_if(fuse=tuple(k.id for k in mm.kernels))


def test_bad_input_is_refused_with_the_valid_choices(unfused, reductions):
    c = unfused[0]
    with pytest.raises(WhatIfError, match=r"no fused group or kernel 'nope'; groups that can be split and "
                                          r"their kernels: \['op0_op1_op2', 'cpp_fused_add_mul_relu_0'\]"):
        c.what_if(unfuse="nope")
    with pytest.raises(WhatIfError, match=r"no node 'zz' computed by a kernel; nodes \(FX and post-grad\): "
                                          r"\['a', 'add', 'b', 'c', 'l_x_', 'mul', 'relu'\]"):
        c.what_if(prevent=("a", "zz"))
    with pytest.raises(WhatIfError, match="exactly one edit, got none"):
        c.what_if()
    with pytest.raises(WhatIfError, match=r"exactly one edit, got \['prevent', 'unfuse'\]"):
        c.what_if(unfuse="op0_op1_op2", prevent=("a", "b"))
    with pytest.raises(WhatIfError, match=r"order= takes a pair \(a, b\)"):
        c.what_if(order=["op0"])
    with pytest.raises(WhatIfError, match=r"op0 \(sum_1\) is one scheduler node computing one value: nothing was "
                                          r"fused or inlined into it, so there is nothing to undo; groups unfuse= "
                                          r"can split: none"):
        reductions.what_if(unfuse="op0")
    with pytest.raises(WhatIfError, match="are not fused .* nothing to prevent"):
        reductions.what_if(prevent=("sum_1", "sum_2"))
    with pytest.raises(explorer.WhatIfError, match=r"sum_1 runs as one reduction in a cpp kernel, and only "
                                                   r"Inductor's Triton backend \(GPU\) splits a reduction: the C\+\+ "
                                                   r"backend .* no split to turn on\. Split reductions here: none"):
        reductions.what_if(split="sum_1")
    assert explorer.WhatIfError is WhatIfError


def test_fusion_report_prevents_each_fusion_in_turn(two_fused):
    c, report = two_fused
    assert [f.nodes for f in c.graphs[0].fused] == [["op0", "op1"], ["op2", "op3"]]
    rows = {row.group: (row.kernels, row.bytes_saved, row.error) for row in report.rows}
    # unfused, the division's kernel computes c = b.relu() again from b (512 B read) and reads the row sums
    # the first kernel writes (32 B each way); c itself is never written
    assert rows == {"op0_op1": ((1, 3), 1024.0, None), "op2_op3": ((1, 2), 576.0, None)}
    assert [row.group for row in report.rows] == ["op0_op1", "op2_op3"]  # most bytes saved first (not measured)
    out = io.StringIO()
    Console(file=out, width=200).print(report)
    text = " ".join(out.getvalue().split())  # the title wraps over the narrower table
    assert "op2_op3" in text and "in this process, one after another" in text


def test_fusion_report_in_two_workers_gives_the_rows_of_this_process(two_fused):
    c, here = two_fused
    report = c.fusion_report(measure=False, workers=2)
    assert report.how == "one compile per fusion, in 2 worker processes side by side"
    assert [(r.group, r.nodes, r.kernels, r.bytes_saved, r.verdict, r.error) for r in report.rows] == [
        (r.group, r.nodes, r.kernels, r.bytes_saved, r.verdict, r.error) for r in here.rows]
    with pytest.raises(WhatIfError, match="workers is how many worker processes"):
        c.fusion_report(workers=0)


def test_order_launches_the_asked_kernel_first_and_keeps_every_kernel(branched):
    inputs, c, w = branched
    assert _launched(c) == [{"mul"}, {"mm"}, {"abs_1", "add"}]
    assert _launched(w.after) == [{"abs_1", "add"}, {"mul"}, {"mm"}]
    assert sorted(map(sorted, _launched(w.after))) == sorted(map(sorted, _launched(c)))  # nodes per kernel
    for got, want in zip(w.after.outputs, branches(*inputs)):
        assert torch.equal(got, want)
    assert w.verdict.startswith("running cpp_fused_abs_add_1 before cpp_fused_mul_0 moves the same bytes")
    assert _launched(c) == [{"mul"}, {"mm"}, {"abs_1", "add"}]  # the original as it was


def test_order_refuses_what_the_data_forbids_with_the_value_and_the_choices(branched):
    _, c, _ = branched
    with pytest.raises(WhatIfError, match=r"extern_kernels.mm cannot run before cpp_fused_mul_0: extern_kernels.mm "
                                          r"needs mul from cpp_fused_mul_0\. Kernels that could be moved before "
                                          r"cpp_fused_mul_0: \['cpp_fused_abs_add_1'\]"):
        c.what_if(order=("mm", "mul"))
    with pytest.raises(WhatIfError, match=r"cpp_fused_mul_0 already runs before cpp_fused_abs_add_1"):
        c.what_if(order=("mul", "abs_1"))
    with pytest.raises(WhatIfError, match=r"computed by one kernel \(cpp_fused_abs_add_1\)"):
        c.what_if(order=("abs_1", "add"))
    with pytest.raises(WhatIfError, match=r"no kernel, fused group or node 'zz'; kernels in launch order: "
                                          r"\['cpp_fused_mul_0', 'extern_kernels.mm', 'cpp_fused_abs_add_1'\]"):
        c.what_if(order=("zz", "mul"))


def test_an_edit_applies_to_its_own_graph_and_pairs_only():
    """The scheduler's question, answered without compiling: other graphs and untouched pairs are left alone."""
    from compiler.model.what_if_edits import FuseEdit, PreventEdit

    add, mul, relu = frozenset({"add"}), frozenset({"mul"}), frozenset({"relu"})
    graph = frozenset({"arg0_1", "add", "mul", "relu", "output"})
    apart = PreventEdit(0, (("op0",), ("op1",)), (frozenset({add}), frozenset({mul})), graph, "keeping")
    assert apart.decide(graph, [add], [mul]) == "refuse"
    assert apart.decide(graph, [mul, relu], [add]) == "refuse"  # a fused node holding one side
    assert apart.decide(graph, [add], [relu]) is None
    assert apart.decide(graph | {"other"}, [add], [mul]) is None  # another graph of the program
    assert apart.ends_kernel(graph, [add]) and not apart.ends_kernel(graph, [relu])
    together = FuseEdit(0, (("op0",), ("op1",)), (frozenset({add}), frozenset({mul})), graph, "fusing")
    assert together.decide(graph, [mul], [add]) == "relax" and not together.ends_kernel(graph, [add])
