"""GPU tests: run with `pytest -m gpu` on a CUDA machine (skipped elsewhere, with the reason)."""

from __future__ import annotations

import pytest
import torch

import explorer
from compiler._torch import benchmark_harness
from tests import gpu_edits, workloads
from tests.paths import ROOT

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def pointwise():
    x = torch.randn(2048, 2048, device="cuda")
    return explorer.compile(workloads.reduction_with_pointwise, x), x


@pytest.fixture(scope="module")
def big_pointwise():
    x = torch.randn(4096, 4096, device="cuda")
    return explorer.compile(workloads.bf16_roundtrip, x), x


def _triton(c):
    return [k for g in c.graphs for k in g.kernels if k.language == "triton"]


def test_capture_on_cuda_gives_triton_kernels_with_provenance(pointwise):
    c, x = pointwise
    torch.testing.assert_close(c.outputs, workloads.reduction_with_pointwise(x))
    (kernel,) = _triton(c)
    assert "@triton.jit" in kernel.source and "def get_args" in kernel.source
    assert kernel.line_nodes and kernel.fx_nodes and kernel.user_lines
    assert any("relu" in names for names in kernel.line_nodes.values())
    assert kernel.meta["heuristic"] in ("reduction", "persistent_reduction")
    assert kernel.meta["num_warps"] >= 1 and kernel.meta["grid"][0] >= 1
    assert c.device == "cuda" and c.triton


def test_the_kernel_harness_costs_no_stderr_line_and_no_import_in_compile_workers(capsys):
    x = torch.randn(64, 64, device="cuda")
    c = explorer.compile(workloads.reduction_with_pointwise, x)
    source = _triton(c)[0].source
    assert "def get_args" in source  # the harness is there, so Inductor printed the notice
    assert "Compiled module path" not in capsys.readouterr().err
    assert benchmark_harness.EAGER_IMPORT not in source.splitlines()
    assert benchmark_harness.LAZY_IMPORT.splitlines()[0] in source.splitlines()


def test_max_autotune_records_choices_and_counts_them_as_progress():
    a, b = torch.randn(256, 256, device="cuda"), torch.randn(256, 256, device="cuda")
    steps = []
    c = explorer.compile(lambda x, y: torch.relu(x @ y), a, b, config={"max_autotune": True},
                         progress_display=steps.append)
    records = [r for g in c.graphs for r in g.autotune if r.source == "select_algorithm"]
    assert len(records) >= 2 and all(r.time_ms > 0 for r in records)
    assert sum(r.chosen for r in records) == 1
    assert c.timings["autotuning"] > 0
    counted = [s.done for s in steps if s.stage == "autotuning"]
    assert counted == list(range(1, len(c.graphs[0].autotune) + 1))
    assert not [r.kernel for r in c.graphs[0].autotune if r.kernel.startswith("Placeholder.")]  # real names


def test_bench_figures_are_sane(big_pointwise):
    c, _ = big_pointwise
    (kernel,) = _triton(c)
    result = kernel.bench()
    assert result.ms > 0 and result.bytes and result.bytes >= 4096 * 4096 * 8
    assert 0 < result.bandwidth_fraction <= 1
    assert 0 < result.peak_fraction <= 1
    assert result.sources["bandwidth"]
    whole = c.bench()
    assert whole.compiled_ms > 0 and whole.eager_ms > 0 and len(whole.kernels) == 1
    assert len(c.graphs) == 1 and not c.recompiles  # timed as captured: no recompile for another grad mode


def test_edit_equivalent_matches_and_wrong_mismatches(big_pointwise):
    c, _ = big_pointwise
    (kernel,) = _triton(c)
    good = kernel.edit(gpu_edits.equivalent(kernel.source))
    assert good.ok and good.matches and good.edited_ms > 0, good
    bad = kernel.edit(gpu_edits.wrong(kernel.source), bench=False)
    assert bad.ok and not bad.matches and bad.max_rel_error > 0.1, bad


def test_edit_errors_are_reported_and_session_survives(big_pointwise):
    c, _ = big_pointwise
    (kernel,) = _triton(c)
    broken = kernel.edit(gpu_edits.syntax_error(kernel.source), bench=False)
    assert not broken.ok and broken.stage == "syntax" and broken.line is not None
    fault = kernel.edit(gpu_edits.out_of_bounds(kernel.source), bench=False)
    assert not fault.ok and fault.stage in ("device fault", "compile", "worker"), fault
    assert "illegal" in (fault.error or "").lower() or "died" in (fault.error or "") or "CUDA" in (fault.error or "")
    assert torch.equal(c.run(), c.outputs)  # our CUDA context and the compiled kernel are fine
    assert kernel.bench().ms > 0


