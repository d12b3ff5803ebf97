"""k.edit(new_source): compile an edited kernel, run it on the original's inputs, compare, bench both."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..model import slots
from ..model.child_env import worker_env


class KernelEditError(RuntimeError):
    pass


@dataclass
class EditResult:
    kernel: str
    ok: bool
    stage: str | None = None  # syntax | load | compile | device fault | worker, when not ok
    error: str | None = None
    line: int | None = None  # line of the edited source the error points at
    bitwise_equal: bool | None = None
    max_abs_error: float | None = None
    max_rel_error: float | None = None
    original_ms: float | None = None
    edited_ms: float | None = None
    tolerance: float = 1e-3

    @property
    def matches(self) -> bool:
        return bool(self.ok and self.max_abs_error is not None and self.max_rel_error is not None
                    and (self.max_abs_error <= self.tolerance or self.max_rel_error <= self.tolerance))

    def __repr__(self) -> str:
        if not self.ok:
            where = f" at line {self.line}" if self.line else ""
            return f"EditResult({self.kernel}: {self.stage} error{where}: {self.error})"
        verdict = "matches" if self.matches else "MISMATCH"
        timing = ""
        if self.original_ms is not None and self.edited_ms is not None:
            timing = f", {self.original_ms * 1e3:.1f} us -> {self.edited_ms * 1e3:.1f} us"
        return (f"EditResult({self.kernel}: {verdict}, max abs {self.max_abs_error:.3g}, "
                f"max rel {self.max_rel_error:.3g}, bitwise {self.bitwise_equal}{timing})")


@slots.edit_kernel.fill
def edit_kernel(kernel: Any, new_source: str, *, bench: bool = True, timeout_s: float = 300.0) -> EditResult:
    if kernel.language not in ("triton", "template"):
        raise KernelEditError(f"only Triton kernels can be edited; {kernel.id} is {kernel.language}")
    if not isinstance(new_source, str) or not new_source.strip():
        raise KernelEditError("new_source must be the edited kernel's full source text (start from k.source)")
    with tempfile.TemporaryDirectory(prefix="kernel-edit-") as tmp:
        job, result_path = Path(tmp) / "job.json", Path(tmp) / "result.json"
        job.write_text(json.dumps({"original": kernel.source, "edited": new_source, "name": kernel.name,
                                   "bench": bench}))
        try:
            done = subprocess.run([sys.executable, "-m", "compiler.runs.worker", str(job), str(result_path)],
                                  env=worker_env(), capture_output=True, text=True, timeout=timeout_s)
        except subprocess.TimeoutExpired:
            return EditResult(kernel.id, False, "worker", f"no result within {timeout_s:.0f} s")
        if not result_path.exists():
            tail = (done.stderr or "").strip().splitlines()[-3:]
            return EditResult(kernel.id, False, "device fault",
                              f"the worker process died (exit code {done.returncode}) running the edited kernel: "
                              + " | ".join(tail))
        result = json.loads(result_path.read_text())
    if not result.get("ok"):
        return EditResult(kernel.id, False, result.get("stage"), result.get("error"), result.get("line"))
    return EditResult(kernel.id, True, bitwise_equal=result["bitwise_equal"], max_abs_error=result["max_abs_error"],
                      max_rel_error=result["max_rel_error"], original_ms=result.get("original_ms"),
                      edited_ms=result.get("edited_ms"))
