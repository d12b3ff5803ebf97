"""GPU: c.profile() on CUDA (CUPTI) and k.bench() agreeing with the time in place (run with `pytest -m gpu`)."""

from __future__ import annotations

import pytest
import torch

import explorer
from tests.workloads import TransformerBlock

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def block():
    torch.manual_seed(0)
    model = TransformerBlock(1024, 16).eval().cuda()
    x = torch.randn(8, 512, 1024, device="cuda")
    with torch.no_grad():
        c = explorer.compile(model, x)
    return c, c.profile(runs=20)


def test_cuda_profile_attributes_triton_kernels_and_extern_calls(block):
    c, p = block
    assert p.device == "cuda"
    languages = {ref.language for ref in p.kernels.values()}
    assert {"triton", "extern"} <= languages
    assert all(ms > 0 for ms in p.kernel_ms.values()), p.kernel_ms  # cuBLAS / flash attention included
    assert p.attributed_ms >= 0.9 * p.total_ms, p
    assert p.line_ms and all(file.endswith("tests/workloads.py") for file, _ in p.line_ms)


def test_bench_agrees_with_time_in_place(block):
    c, p = block
    checked = []
    for kernel in c.kernels:
        if kernel.language != "triton" or p.ms(kernel) * 1e3 < 5:
            continue
        ratio = kernel.bench().ms / p.ms(kernel)
        checked.append((kernel.id, ratio))
    assert checked, "no Triton kernel of at least 5 us in place"
    assert all(0.9 <= ratio <= 1.1 for _, ratio in checked), checked


def test_cuda_chrome_trace_names_gpu_kernels_by_id(tmp_path, block):
    import json

    _, p = block
    trace = json.loads(p.export_chrome_trace(tmp_path / "t.json").read_text())
    gpu_names = {e["name"] for e in trace["traceEvents"] if e.get("cat") == "kernel"}
    assert {k for k, ref in p.kernels.items() if ref.language == "triton"} <= gpu_names


def test_cuda_training_step_attributes_forward_and_backward_graphs():
    # The backward graph runs on autograd's device thread: its kernels are found under its own graph
    # mark there. Every graph gets time, and what stays unattributed is named.
    torch.manual_seed(0)
    model = torch.nn.Sequential(TransformerBlock(256, 4), TransformerBlock(256, 4)).cuda()
    x = torch.randn(4, 128, 256, device="cuda", requires_grad=True)
    c = explorer.compile(model, x, backward=True)
    p = c.profile(runs=5, warmup=1)
    assert len(c.graphs) == 2
    for graph in c.graphs:
        assert sum(ms for key, ms in p.kernel_ms.items() if p.kernels[key].graph == graph.id) > 0, graph.id
    assert p.attributed_ms >= 0.95 * p.total_ms, (p, p.unattributed)
    assert sum(p.unattributed.values()) == pytest.approx(p.unattributed_ms, abs=1e-6)
    triton = [key for key, ref in p.kernels.items() if ref.language == "triton"]
    assert all(p.kernel_calls[key] >= 1 for key in triton), {k: p.kernel_calls[k] for k in triton}
    assert p.timeline and all(start >= 0 and duration > 0 for _, start, duration in p.timeline)
