"""GPU: c.what_if(unfuse=...) on a Triton pointwise chain, kernels counted and timed (run with `pytest -m gpu`)."""

from __future__ import annotations

import pytest
import torch

import explorer

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
