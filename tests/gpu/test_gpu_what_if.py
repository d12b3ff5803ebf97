"""GPU: c.what_if(...) on Triton kernels: a pointwise chain unfused, kernels counted and timed; a split reduction
turned off, an unsplit one turned on; three lines inlined into one kernel stored apart (run with `pytest -m gpu`)."""

from __future__ import annotations

import pytest
import torch

import explorer
from compiler.model.what_if_order import launch_order

pytestmark = pytest.mark.gpu


def chain(x):
    a = x + 1
    b = a * 2
    c = b.relu()
    return a, b, c


@pytest.fixture(scope="module")
def unfused():
    torch.manual_seed(0)
    x = torch.randn(4096, 4096, device="cuda")
    c = explorer.compile(chain, x)
    return x, c, c.what_if(unfuse=c.kernels[0], measure=True)


def test_unfusing_a_triton_chain_gives_three_kernels_each_timed(unfused):
    x, c, w = unfused
    assert [(k.language, k.post_grad_nodes) for k in c.kernels] == [("triton", ["add", "mul", "relu"])]
    assert [(k.language, k.post_grad_nodes) for k in w.after.kernels] == [
        ("triton", ["add"]), ("triton", ["mul"]), ("triton", ["relu"])]
    for got, want in zip(w.after.outputs, chain(x)):
        assert torch.equal(got, want)
    before, after = w.sides
    assert all(k.ms is not None and k.ms > 0 for k in before.kernels + after.kernels), (before, after)
    assert before.numerics_ok is True and after.numerics_ok is True


def test_unfusing_a_triton_chain_moves_more_bytes_by_inductors_estimate(unfused):
    _, _, w = unfused
    before, after = w.sides
    # Inductor's own estimate (kernel_num_gb): fused, x is read once and a, b, c written (4 x 64 MiB);
    # apart, each kernel reads one tensor and writes one (6 x 64 MiB)
    assert before.bytes == pytest.approx(4 * 4096 * 4096 * 4, rel=0.01)
    assert after.bytes == pytest.approx(6 * 4096 * 4096 * 4, rel=0.01)
    assert after.total_ms > before.total_ms  # two more round trips through HBM
    assert w.verdict.startswith("unfusing op0_op1_op2 (add, mul, relu) costs 128.0 MiB more traffic and costs ")
    assert w.verdict.endswith("ms more per call (1 -> 3 kernels)")


def total(x):
    return x.sum()


def test_a_split_reduction_turned_off_runs_as_one_kernel():
    torch.manual_seed(0)
    x = torch.randn(4096, 4096, device="cuda")
    c = explorer.compile(total, x)
    reductions = [n for n in c.graphs[0].loop_ir if n.kind == "reduction"]
    assert len(reductions) == 2 and len(c.kernels) == 2  # partial sums, then their sum
    w = c.what_if(split="sum_1", measure=True)
    assert [n.kind for n in w.after.graphs[0].loop_ir] == ["reduction"]
    assert [(k.language, k.post_grad_nodes) for k in w.after.kernels] == [("triton", ["sum_1"])]
    torch.testing.assert_close(w.after.outputs, x.sum(), rtol=1e-4, atol=1e-2)
    assert w.verdict.startswith("running sum_1 unsplit ") and w.verdict.endswith("(2 -> 1 kernels)")
    assert len(c.kernels) == 2  # the original as it was


def row_sums(x):
    return x.sum(-1)


