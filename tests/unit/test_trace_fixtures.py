"""The NCCL run of examples/two_ranks.py on 2 GPUs, recorded into tests/fixtures/torch_trace_nccl/
(``python -m tests.record_trace_fixtures`` on a 2-GPU machine), read on CPU: Triton kernels,
collectives, and the same divergence as the gloo run."""

from __future__ import annotations


import pytest

import explorer
from tests.paths import FIXTURES

FIXTURE = FIXTURES / "torch_trace_nccl"


@pytest.fixture(scope="module")
def traces():
    if not FIXTURE.is_dir():
        pytest.fail(f"{FIXTURE} is not recorded yet: run `PYTHONPATH=. python -m tests.record_trace_fixtures` "
                    "on a machine with 2 GPUs")
    return explorer.load_trace(FIXTURE)


def test_two_gpu_ranks_with_triton_kernels(traces):
    assert list(traces.ranks) == ["0", "1"]
    assert traces[0].compile_ids == ["0/0"] and traces[1].compile_ids == ["0/0", "1/0", "0/1"]
    for rank in traces:
        assert not rank.summary.problems, rank.summary.problems
        for c in rank:
            assert c.device == "cuda" and c.torch.startswith("2.")
    graph = traces[0]["0/0"].graphs[0]
    triton = [k for k in graph.kernels if k.language == "triton"]
    assert triton and all("@triton.jit" in k.source and k.meta.get("heuristic") for k in triton)
    assert any(k.post_grad_nodes and k.user_lines for k in triton)  # provenance was on
    assert any(k.user_lines and k.user_lines[0][0].endswith("examples/two_ranks.py") for k in triton)
    assert any("all_reduce" in k.name for k in graph.kernels if k.language == "extern")


def test_the_nccl_ranks_diverge_like_the_gloo_ones(traces):
    kinds = {d.kind for d in traces.divergence}
    assert {"graph", "recompile", "graph_break"} <= kinds
    assert [d.compile_id for d in traces.divergence if d.kind == "graph"] == ["0/0", "1/0", "0/1"]
    assert traces[1]["0/1"].recompiles[0].reasons[0].startswith("0/0: n == 1")
