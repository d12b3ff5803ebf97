"""A sweep on the GPU machine: one worker per GPU, each row saying its GPU, peak memory measured."""

from __future__ import annotations

import pytest
import torch

import explorer
from tests import workloads
from tests.plain_timing import fresh_process_ms

pytestmark = pytest.mark.gpu


def test_points_run_one_per_gpu_with_measured_peaks():
    x = torch.randn(256, 256, device="cuda")
    result = explorer.sweep(workloads.matmul_relu, x, grid={"inplace_buffers": [False, True]}, runs=3)
    assert [r.status for r in result.rows] == ["ok", "ok"], [r.error for r in result.rows]
    gpus = [r.gpu for r in result.rows]
    assert all(g.startswith("cuda:") for g in gpus)
    assert len(set(gpus)) == min(2, torch.cuda.device_count())  # each worker is pinned to its own GPU
    for row in result.rows:
        assert row.peak_bytes > 0, row
        assert row.ok is True and row.max_error is not None and row.kernels >= 1, (row, row.max_error)  # compared
        assert result[row.index].device == "cuda"  # the point opens as a GPU compilation


def test_run_ms_is_a_call_as_the_program_sees_it():
    """run_ms was a profiled run's wall time: 4.4-9.4x a call of plain torch.compile at these sizes
    (1.04x now at the launch-bound size; it was 1.24x when timed after the profile in the worker).
    Plain torch.compile is timed in a fresh process, as the worker is."""
    sizes = ((4096, 2048), (8192, 4096))
    inputs = [(torch.randn(rows, cols, device="cuda", dtype=torch.float16),
               torch.randn(cols, device="cuda", dtype=torch.float16)) for rows, cols in sizes]
    with torch.no_grad():
        result = explorer.sweep(workloads.rmsnorm_gate_cumsum, input_sets=inputs, configs=[{}], runs=20, workers=1,
                                check=False)
    # Plain torch.compile in three fresh processes: one program's time moves from process to process (at the
    # kernel-bound size 0.074 ms in one run, 0.092 ms in the next), so run_ms is held against their range.
    plain = [[fresh_process_ms("rmsnorm_gate_cumsum", (rows, cols), (cols,)) for _ in range(3)] for rows, cols in sizes]
    # Launch-bound (12 us of kernels in a 40-90 us call), one process's launches run up to 2x faster
    # than another's on these hosts (0.53x and 1.74x seen on an H200): only the old harness (>= 4.4x)
    # is caught there. Where the kernels dominate, the two must agree closely.
    bounds = [(0.4, 2.5), (0.85, 1.15)]
    for row, expected, (low, high) in zip(result.rows, plain, bounds):
        assert row.status == "ok", row.error
        assert low * min(expected) < row.run_ms < high * max(expected), (row.shapes, row.run_ms, expected)
        assert row.device_ms <= row.run_ms * 1.05 and row.threads is None


def test_a_points_kernel_ir_is_built_where_it_is_opened():
    """The worker sends each Triton kernel's IR unbuilt; reading it disassembles it here; saving builds it."""
    import json

    x = torch.randn(256, 256, device="cuda")
    result = explorer.sweep(workloads.matmul_relu, x, configs=[{}], runs=2, check=False)
    trace = json.loads(result.traces[0])
    irs = [k["ir"] for g in trace["graphs"] for k in g["kernels"] if k.get("ir")]
    assert irs and all(list(ir) == ["raw"] for ir in irs)  # no SASS or line map was made in the worker
    kernel = next(k for k in result[0].kernels if k.ir is not None)
    assert kernel.ir.pending is not None
    assert "LDG" in kernel.ir.stages["sass"]  # disassembled on this side
    assert any(line is not None for line in kernel.ir.line_map["sass"])  # mapped back to the kernel's lines
