"""GPU: a warm capture of a training step serves Triton kernels with their stages, IR and numerics (run with
`pytest -m gpu`)."""

from __future__ import annotations

import pytest
import torch

import explorer
from tests import workloads
from tests.stage_summary import stage_summary

pytestmark = pytest.mark.gpu


def test_a_training_step_on_the_gpu_is_served_with_its_triton_kernels(inductor_cache_dir):
    from torch._dynamo.utils import counters

    torch.manual_seed(0)
    model, x = workloads.TinyMLP().cuda(), torch.randn(64, 16, device="cuda")
    cold = explorer.compile(model, x, backward=True)
    hits = counters["aot_autograd"]["autograd_cache_hit"]
    warm = explorer.compile(model, x, backward=True)

    assert [g.cache for g in cold.graphs] == ["stored", "stored"]
    assert [g.cache for g in warm.graphs] == ["served", "served"]
    assert counters["aot_autograd"]["autograd_cache_hit"] == hits + 1  # served whole: nothing traced again
    for before, after in zip(cold.graphs, warm.graphs):
        assert stage_summary(after) == stage_summary(before)
        ops = {n.name for n in after.post_grad.module.graph.nodes if n.op == "call_function"}
        assert ops == {n.name for n in after.post_grad.nodes if n.op == "call_function"}  # retraced when read
    triton = [k for k in warm.kernels if k.language == "triton"]
    assert triton
    for served in triton:
        original = cold.graphs[served.graph.index].kernel(served.id)
        assert served.ir.stages["ttir"] == original.ir.stages["ttir"]
    torch.testing.assert_close(warm.outputs, model(x))
    report = warm.check_numerics()
    assert report.ok, report.kernels
    assert {row.graph for row in report.kernels.values() if any(b.compared for b in row.buffers)} == \
        {g.id for g in warm.graphs}
    assert triton[0].bench().ms > 0
