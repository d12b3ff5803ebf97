"""c.what_if(materialize=...) and unfuse= of one loop: values Inductor inlined while lowering stored to buffers of
their own, so a loop of several user lines becomes several kernels (CPU).

``lines`` is three lines Inductor lowers into one loop (one scheduler node, one kernel: no fusion made it);
``reduce_lines`` is a pointwise line inlined into the reduction of the next. Both sides are checked against
eager on the same inputs, and the kernels before and after are known exactly.
"""

from __future__ import annotations

import inspect

import pytest
import torch
from torch._inductor import config as inductor_config

import explorer
from compiler.model.what_if import WhatIfError


def lines(x):
    a = x.sin()
    b = a * 2 + 1
    return b.cos()


def reduce_lines(x):
    a = x.sin() * 2
    return a.sum(-1)


def view_line(x):
    a = x.sin()
    v = a.t()
    return v.cos() + 1


def one_line(x):
    return (x.sin() * 2 + 1).cos()


def _line_numbers(function, count):
    """The file and numbers of a function's first ``count`` body lines."""
    first = inspect.getsourcelines(function)[1] + 1
    return [(inspect.getsourcefile(function), first + i) for i in range(count)]


@pytest.fixture(scope="module")
def x():
    torch.manual_seed(0)
    return torch.randn(8, 16)


@pytest.fixture(scope="module")
def stored(x):
    """``lines`` compiled, ``a`` stored (with the compilation's state and torch's config before and after), and
    the kernel unfused, measured."""
    c = explorer.compile(lines, x)
    state = [(k.id, k.source, k.post_grad_nodes) for k in c.kernels], inductor_config.save_config()
    w = c.what_if(materialize="a")
    after = [(k.id, k.source, k.post_grad_nodes) for k in c.kernels], inductor_config.save_config()
    cut = c.what_if(unfuse=c.kernels[0], measure=True)
    return c, w, cut, state, after


def test_one_loop_of_three_lines_is_one_kernel_no_fusion_made(stored):
    c = stored[0]
    g = c.graphs[0]
    assert [k.post_grad_nodes for k in c.kernels] == [["cos", "add", "mul", "sin"]]
    assert [(f.name, f.nodes) for f in g.fused] == [("op0", ["op0"])]


def test_materialize_a_gives_sin_its_own_kernel_and_the_same_outputs(stored, x):
    c, w, _, _, _ = stored
    assert [k.post_grad_nodes for k in w.after.kernels] == [["sin"], ["cos", "add", "mul"]]
    assert [k.id for k in w.after.kernels] == ["cpp_fused_sin_0", "cpp_fused_add_cos_mul_1"]
    [stores_a] = [n for n in w.after.graphs[0].loop_ir if "sin" in n.buffer_nodes.values()]
    assert stores_a.origins == ["sin"] and stores_a.kernels == ["cpp_fused_sin_0"]
    torch.testing.assert_close(w.after.outputs, lines(x))
    torch.testing.assert_close(w.after.outputs, c.outputs, rtol=0, atol=0)  # the same float32 math, stored between
    # x read, cos written (2 x 512 B); after: x read and a written, a read and cos written
    assert [k.bytes for k in w.sides[0].kernels] == [1024.0]
    assert [k.bytes for k in w.sides[1].kernels] == [1024.0, 1024.0]
    assert w.verdict == ("storing sin (a) in a buffer of its own costs 1.0 KiB more traffic and time not measured "
                         "(w.measure()) (1 -> 2 kernels)")
    assert {(k.status, k.a, k.b) for k in w.diff.kernels} == {
        ("changed", "cpp_fused_add_cos_mul_sin_0", "cpp_fused_add_cos_mul_1"), ("added", None, "cpp_fused_sin_0")}


def test_materialize_leaves_the_original_and_torchs_config_as_they_were(stored):
    _, _, _, before, after = stored
    assert after == before


