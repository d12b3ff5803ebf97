"""Each Inductor system has a visible effect in the capture (``c.features()``), tied to its evidence.

CPU systems are compiled here; GPU-only ones (block pointers, combo kernels, shape padding, split scans,
Triton device asserts) are checked on traces recorded on a GPU by ``python -m tests.record_gpu_fixtures``
(their live counterparts are in tests/gpu/test_gpu.py).
"""

from __future__ import annotations


import pytest
import torch

import explorer
from compiler.pipeline import feature_scan as features
from compiler._torch import pad_mm_decisions
from tests import workloads
from tests.paths import FIXTURES


def _only(c, system):
    found = c.features(system)
    assert len(found) == 1, f"expected one {system} finding, got {c.features()}"
    return found[0]


def _kernel(c, kernel_id):
    return next(k for k in c.kernels if k.id == kernel_id)


# ------------------------------------------------------------------------------------------ CPU


@pytest.fixture(scope="module")
def embedding():
    torch.manual_seed(0)
    args = (torch.randint(0, 16, (8,)), torch.randn(16, 4))
    return explorer.compile(workloads.embedding_lookup, *args), args


def test_bound_check_points_at_the_check_and_the_indexing_node(embedding):
    c, args = embedding
    check = _only(c, "bound_check")
    kernel = _kernel(c, check.kernel)
    assert check.lines and all("index out of bounds" in kernel.lines[i - 1] for i in check.lines)
    assert "embedding" in check.nodes
    torch.testing.assert_close(c.outputs, workloads.embedding_lookup(*args))


def test_bound_checks_go_away_when_inductor_is_told_indices_are_safe(embedding):
    _, args = embedding
    c = explorer.compile(workloads.embedding_lookup, *args, config={"assert_indirect_indexing": False})
    assert not c.features("bound_check")
    assert not any("index out of bounds" in k.source for k in c.kernels)


def test_view_dtype_is_a_bitcast_in_the_kernel():
    x = torch.randn(64)
    c = explorer.compile(workloads.clear_sign_bit, x)
    bitcast = _only(c, "bitcast")
    assert bitcast.detail["views"] == ["torch.float32 -> torch.int32", "torch.int32 -> torch.float32"]
    assert len(bitcast.nodes) == 2 and all(c.graphs[0].post_grad.node(n).target == "aten.view.dtype"
                                            for n in bitcast.nodes)
    kernel = _kernel(c, bitcast.kernel)
    assert len(bitcast.lines) >= 2 and all("bit_cast<" in kernel.lines[i - 1] for i in bitcast.lines)
    torch.testing.assert_close(c.outputs, x.abs() + 1)


def test_emulated_precision_casts_appear_only_with_the_toggle():
    x = torch.randn(64, 64)
    on = explorer.compile(workloads.bf16_roundtrip, x, config={"emulate_precision_casts": True})
    off = explorer.compile(workloads.bf16_roundtrip, x)
    rounding = _only(on, "low_precision_cast")
    assert len(rounding.lines) == 3  # x.bfloat16(), * 3, + 1: each result rounded to bfloat16
    assert "mul" in rounding.nodes and "add" in rounding.nodes
    assert not off.features("low_precision_cast")


def test_cond_branches_are_subgraphs_with_their_kernels_and_wrapper_functions():
    c = explorer.compile(workloads.branches, torch.randn(8, 8))
    bodies = {f.detail["subgraph"]: f for f in c.features("subgraph")}
    assert set(bodies) == {"true_graph_0", "false_graph_0"}
    graph = c.graphs[0]
    wrapper = graph.wrapper.source.splitlines()
    for path, use in bodies.items():
        assert use.nodes == ("cond",) and "cond" in use.summary
        (kernel_id,) = use.detail["kernels"]
        assert any(n.startswith(f"{path}.") for n in graph.kernel(kernel_id).post_grad_nodes)
        texts = [wrapper[i - 1] for i in use.wrapper_lines]
        assert any(t.startswith(f"def {path}(") for t in texts) and any(f"= {path}(" in t for t in texts)


def test_features_survive_save_and_load(tmp_path, embedding):
    c, _ = embedding
    loaded = explorer.load(c.save(tmp_path / "t.json"))
    assert loaded.features() == c.features() and loaded.to_json() == c.to_json()
    assert "features" not in explorer.load(FIXTURES / "trace_v1.json").to_json()["graphs"][0]  # absent: optional


