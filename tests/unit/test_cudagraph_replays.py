"""Whether a profile saw the kernels inside CUDA graph replays (compiler/runs/cudagraph_attribution.py).

On some CUDA versions CUPTI reports a ``cudaGraphLaunch`` and none of the kernels it ran; c.profile() then
records the runs again with the same kernels launched one by one. These are the answers it decides on,
read against the CUDA graph traces recorded on an H200 (tests/record_cudagraph_fixtures.py).
"""

from __future__ import annotations

import explorer
from compiler.model.keys import kernel_keys
from compiler.model.profile import KernelRef
from compiler.runs.cudagraph_attribution import replays_unseen
from tests.paths import FIXTURES


def _loaded(name: str):
    c = explorer.load(FIXTURES / f"{name}.json")
    return c, c.profiles[0].kernels if c.profiles else None


def test_no_time_for_any_captured_kernel_is_an_unseen_replay():
    c, refs = _loaded("gpu_cudagraphs_mlp")
    assert replays_unseen(c, refs, {})
    assert replays_unseen(c, refs, dict.fromkeys(refs, 0.0))


def test_one_captured_kernel_timed_is_a_replay_seen():
    c, refs = _loaded("gpu_cudagraphs_mlp")
    first = next(iter(refs))
    assert not replays_unseen(c, refs, {first: 3.5})


def test_time_outside_the_captured_partitions_leaves_the_replays_unseen():
    c = explorer.load(FIXTURES / "gpu_cudagraphs_partitions.json")
    (graph,) = c.graphs
    keys = kernel_keys(c)
    refs = {keys[(graph.id, k.id)]: KernelRef(graph.id, k.id, k.language) for k in graph.kernels}
    left_out = {k for p in graph.cudagraphs.partitions if not p.captured for k in p.kernels}
    assert left_out and not replays_unseen(c, refs, {keys[(graph.id, k.id)]: 1.0 for k in graph.kernels})
    assert replays_unseen(c, refs, {keys[(graph.id, k)]: 1.0 for k in left_out})


def test_a_compilation_without_cuda_graphs_has_no_replay_to_miss():
    c = explorer.load(FIXTURES / "widget_sample.json")
    refs = {key: KernelRef(g, k, "cpp") for (g, k), key in kernel_keys(c).items()}
    assert refs and not replays_unseen(c, refs, {})
