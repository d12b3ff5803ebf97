"""k.edit(new_source): compile an edited kernel, run it on the original's inputs, compare, bench both."""

from __future__ import annotations

import multiprocessing
from dataclasses import dataclass
from typing import Any


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


def edit_kernel(kernel: Any, new_source: str, *, bench: bool = True, timeout_s: float = 300.0) -> EditResult:
    if kernel.language not in ("triton", "template"):
        raise KernelEditError(f"only Triton kernels can be edited; {kernel.id} is {kernel.language}")
    if not isinstance(new_source, str) or not new_source.strip():
        raise KernelEditError("new_source must be the edited kernel's full source text (start from k.source)")
    from . import worker

    context = multiprocessing.get_context("spawn")
    receive, send = context.Pipe(duplex=False)
    process = context.Process(target=worker.main, args=(send, kernel.source, new_source, kernel.name, bench),
                              daemon=True)
    process.start()
    send.close()
    try:
        if not receive.poll(timeout_s):
            process.kill()
            return EditResult(kernel.id, False, "worker", f"no result within {timeout_s:.0f} s")
        result = receive.recv()
    except EOFError:
        process.join(5)
        return EditResult(kernel.id, False, "device fault",
                          f"the worker process died (exit code {process.exitcode}) running the edited kernel")
    finally:
        process.join(10)
        if process.is_alive():
            process.kill()
    if not result.get("ok"):
        return EditResult(kernel.id, False, result.get("stage"), result.get("error"), result.get("line"))
    return EditResult(kernel.id, True, bitwise_equal=result["bitwise_equal"], max_abs_error=result["max_abs_error"],
                      max_rel_error=result["max_rel_error"], original_ms=result.get("original_ms"),
                      edited_ms=result.get("edited_ms"))