def test_an_unsplit_reduction_turned_on_runs_as_partials_then_their_sum():
    """32768 rows of 1024: enough rows to fill the GPU, so Inductor runs each row's sum in one kernel; turned on,
    each row is summed in 32 partials of 32 elements, then the partials are summed: two Triton kernels."""
    torch.manual_seed(0)
    x = torch.randn(32768, 1024, device="cuda")
    c = explorer.compile(row_sums, x)
    assert [n.kind for n in c.graphs[0].loop_ir if not n.eliminated] == ["reduction"]
    assert [(k.language, k.post_grad_nodes) for k in c.kernels] == [("triton", ["sum_1"])]
    w = c.what_if(split="sum_1", measure=True)
    assert [n.kind for n in w.after.graphs[0].loop_ir if not n.eliminated] == ["reduction", "reduction"]
    assert [(k.language, k.post_grad_nodes) for k in w.after.kernels] == [("triton", ["sum_1"]), ("triton", ["sum_1"])]
    torch.testing.assert_close(w.after.outputs, x.sum(-1), rtol=1e-4, atol=1e-3)
    assert all(k.ms is not None and k.ms > 0 for k in w.sides[1].kernels), w.sides[1]
    assert w.verdict.startswith("splitting sum_1 ") and w.verdict.endswith("(1 -> 2 kernels)")
    assert len(c.kernels) == 1  # the original as it was


def branches(x, y):
    return x.sin() * 2, y.cos() + 1


def test_order_launches_the_second_triton_kernel_first():
    torch.manual_seed(0)
    x, y = torch.randn(1024, 1024, device="cuda"), torch.randn(512, 256, device="cuda")
    c = explorer.compile(branches, x, y)

    def launched(compilation):
        kernels = {k.id: k for k in compilation.kernels}
        return [(kernels[k].language, set(kernels[k].post_grad_nodes)) for k in launch_order(compilation.graphs[0])]

    assert launched(c) == [("triton", {"sin", "mul"}), ("triton", {"cos", "add"})]
    w = c.what_if(order=("cos", "sin"))
    assert launched(w.after) == [("triton", {"cos", "add"}), ("triton", {"sin", "mul"})]
    for got, want in zip(w.after.outputs, c.outputs):
        assert torch.equal(got, want)


def lines(x):
    a = x.sin()
    b = a * 2 + 1
    return b.cos()


@pytest.fixture(scope="module")
def stored():
    """Three lines Inductor inlined into one Triton kernel: a stored (materialize), and the kernel cut at its lines."""
    torch.manual_seed(0)
    x = torch.randn(4096, 4096, device="cuda")
    c = explorer.compile(lines, x)
    return x, c, c.what_if(materialize="a"), c.what_if(unfuse=c.kernels[0], measure=True)


def test_materializing_an_inlined_value_gives_it_a_triton_kernel_of_its_own(stored):
    x, c, w, _ = stored
    assert [(k.language, sorted(k.post_grad_nodes)) for k in c.kernels] == [("triton", ["add", "cos", "mul", "sin"])]
    assert [(k.language, sorted(k.post_grad_nodes)) for k in w.after.kernels] == [
        ("triton", ["sin"]), ("triton", ["add", "cos", "mul"])]
    torch.testing.assert_close(w.after.outputs, lines(x))
    before, after = w.sides
    # Inductor's own estimate: x read and cos written (2 x 64 MiB); then a written and read again (4 x 64 MiB)
    assert before.bytes == pytest.approx(2 * 4096 * 4096 * 4, rel=0.01)
    assert after.bytes == pytest.approx(4 * 4096 * 4096 * 4, rel=0.01)


def test_unfusing_a_loop_of_three_lines_gives_one_triton_kernel_per_line_each_timed(stored):
    x, _, _, cut = stored
    assert [(k.language, sorted(k.post_grad_nodes)) for k in cut.after.kernels] == [
        ("triton", ["sin"]), ("triton", ["add", "mul"]), ("triton", ["cos"])]
    assert [len(k.user_lines) for k in cut.after.kernels] == [1, 1, 1]
    torch.testing.assert_close(cut.after.outputs, lines(x))
    before, after = cut.sides
    assert all(k.ms is not None and k.ms > 0 for k in before.kernels + after.kernels), (before, after)
    assert len(after.line_ms) == 3 and before.numerics_ok is True and after.numerics_ok is True
