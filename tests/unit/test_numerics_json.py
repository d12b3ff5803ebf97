"""A numerics report's local and propagated errors in JSON, and reports saved before local errors existed."""

from __future__ import annotations

import io
import json

from rich.console import Console

import compiler
from compiler.io import reports
from compiler.model.numerics import BufferCheck, Divergence, KernelNumerics, NumericsReport
from tests.paths import FIXTURES


def _buffer(node: str, ok: bool, local_ok: bool | None, max_rel: float, local_max_rel: float | None) -> BufferCheck:
    return BufferCheck(f"buf_{node}", node, 0, "torch.bfloat16", [4], compared=True, ok=ok, max_abs=max_rel,
                       max_rel=max_rel, mismatched=0.0 if ok else 0.5, rtol=1.6e-2, atol=1e-5,
                       local_ok=local_ok, local_max_abs=local_max_rel, local_max_rel=local_max_rel,
                       local_mismatched=None if local_ok is None else (0.0 if local_ok else 0.25))


def _report() -> NumericsReport:
    """A pointwise kernel within tolerance, a matmul outside it only by what its inputs carried, and a kernel
    whose own error leaves tolerance."""
    rows = {
        "cpp_fused_add_0": KernelNumerics("cpp_fused_add_0", "g0", "cpp_fused_add_0", "cpp", 1,
                                          [_buffer("add", True, True, 0.004, 0.004)]),
        "extern_kernels.mm": KernelNumerics("extern_kernels.mm", "g0", "extern_kernels.mm", "extern", 1,
                                            [_buffer("mm", False, True, 0.02, 0.0)]),
        "cpp_fused_sub_1": KernelNumerics("cpp_fused_sub_1", "g0", "cpp_fused_sub_1", "cpp", 1,
                                          [_buffer("sub", False, False, 0.5, 0.5)]),
    }
    return NumericsReport("eager", "cpu", None, None, rows, "cpp_fused_sub_1")


def test_each_row_says_which_error_leaves_tolerance_and_survives_json():
    report = _report()
    data = json.loads(json.dumps(reports.numerics_to_json(report), allow_nan=False))
    assert [(k["key"], k["divergence"], k["local_ok"], k["local_max_rel"]) for k in data["kernels"]] == [
        ("cpp_fused_add_0", None, True, 0.004), ("extern_kernels.mm", "propagated", True, 0.0),
        ("cpp_fused_sub_1", "local", False, 0.5)]
    assert data["kernels"][1]["buffers"][0]["local_mismatched"] == 0.0
    loaded = reports.numerics_from_json(data)
    assert loaded == report
    assert [row.divergence for row in loaded.kernels.values()] == [None, Divergence.PROPAGATED, Divergence.LOCAL]
    assert loaded.divergent == ["extern_kernels.mm", "cpp_fused_sub_1"] and loaded.locally_divergent == ["cpp_fused_sub_1"]
    assert repr(loaded).endswith("first divergent kernel: cpp_fused_sub_1 (local error))")


def test_a_report_saved_before_local_errors_loads_with_its_propagated_errors():
    data = reports.numerics_to_json(_report())
    for row in data["kernels"]:
        for key in ("local_ok", "local_max_abs", "local_max_rel", "local_mismatched", "divergence"):
            del row[key]
        for buffer in row["buffers"]:
            for key in ("local_ok", "local_max_abs", "local_max_rel", "local_mismatched"):
                del buffer[key]
    data["first_divergent"] = "extern_kernels.mm"  # what the propagated comparison alone named
    old = reports.numerics_from_json(data)
    assert old.first_divergent == "extern_kernels.mm" and old.locally_divergent == []
    assert all(row.local_ok is None and row.local_max_rel is None for row in old.kernels.values())
    # the rows say which error their verdict is: the only one such a report has
    assert [row.divergence for row in old.kernels.values()] == [None, Divergence.PROPAGATED, Divergence.PROPAGATED]
    assert old.kernels["extern_kernels.mm"].introduces_error
    assert old.verdict == "first divergent kernel: extern_kernels.mm (propagated error)"
    console = Console(file=io.StringIO(), width=250, color_system=None)
    console.print(old)
    row = next(t for t in console.file.getvalue().splitlines() if t.lstrip("│ ").startswith("extern_kernels.mm"))
    assert "DIVERGES" in row and "propagated" in row and "–" in row  # no local figures


def test_a_trace_recorded_before_local_errors_still_loads():
    c = compiler.load(FIXTURES / "version_2.13.0.json.gz")
    (report,) = c.numerics
    assert report.ok and report.first_divergent is None and len(report.kernels) == 4
    assert all(row.compared and row.local_ok is None and row.divergence is None for row in report.kernels.values())
    assert "every compared kernel is within tolerance of eager" in repr(report)
