"""The conformance harness's own oracles (tests/conformance/checks.py, dataflow.py) on a graph written out
by hand: a batch-norm scale computed from parameters only, a convolution, the scaled result. What torch
lists and what the wrapper calls are given; each check must name the difference it was written for."""

from __future__ import annotations

from compiler.model.stages import FxNode, FxStage, GraphCapture, Kernel, LoopIRNode, Wrapper
from tests.conformance import checks, dataflow
from tests.conformance.torch_records import GraphRecords

F32 = "torch.float32"
WRAPPER = """def call(args):
    cpp_fused_0(arg1_1, buf0)
    extern_kernels.convolution(arg0_1, buf0, out=buf1)
    cpp_fused_1(buf1, arg2_1, buf2)
    cpp_fused_2(arg2_1, buf3)
"""


def _node(name, target, inputs=(), op="call_function"):
    return FxNode(name=name, op=op, target=target, inputs=list(inputs), shape=[4], dtype=F32)


def _graph(claims: dict[str, list[str]]) -> GraphCapture:
    """x, w, scale; ``rs = rsqrt(scale)``; ``conv = convolution(x, w)``; ``y = conv * rs``; ``z = rs + 1``.
    ``claims``: kernel -> the nodes the capture gives it."""
    nodes = [_node("arg0_1", "arg0_1", op="placeholder"), _node("arg1_1", "arg1_1", op="placeholder"),
             _node("arg2_1", "arg2_1", op="placeholder"), _node("rs", "aten.rsqrt.default", ["arg2_1"]),
             _node("conv", "aten.convolution.default", ["arg0_1", "arg1_1"]),
             _node("y", "aten.mul.Tensor", ["conv", "rs"]), _node("z", "aten.add.Tensor", ["rs"]),
             FxNode(name="output", op="output", target="output", inputs=["y", "z"])]
    by_name = {n.name: n for n in nodes}
    for n in nodes:
        for i in n.inputs:
            by_name[i].users.append(n.name)
    lines = {"cpp_fused_0": [1, 2], "extern_kernels.convolution": [3], "cpp_fused_1": [1, 4], "cpp_fused_2": [1, 5]}
    kernels = [Kernel(id=k, name=k, language="extern" if k.startswith("extern") else "cpp", source="",
                      post_grad_nodes=claims[k], wrapper_lines=lines[k]) for k in lines]
    loop_ir = [LoopIRNode("op0", "pointwise", buffers=["buf0"], origins=["conv"], inherited_origins=["rs"]),
               LoopIRNode("op1", "extern", buffers=["buf1"], buffer_nodes={"buf1": "conv"}, origins=["conv"]),
               LoopIRNode("op2", "pointwise", buffers=["buf2"], buffer_nodes={"buf2": "y"}, origins=["y", "rs"]),
               LoopIRNode("op3", "pointwise", buffers=["buf3"], buffer_nodes={"buf3": "z"}, origins=["z", "rs"])]
    return GraphCapture(index=0, kind="inference", dynamo_graph=0, fx=FxStage("fx", "", []),
                        post_grad=FxStage("post_grad", "", nodes), loop_ir=loop_ir, fused=[], kernels=kernels,
                        wrapper=Wrapper(source=WRAPPER))


RIGHT = {"cpp_fused_0": ["conv"], "extern_kernels.convolution": ["conv"], "cpp_fused_1": ["y", "rs"],
         "cpp_fused_2": ["z", "rs"]}


def _findings(claims, torch_lists):
    records = GraphRecords(kernel_nodes={f"{k}:{i}": v for i, (k, v) in enumerate(torch_lists.items(), start=1)})
    return [f for f in checks.check_graph("case", _graph(claims), records) if f.check == "nodes"]


def test_a_node_torch_lists_for_a_layout_copy_that_reads_nothing_of_it_is_torchs_union():
    """torch credits the weight's layout copy with the batch-norm scale, which only later kernels compute and
    nothing the copy computes reads: torch's mistake, named as such."""
    found = _findings(RIGHT, {**RIGHT, "cpp_fused_0": ["conv", "rs"]})
    assert [(f.kernel, f.verdict, f.rule) for f in found if f.verdict != checks.EXACT] == [
        ("cpp_fused_0", checks.ACCEPTED, checks.TORCH_UNION)]


def test_a_claim_whose_value_nothing_after_it_reads_is_a_problem():
    """``rs`` claimed by two kernels, each reading it: fine. ``conv`` claimed by the last kernel too: ``y``, its
    only reader, was computed before it runs, so the last kernel computes ``conv`` for nothing."""
    assert dataflow.claims_feeding_nothing(checks.GraphFacts(_graph(RIGHT))) == []
    late = {**RIGHT, "cpp_fused_2": ["z", "rs", "conv"]}
    assert [(k, n) for k, n, _ in dataflow.claims_feeding_nothing(checks.GraphFacts(_graph(late)))] == [
        ("cpp_fused_2", "conv")]


def test_a_node_recomputed_in_a_kernel_that_reads_no_buffer_of_it_must_be_credited_there():
    """``z`` reads ``rs``; no buffer the last kernel names holds ``rs``: giving ``rs`` only to the kernel before
    it loses the last kernel's share."""
    found = _findings({**RIGHT, "cpp_fused_2": ["z"]}, RIGHT)
    assert [(f.kernel, f.verdict) for f in found if f.verdict != checks.EXACT] == [("cpp_fused_2", checks.PROBLEM)]
    assert "computes rs again" in next(f.detail for f in found if f.verdict == checks.PROBLEM)
