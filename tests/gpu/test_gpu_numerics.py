"""GPU: c.check_numerics() on Triton kernels, and an edited kernel that is wrong (run with `pytest -m gpu`)."""

from __future__ import annotations

import pytest
import torch

import explorer
from tests import gpu_edits, workloads

pytestmark = pytest.mark.gpu


def test_bf16_drift_is_flagged_at_the_triton_kernel():
    torch.manual_seed(0)
    args = (torch.randn(64, 32, device="cuda"), torch.randn(32, 128, device="cuda"))
    c = explorer.compile(workloads.bf16_cancellation, *args)
    report = c.check_numerics()
    fused = next(k for k in c.kernels if k.language == "triton")
    assert report.first_divergent == fused.id, report.kernels
    assert report.kernels[fused.id].compiled_vs_float64 < report.kernels[fused.id].eager_vs_float64
    emulated = explorer.compile(workloads.bf16_cancellation, *args, config={"emulate_precision_casts": True})
    assert emulated.check_numerics().ok


def test_a_wrong_edit_is_caught_and_the_original_kernel_kept():
    x = torch.randn(1024, 512, device="cuda")
    c = explorer.compile(workloads.reduction_with_pointwise, x)
    (kernel,) = [k for k in c.kernels if k.language == "triton"]
    clean = c.check_numerics()
    assert clean.ok, clean.kernels
    edited = c.check_numerics(edits={kernel.id: gpu_edits.wrong(kernel.source)})
    assert edited.first_divergent == kernel.id and edited.edited == [f"g0/{kernel.id}"]
    assert edited.kernels[kernel.id].max_rel > 0.1
    assert c.check_numerics().ok  # the compiled program runs the original kernel again
    torch.testing.assert_close(c.run(), workloads.reduction_with_pointwise(x))


def test_an_edit_runs_inside_the_whole_program_and_the_original_comes_back():
    x = torch.randn(1024, 512, device="cuda")
    c = explorer.compile(workloads.reduction_with_pointwise, x)
    (kernel,) = [k for k in c.kernels if k.language == "triton"]
    before = c.run().clone()
    with c.with_edits({kernel: gpu_edits.wrong(kernel.source)}) as edited:
        assert edited == [f"{kernel.graph.id}/{kernel.id}"]
        changed = c.run().clone()
        profile = c.profile(runs=3, warmup=1)
        report = c.check_numerics()
    assert not torch.allclose(changed, before)
    assert profile.ms(kernel) > 0  # the edited kernel's time, attributed to the kernel it replaced
    assert report.first_divergent == kernel.id
    assert torch.equal(c.run(), before)  # the original is back
    with c.with_edits({kernel.id: gpu_edits.equivalent(kernel.source)}):
        torch.testing.assert_close(c.run(), before)
    with pytest.raises(ValueError, match="does not run"), c.with_edits({kernel: gpu_edits.syntax_error(kernel.source)}):
        pass
    assert torch.equal(c.run(), before)