class _Match:
    def __init__(self, node):
        self._node = node

    def output_node(self):
        return self._node


def test_pad_mm_decisions_record_what_and_why():
    """The adapter around Inductor's pad_mm pass, driven directly: on CPU the pass declines."""
    graph = torch.fx.Graph()
    mm = graph.call_function(torch.ops.aten.mm.default, (graph.placeholder("a"), graph.placeholder("b")))
    seen = []
    mat1, mat2 = torch.empty(64, 63), torch.empty(63, 32)
    from torch._inductor.fx_passes import pad_mm

    original = pad_mm.should_pad
    with pad_mm_decisions.on_pad_mm(seen.append):
        assert pad_mm.should_pad(_Match(mm), mat1, mat2, torch.ops.aten.mm) is False
    assert pad_mm.should_pad is original
    (decision,) = seen
    assert decision["node"] == mm.name and decision["graph_id"] == id(graph)
    assert decision["padding"] == {"m": 0, "k": 1, "n": 0} and decision["shapes"] == [[64, 63], [63, 32]]
    assert decision["pad"] is False and "not a CUDA float matmul" in decision["reason"]
    use = features.pad_mm_features([{**decision, "nodes": ["mm"]}])[0]
    assert use.system == "pad_mm" and use.summary == decision["reason"] and use.nodes == ("mm",)


# ------------------------------------------------------------------------------------------ GPU traces


def _fixture(name):
    path = FIXTURES / f"{name}.json"
    assert path.exists(), f"{path.name} is recorded on a GPU: PYTHONPATH=. python -m tests.record_gpu_fixtures {name}"
    return explorer.load(path)


def test_block_pointers_in_a_recorded_triton_kernel():
    c = _fixture("gpu_block_ptr")
    assert c.toggles == {"use_block_ptr": True}
    uses = c.features("block_ptr")
    assert uses and all(u.detail["block_pointers"] >= 1 for u in uses)
    for use in uses:
        kernel = _kernel(c, use.kernel)
        assert any("tl.make_block_ptr(" in kernel.lines[i - 1] for i in use.lines) and use.nodes
    plain = _fixture("gpu_deterministic")  # the same workload without block pointers
    assert not plain.features("block_ptr")


def test_combo_kernel_names_the_kernels_it_combined():
    c = _fixture("gpu_combo_kernels")
    combo = _only(c, "combo_kernel")
    assert len(combo.detail["sub_kernels"]) >= 2 and all(combo.detail["sub_kernel_nodes"])
    kernel = _kernel(c, combo.kernel)
    ops = {c.graphs[0].post_grad.node(n).target for n in kernel.post_grad_nodes}
    assert {"aten.sin.default", "aten.cos.default", "aten.exp.default"} <= ops
    assert c.provenance().complete


def test_pad_mm_decision_with_autoheuristic_in_a_recorded_trace():
    c = _fixture("gpu_pad_mm")
    decision = _only(c, "pad_mm")
    detail = decision.detail
    assert detail["padding"]["k"] == 1 and detail["op"] == "mm" and decision.nodes
    assert "autoheuristic" in detail or "cached" in detail  # AutoHeuristic consulted (autoheuristic_use=pad_mm)
    targets = {c.graphs[0].post_grad.node(n).target for n in decision.nodes}
    assert any("pad" in t or "cat" in t for t in targets) == detail["pad"]
    assert ("padded k 2047->2048" in decision.summary) == detail["pad"]


def test_split_scan_and_its_workspace_in_a_recorded_trace():
    c = _fixture("gpu_split_scan")
    scan = _only(c, "split_scan")
    kernel = _kernel(c, scan.kernel)
    assert kernel.meta["heuristic"] == "split_scan" and scan.detail["workspaces"]
    wrapper = c.graphs[0].wrapper.source.splitlines()
    texts = [wrapper[i - 1] for i in scan.wrapper_lines]
    assert any(t.strip().startswith("workspace_") and "=" in t for t in texts)
    assert any(".zero_()" in t for t in texts)  # the blocks' shared counters start at zero


def test_device_assert_in_a_recorded_triton_kernel():
    c = _fixture("gpu_bound_check")
    check = _only(c, "bound_check")
    kernel = _kernel(c, check.kernel)
    assert any("tl.device_assert" in kernel.lines[i - 1] for i in check.lines) and "embedding" in check.nodes
