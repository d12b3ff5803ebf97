"""CPU checks of real GPU traces (recorded with `python -m tests.record_gpu_fixtures` on an H200,
torch 2.11 + Triton 3.6): Triton views, provenance and autotune tables load and hold together."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

import explorer
from tests.paths import FIXTURES

NAMES = ["gpu_default", "gpu_native_matmul", "gpu_deterministic", "gpu_max_autotune", "gpu_training", "gpu_profile"]


@pytest.fixture(scope="module", params=NAMES)
def trace(request):
    return request.param, explorer.load(FIXTURES / f"{request.param}.json")


def test_traces_were_recorded_on_cuda_with_triton(trace):
    name, c = trace
    assert c.device == "cuda" and c.triton and "NVIDIA" in c.device_name
    assert any(k.language in ("triton", "template") for k in c.kernels)


def test_triton_kernels_carry_line_provenance_and_launch_meta(trace):
    _, c = trace
    for graph in c.graphs:
        for kernel in graph.kernels:
            assert kernel.fx_nodes and kernel.user_lines, kernel
            if kernel.language not in ("triton", "template"):
                continue
            assert "@triton.jit" in kernel.source
            assert kernel.line_nodes, kernel
            for line, names in kernel.line_nodes.items():
                assert set(names) <= set(kernel.post_grad_nodes)
                assert kernel.lines[line - 1].strip()
            assert kernel.meta["heuristic"] and kernel.meta["num_warps"] >= 1
            if kernel.language == "triton":
                assert kernel.meta["grid"] and all(d >= 1 for d in kernel.meta["grid"])


def test_native_matmul_trace_has_tl_dot_and_no_extern_mm():
    default = explorer.load(FIXTURES / "gpu_default.json")
    native = explorer.load(FIXTURES / "gpu_native_matmul.json")
    assert native.toggles == {"native_matmul": True}
    assert any(k.language == "extern" and "mm" in k.name for k in default.kernels)
    assert not any(k.language == "extern" for k in native.kernels)
    (dot,) = [k for k in native.kernels if "tl.dot" in k.source]
    assert {"y", "gelu"} <= set(dot.fx_nodes)  # matmul and epilogue in one kernel


def test_autotune_tables_mark_one_winner_per_kernel():
    for name in ("gpu_max_autotune", "gpu_native_matmul"):
        c = explorer.load(FIXTURES / f"{name}.json")
        records = [r for g in c.graphs for r in g.autotune]
        assert records and all(r.time_ms > 0 for r in records)
        for kernel in {r.kernel for r in records}:
            rows = [r for r in records if r.kernel == kernel]
            assert sum(r.chosen for r in rows) == 1
            best = min(rows, key=lambda r: r.time_ms)
            assert best.chosen
    tuned = explorer.load(FIXTURES / "gpu_max_autotune.json")
    assert any(r.source == "select_algorithm" for g in tuned.graphs for r in g.autotune)
    assert any(k.language == "template" for k in tuned.kernels)


def test_deterministic_trace_skipped_autotuning():
    c = explorer.load(FIXTURES / "gpu_deterministic.json")
    assert c.inductor_overrides.get("deterministic") is True
    assert all(not g.autotune for g in c.graphs)


def test_training_trace_has_backward_triton_kernels():
    c = explorer.load(FIXTURES / "gpu_training.json")
    assert [g.kind for g in c.graphs] == ["forward", "backward"]
    assert any(k.language == "triton" for k in c.graphs[1].kernels)


def test_triton_kernel_renders(trace):
    _, c = trace
    kernel = next(k for k in c.kernels if k.language in ("triton", "template"))
    console = Console(file=io.StringIO(), width=160, color_system=None)
    console.print(kernel)
    assert kernel.id in console.file.getvalue() and "tl." in console.file.getvalue()
    assert kernel.id in kernel._repr_html_()


def test_only_triton_kernels_can_be_edited():
    from compiler.runs.edit import KernelEditError

    c = explorer.load(FIXTURES / "gpu_default.json")
    extern = next(k for k in c.kernels if k.language == "extern")
    with pytest.raises(KernelEditError, match="only Triton kernels can be edited"):
        extern.edit("x")


def test_recorded_gpu_profile_attributes_cuda_time():
    c = explorer.load(FIXTURES / "gpu_profile.json")
    (p,) = c.profiles
    assert p.device == "cuda" and p.runs == 10
    languages = {ref.language for ref in p.kernels.values()}
    assert {"triton", "extern"} <= languages
    assert all(ms > 0 for ms in p.kernel_ms.values())
    assert p.attributed_ms >= 0.8 * p.total_ms and sum(p.fraction.values()) <= 1 + 1e-9
    assert p.line_ms and all(file.endswith("tests/workloads.py") for file, _ in p.line_ms)
    console = Console(file=io.StringIO(), width=160, color_system=None)
    console.print(p)
    assert p.top_kernels(1)[0][0] in console.file.getvalue()
