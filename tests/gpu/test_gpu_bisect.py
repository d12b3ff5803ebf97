"""GPU: explorer.bisect on Triton kernels (run with `pytest -m gpu`): the culprits of tests/capture/test_bisect.py
found again when Inductor writes Triton, in this process and in a worker on a GPU of its own."""

from __future__ import annotations

import pytest
import torch
from torch._inductor import config as inductor_config

import explorer

pytestmark = pytest.mark.gpu


def noisy(x):
    return x + torch.rand(x.shape, device=x.device)


def bf16_kept_in_float32(x, w):
    z = w * 2
    y = x + 1000
    return z, (z * 2).sum(), y, (y - 1000).sum()


def test_rand_in_a_triton_kernel_is_blamed_on_fallback_random():
    config = inductor_config.save_config()
    r = explorer.bisect(noisy, torch.ones(64, 64, device="cuda"))
    assert (r.backend, r.subsystem) == ("inductor", "inductor_fallback_random"), r
    assert r.avoided_by == {"fallback_random": True} and r.avoided_by_checked
    assert inductor_config.save_config() == config


def test_a_triton_fusion_that_keeps_bf16_in_float32_names_group_and_kernel(tmp_path):
    generator = torch.Generator().manual_seed(0)
    x = torch.rand(8, 64, generator=generator).to(device="cuda", dtype=torch.bfloat16)
    w = torch.rand(16, 32, generator=generator).to(device="cuda", dtype=torch.bfloat16)
    r = explorer.bisect(bf16_kept_in_float32, x, w)
    assert r.status == "diverges" and r.backend == "inductor", r
    assert r.subsystem == "inductor_emulate_precision_casts", r
    assert r.fusion is not None and {"add", "sub"} <= set(r.fusion.nodes), (r.fusion, r.fusion_note)
    graph = r.compilation.graph(r.fusion.graph)
    assert r.kernels and all(k.language == "triton" for k in graph.kernels if k.id in r.kernels)
    assert r.user_lines
    assert r.repro(tmp_path / "culprit.py").exists()


def test_trials_in_a_gpu_worker_find_the_same_culprit():
    r = explorer.bisect(noisy, torch.ones(64, 64, device="cuda"), workers=1)
    assert r.engine == "local" and r.status == "diverges", r
    assert (r.backend, r.subsystem) == ("inductor", "inductor_fallback_random"), r
    assert not [t for t in r.trials if t.outcome == "crashed"], [(t.what, t.detail) for t in r.trials]
