"""Runs an edited Triton kernel next to the original in a separate process.

A kernel that faults on the device (an out-of-bounds store, say) poisons the CUDA context of the
process that launched it; doing the launch here keeps the notebook's context, the original kernel and
the compilation usable. The worker is a fresh interpreter (``python -m compiler.runs.worker``), so it
works from notebooks and plain scripts alike; job and result cross as JSON files.
"""

from __future__ import annotations

import ast
import json
import re
import sys
import traceback
from pathlib import Path
from typing import Any

SEED = 1234


def _kernel_def_line(source: str, name: str) -> int:
    try:
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.FunctionDef) and node.name == name:
                return node.lineno
    except SyntaxError:
        pass
    return 1


def _failure(stage: str, error: BaseException, source: str, name: str) -> dict[str, Any]:
    message = f"{type(error).__name__}: {error}"
    line = getattr(error, "lineno", None) if isinstance(error, SyntaxError) else None
    if line is None:
        match = re.search(r"at (\d+):(\d+):", message)  # Triton: line relative to the @jit function
        if match:
            line = _kernel_def_line(source, name) + int(match.group(1)) - 1
    return {"ok": False, "stage": stage, "error": message.strip(), "line": line,
            "traceback": traceback.format_exc(limit=3)}


def compare(original: str, edited: str, name: str, bench: bool = True) -> dict[str, Any]:
    import torch

    from .._torch import runtime
    from .timing import warm_ms

    try:
        compile(edited, f"<edited {name}>", "exec")
    except SyntaxError as error:
        return _failure("syntax", error, edited, name)
    base = runtime.load_kernel_module(original)
    try:
        changed = runtime.load_kernel_module(edited)
    except Exception as error:
        return _failure("load", error, edited, name)
    runtime.rand_strided_seeded(SEED)
    args_a = list(base.get_args())
    args_b = [a.clone() if isinstance(a, torch.Tensor) else a for a in args_a]
    base.call(args_a)
    torch.cuda.synchronize()
    try:
        changed.call(args_b)
        torch.cuda.synchronize()
    except Exception as error:
        text = str(error)
        stage = "device fault" if "CUDA" in text or "illegal" in text else "compile"
        return _failure(stage, error, edited, name)
    max_abs = max_rel = 0.0
    bitwise = True
    for a, b in zip(args_a, args_b):
        if not isinstance(a, torch.Tensor):
            continue
        if not torch.equal(a, b):
            bitwise = False
        if a.is_floating_point():
            diff = (a.double() - b.double()).abs()
            finite = torch.isfinite(diff)
            if not bool(finite.all()):
                max_abs = max_rel = float("inf")
                continue
            max_abs = max(max_abs, float(diff.max()) if diff.numel() else 0.0)
            scale = a.double().abs().clamp_min(1e-6)
            max_rel = max(max_rel, float((diff / scale).max()) if diff.numel() else 0.0)
    result: dict[str, Any] = {"ok": True, "bitwise_equal": bitwise, "max_abs_error": max_abs, "max_rel_error": max_rel}
    if bench:
        result["original_ms"] = warm_ms(lambda: base.call(args_a))
        result["edited_ms"] = warm_ms(lambda: changed.call(args_b))
    return result


def main(job_path: str, result_path: str) -> None:
    """``python -m compiler.runs.worker JOB RESULT``: read the job, write one result, whatever happens."""
    job = json.loads(Path(job_path).read_text())
    try:
        result = compare(job["original"], job["edited"], job["name"], job["bench"])
    except BaseException as error:  # report, never leave the parent without an answer
        result = _failure("worker", error, job["edited"], job["name"])
    Path(result_path).write_text(json.dumps(result))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