def test_unfuse_of_one_loop_cuts_it_at_each_line_and_times_every_kernel_and_line(stored, x):
    _, _, cut, _, _ = stored
    first, second, third = _line_numbers(lines, 3)
    assert cut.edit.kind == "materialize" and cut.edit.nodes == {"sin", "add"}
    assert [(k.post_grad_nodes, k.user_lines) for k in cut.after.kernels] == [
        (["sin"], [first]), (["add", "mul"], [second]), (["cos"], [third])]
    torch.testing.assert_close(cut.after.outputs, lines(x))
    assert cut.verdict.startswith("cutting op0 (cos, add, mul, sin) at your lines test_what_if_materialize.py:"
                                  f"{first[1]}, test_what_if_materialize.py:{second[1]}, "
                                  f"test_what_if_materialize.py:{third[1]} by storing sin (a), add (b) ")
    assert cut.verdict.endswith("(1 -> 3 kernels)")
    before, after = cut.sides
    assert all(k.ms is not None and k.ms > 0 for k in before.kernels + after.kernels)
    assert set(after.line_ms) == {first, second, third}
    assert before.numerics_ok is True and after.numerics_ok is True


def test_a_pointwise_line_inlined_into_a_reduction_becomes_a_kernel_of_its_own(x):
    c = explorer.compile(reduce_lines, x)
    assert [k.post_grad_nodes for k in c.kernels] == [["sum_1", "mul", "sin"]]
    w = c.what_if(unfuse=c.kernels[0].id)
    assert w.edit.nodes == {"mul"}  # a, the value the first line hands to the second
    assert [k.post_grad_nodes for k in w.after.kernels] == [["mul", "sin"], ["sum_1"]]
    torch.testing.assert_close(w.after.outputs, reduce_lines(x))


def test_what_cannot_be_stored_is_refused_with_the_values_that_can(stored):
    c = stored[0]
    choices = r"values a kernel computes inline, which materialize= can store: \['sin \(a\)', 'mul', 'add \(b\)'\]"
    with pytest.raises(WhatIfError, match=r"^arg0_1 \(l_x_\) is an input of the graph: it is in memory already; "
                                          + choices):
        c.what_if(materialize="l_x_")
    with pytest.raises(WhatIfError, match=r"^cos is stored already: op0 writes it to buf0 "
                                          r"\(cpp_fused_add_cos_mul_sin_0\); " + choices):
        c.what_if(materialize="cos")
    with pytest.raises(WhatIfError, match=r"^no node 'aa' in g0 \(did you mean 'a'\?\); " + choices):
        c.what_if(materialize="aa")
    with pytest.raises(WhatIfError, match=r"LoopIRNode op0 writes a buffer already: unfuse= splits a kernel"):
        c.what_if(materialize=c.graphs[0].loop_ir[0])
    with pytest.raises(WhatIfError, match=r"materialize= takes FX or post-grad nodes \(or their names\), got int"):
        c.what_if(materialize=3)
    with pytest.raises(WhatIfError, match=r"exactly one edit, got \['materialize', 'unfuse'\]: .*materialize=a node"):
        c.what_if(materialize="a", unfuse="op0")


def test_a_view_and_a_loop_of_one_line_are_refused_before_compiling(x):
    viewed = explorer.compile(view_line, x.reshape(16, 8))
    with pytest.raises(WhatIfError, match=r"^permute \(v\) is a view \(aten\.permute\.default\): its users read sin at "
                                          r"other indices, it computes nothing to store; store sin \(a\) instead; "
                                          r"values a kernel computes inline, which materialize= can store: "
                                          r"\['sin \(a\)', 'cos'\]"):
        viewed.what_if(materialize="v")
    single = explorer.compile(one_line, x)
    line = _line_numbers(one_line, 1)[0][1]
    with pytest.raises(WhatIfError, match=rf"^op0 \(cos, add, mul, sin\) is one loop of one line of yours "
                                          rf"\(test_what_if_materialize\.py:{line}\): Inductor inlined its operations "
                                          r"while lowering, so there is no fusion to undo and no line to cut it at; "
                                          r"materialize= one of its values to cut it there \(values a kernel computes "
                                          r"inline, which materialize= can store: \['sin', 'mul', 'add'\]\); groups "
                                          r"unfuse= can split: none"):
        single.what_if(unfuse="op0")
