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


def drawn(x):
    y = x * 2
    return y + torch.rand_like(y)  # LINE: rand_like


def bf16_scaled_difference(x):
    return ((x * 1.001 - x) * 8).sum(-1)  # LINE: bf16


def _line(marker: str) -> int:
    source = open(__file__).read().splitlines()
    return next(i for i, text in enumerate(source, 1) if text.rstrip().endswith(f"# LINE: {marker}"))


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


def test_fallback_random_names_the_triton_kernel_that_draws_the_numbers_and_its_line():
    r = explorer.bisect(drawn, torch.ones(64, 64, device="cuda"), fusion=False)
    assert (r.backend, r.subsystem) == ("inductor", "inductor_fallback_random"), r
    graph = r.compilation.graphs[0]
    drawing = [k.id for k in graph.kernels if "rand_like" in k.fx_nodes]
    assert len(drawing) == 1 and graph.kernel(drawing[0]).language == "triton", [k.id for k in graph.kernels]
    (changed,) = r.setting.kernels
    assert (changed.kernel, changed.fx_nodes, changed.how) == (drawing[0], ["rand_like"], "lowered differently")
    assert r.kernels == drawing and r.user_lines == [(__file__, _line("rand_like"))]
    links = {c["level"]: c for c in r.culprit_links()}
    assert links["config change"]["kernels"] == drawing and links["config change"]["fx"] == ["rand_like"]


def test_emulate_precision_casts_names_the_triton_kernel_that_rounds_differently_and_its_line():
    x = torch.rand(8, 64, generator=torch.Generator().manual_seed(0)).to(device="cuda", dtype=torch.bfloat16)
    r = explorer.bisect(bf16_scaled_difference, x)
    assert (r.backend, r.subsystem) == ("inductor", "inductor_emulate_precision_casts"), r
    (graph,) = r.compilation.graphs
    (changed,) = r.setting.kernels
    kernel = graph.kernel(changed.kernel)
    assert kernel.language == "triton" and changed.how == "generated differently", changed
    assert "sub" in changed.fx_nodes and set(changed.fx_nodes) <= set(kernel.fx_nodes)
    assert r.kernels == [kernel.id] and r.user_lines == [(__file__, _line("bf16"))]