def test_deterministic_mode_reruns_bitwise_equal():
    x = torch.randn(512, 1024, device="cuda")
    c = explorer.compile(workloads.reduction_with_pointwise, x, config={"deterministic": True})
    report = c.check_determinism(runs=5)
    assert report.bitwise_equal and report.deterministic_mode
    assert report.autotuned_kernels == []


def test_native_matmul_replaces_extern_mm():
    args = (torch.randn(128, 64, device="cuda"), torch.randn(64, 96, device="cuda"), torch.randn(96, device="cuda"))
    default = explorer.compile(workloads.matmul_epilogue, *args)
    native = explorer.compile(workloads.matmul_epilogue, *args, config={"native_matmul": True})
    assert any(k.language == "extern" for k in default.graphs[0].kernels)
    assert not any(k.language == "extern" for k in native.graphs[0].kernels)
    assert any("tl.dot" in k.source for k in native.graphs[0].kernels)
    torch.testing.assert_close(native.outputs, default.outputs, atol=1e-2, rtol=1e-2)


def test_loop_ordering_after_fusion_changes_fusion_on_gpu():
    x, y = torch.randn(1024, 1024, device="cuda"), torch.randn(1024, 1024, device="cuda")
    on = explorer.compile(workloads.transposed_add, x, y, config={"loop_ordering_after_fusion": True})
    off = explorer.compile(workloads.transposed_add, x, y, config={"loop_ordering_after_fusion": False})
    assert len(on.graphs[0].kernels) < len(off.graphs[0].kernels)


def test_edit_works_from_a_plain_script(tmp_path):
    script = tmp_path / "edit_script.py"
    script.write_text(
        "import torch, explorer\n"
        "from tests import gpu_edits, workloads\n"
        "c = explorer.compile(workloads.bf16_roundtrip, torch.randn(1024, 1024, device='cuda'))\n"
        "k = next(k for g in c.graphs for k in g.kernels if k.language == 'triton')\n"
        "print('RESULT', k.edit(gpu_edits.equivalent(k.source), bench=False).matches)\n"
    )
    import os
    import subprocess
    import sys

    root = str(ROOT)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, PYTHONPATH=root), cwd=root)
    assert "RESULT True" in done.stdout, done.stderr[-2000:]


# ------------------------------------------------------------------------------- Inductor systems (GPU)


def test_block_pointers_show_in_triton_kernels():
    x = torch.randn(512, 1024, device="cuda")
    c = explorer.compile(workloads.reduction_with_pointwise, x, config={"use_block_ptr": True})
    uses = c.features("block_ptr")
    assert uses and all(u.detail["block_pointers"] >= 1 and u.nodes for u in uses)
    assert not explorer.compile(workloads.reduction_with_pointwise, x).features("block_ptr")
    torch.testing.assert_close(c.outputs, workloads.reduction_with_pointwise(x))


def test_combo_kernels_combine_independent_kernels():
    args = tuple(torch.randn(*shape, device="cuda") for shape in ((256, 256), (1024,), (64, 512)))
    c = explorer.compile(workloads.independent_pointwise, *args, config={"combo_kernels": True})
    (combo,) = c.features("combo_kernel")
    assert len(combo.detail["sub_kernels"]) >= 2 and all(combo.detail["sub_kernel_nodes"])
    assert c.provenance().complete
    assert not explorer.compile(workloads.independent_pointwise, *args).features("combo_kernel")
    for got, want in zip(c.outputs, workloads.independent_pointwise(*args)):
        torch.testing.assert_close(got, want)


def test_pad_mm_records_its_decision():
    a = torch.randn(2048, 2047, device="cuda", dtype=torch.float16)
    b = torch.randn(2047, 2048, device="cuda", dtype=torch.float16)
    c = explorer.compile(workloads.matmul, a, b, config={"autoheuristic_use": "pad_mm"})
    (decision,) = c.features("pad_mm")
    assert decision.detail["padding"]["k"] == 1 and decision.nodes and decision.summary
    assert "autoheuristic" in decision.detail or "cached" in decision.detail
    torch.testing.assert_close(c.outputs, a @ b, atol=1e-1, rtol=1e-2)


def test_split_scan_allocates_a_workspace():
    x = torch.randint(-4, 5, (1 << 20,), device="cuda").float()  # small integers: every order sums exactly
    c = explorer.compile(workloads.running_sum, x)
    (scan,) = c.features("split_scan")
    assert scan.detail["workspaces"] and scan.wrapper_lines
    assert torch.equal(c.outputs, torch.cumsum(x, 0))


def test_indirect_indexing_gets_a_device_assert():
    ids, table = torch.randint(0, 512, (256,), device="cuda"), torch.randn(512, 64, device="cuda")
    c = explorer.compile(workloads.embedding_lookup, ids, table)
    (check,) = c.features("bound_check")
    kernel = next(k for k in c.kernels if k.id == check.kernel)
    assert any("tl.device_assert" in kernel.lines[i - 1] for i in check.lines) and "embedding" in check.nodes
