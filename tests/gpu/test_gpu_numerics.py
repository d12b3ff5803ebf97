"""GPU: c.check_numerics() on Triton kernels, an edited kernel that is wrong, and a bf16 Llama whose matmuls only carry rounding in (run with `pytest -m gpu`)."""

from __future__ import annotations

import pytest
import torch

import explorer
from compiler.model.numerics import Divergence
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


@pytest.fixture(scope="module")
def llama():
    """transformers' Llama from its config, as issue 65 measured it: bfloat16, 8 layers, hidden 2048,
    4 x 512 tokens, random weights, SDPA."""
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(num_hidden_layers=8, hidden_size=2048, intermediate_size=5504, num_attention_heads=16,
                         num_key_value_heads=4, vocab_size=32000, max_position_embeddings=512, use_cache=False,
                         attn_implementation="sdpa")
    with torch.device("cuda"):
        model = LlamaForCausalLM(config).to(torch.bfloat16).eval()
    ids = torch.randint(0, config.vocab_size, (4, 512), device="cuda")
    with torch.no_grad():
        c = explorer.compile(model, ids)
    return c, c.check_numerics()


def test_no_extern_kernel_of_a_bf16_llama_is_first_divergent(llama):
    c, report = llama
    externs = [row for row in report.kernels.values() if row.language == "extern" and row.compared]
    assert len(externs) >= 7 * 8  # q, k, v, o, gate, up and down of every layer
    # their propagated errors leave tolerance (the check named extern_kernels.mm:2 before local errors) ...
    assert any(row.ok is False for row in externs)
    # ... but each, run again on the arguments the program gave it, adds no error of its own
    assert all(row.local_ok is True for row in externs if row.ok is False), [row for row in externs if row.ok is False]
    assert not any(report.kernels[key].language == "extern" for key in report.locally_divergent)
    if report.first_divergent is not None:
        first = report.kernels[report.first_divergent]
        assert first.language == "triton" and first.divergence is Divergence.LOCAL


def test_a_wrong_kernel_in_the_llama_is_still_found(llama):
    c, clean = llama
    silu = next(k for k in c.kernels if k.language == "triton" and "silu" in k.name)  # act_fn(gate) * up
    assert clean.kernels[silu.id].local_ok is not False  # its own error, where it was traced, is within tolerance
    edited = c.check_numerics(edits={silu.id: gpu_edits.wrong(silu.source)})
    row = edited.kernels[silu.id]
    assert row.divergence is Divergence.LOCAL and row.local_max_rel > 0.3 and silu.id in edited.locally_divergent
    order = list(edited.kernels)  # execution order of first calls
    # named first unless a kernel before it introduces an error of its own (a fused kernel's rounding)
    first = edited.first_divergent
    assert order.index(first) <= order.index(silu.id) and edited.kernels[first].divergence is Divergence.LOCAL
    assert edited.kernels[first].language == "triton"
    # the down projection reads the wrong values: its propagated error leaves tolerance, its own does not
    down = edited.kernels[order[order.index(silu.id) + 1]]
    assert down.language == "extern" and down.ok is False and down.local_ok is True
    assert down.divergence is Divergence.PROPAGATED
