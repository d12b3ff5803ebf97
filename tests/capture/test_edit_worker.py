"""k.edit() checks an edited kernel in a worker process (a fresh interpreter, so a kernel that faults
cannot poison the notebook's device): here on a recorded GPU trace's Triton kernel, whose syntax error the
worker reports before any GPU work. Starting that interpreter takes seconds, hence not the unit tier."""

from __future__ import annotations

import explorer
from tests import gpu_edits
from tests.paths import FIXTURES


def test_edit_reports_syntax_errors_from_its_worker_process():
    c = explorer.load(FIXTURES / "gpu_default.json")
    kernel = next(k for k in c.kernels if k.language == "triton")
    edited = gpu_edits.syntax_error(kernel.source)
    result = kernel.edit(edited, bench=False)
    assert not result.ok and result.stage == "syntax" and "SyntaxError" in result.error
    assert "def broken(" in edited.splitlines()[result.line - 1]  # the line the error points at
