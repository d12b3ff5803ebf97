"""The process Nsight Compute profiles: each kernel of the job once, on inputs of its real shapes.

``ncu`` must launch the process it measures, so this is a fresh interpreter
(``python -m compiler.runs.counters_worker JOB RESULT``), started under ``ncu --profile-from-start off
--nvtx --nvtx-include ...`` (compiler/runs/counters.py says why both).

Each job item is run once outside the profiled range (Triton compiles and autotunes there; cuBLAS and
cuDNN create their handles, pick their algorithms and allocate their workspaces), then once more between
``cudaProfilerStart`` and ``cudaProfilerStop``, inside an NVTX push/pop range named by the item's
``range``: every device kernel that launch makes is profiled and carries that range, so the parent can
tell which item each profiled launch belongs to.

- A Triton kernel (``"kind": "triton"``) is loaded from its captured source; the benchmark harness
  Inductor writes into it makes inputs of the real shapes and strides. The file it is loaded from holds
  the kernel's source, possibly below blank lines (Inductor's own file of it, which PyCodeCache reuses);
  the outcome says how many, so the parent reads ncu's source page lines as the kernel's own lines.
- An extern kernel (``"kind": "extern"``) is called as the wrapper calls it: the same callee
  (``extern_kernels.mm``, ``torch.ops.aten._scaled_dot_product_efficient_attention.default``...) on
  seeded random tensors of the captured shapes, strides and dtypes, on the GPU (``call``: see
  ``compiler/model/launch_args.extern_call``). One such call may launch several device kernels (a
  cuBLAS gemm and its split-K reduction, the kernels of an attention).
"""

from __future__ import annotations

import json
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

SEED = 1234


def _triton_call(item: dict[str, Any]) -> tuple[Callable[[], Any], dict[str, Any]]:
    """The kernel's call on seeded inputs, and where its source lines are: the file ncu's source page will
    name, and how many lines that file has above the source (Inductor's own file of the kernel has one:
    ``compiler/model/kernel_file.py``)."""
    from .._torch import runtime
    from ..model.kernel_file import source_offset

    module = runtime.load_kernel_module(item["source"])
    runtime.rand_strided_seeded(SEED)
    args = module.get_args()
    file = getattr(module, "__file__", None)
    lines_above = source_offset(Path(file).read_text(), item["source"], item.get("name", "")) if file else None
    return (lambda: module.call(args)), {"file": file, "lines_above": lines_above}


def _callee(name: str) -> Callable[..., Any]:
    import torch

    from .._torch.extern_kernels import extern_kernel

    if name.startswith("extern_kernels."):
        return extern_kernel(name.removeprefix("extern_kernels."))
    if not name.startswith("torch."):
        raise ValueError(f"the wrapper calls {name}, which is neither extern_kernels.* nor torch.*")
    found: Any = torch
    for part in name.split(".")[1:]:
        found = getattr(found, part)
    return found


def _value(value: Any) -> Any:
    """A job argument as the call takes it: a tensor spec becomes a seeded random tensor of that layout."""
    import torch

    if isinstance(value, list):
        return [_value(v) for v in value]
    if isinstance(value, dict) and "attribute" in value:
        found: Any = torch
        for part in value["attribute"].split(".")[1:]:
            found = getattr(found, part)
        return found
    if not (isinstance(value, dict) and "shape" in value):
        return value
    dtype = getattr(torch, value["dtype"])
    shape, stride = value["shape"], value["stride"]
    extent = 1 + sum((n - 1) * s for n, s in zip(shape, stride)) if all(shape) else 0
    if dtype.is_floating_point or dtype.is_complex:
        storage = torch.randn(extent, device=value["device"]).to(dtype)
    else:  # integers and bools: zeros are valid indices, lengths and masks
        storage = torch.zeros(extent, device=value["device"], dtype=dtype)
    return storage.as_strided(shape, stride)


def _extern_call(item: dict[str, Any]) -> Callable[[], Any]:
    import torch

    call = item["call"]
    function = _callee(call["function"])
    torch.manual_seed(SEED)
    args = [_value(a) for a in call["args"]]
    kwargs = {name: _value(v) for name, v in call["kwargs"].items()}
    return lambda: function(*args, **kwargs)


def profile_kernels(kernels: list[dict[str, Any]]) -> list[dict[str, Any]]:
    import torch

    done: list[dict[str, Any]] = []
    for item in kernels:
        try:
            if item.get("kind", "triton") == "extern":
                call, where = _extern_call(item), {}
            else:
                call, where = _triton_call(item)
            call()  # compiles, autotunes, creates library handles and workspaces: not profiled
            torch.cuda.synchronize()
            torch.cuda.profiler.start()
            if item.get("range"):
                torch.cuda.nvtx.range_push(item["range"])
            try:
                call()
                torch.cuda.synchronize()
            finally:
                if item.get("range"):
                    torch.cuda.nvtx.range_pop()
                torch.cuda.profiler.stop()
            done.append({"id": item["id"], "ok": True, **where})
        except Exception as error:  # one kernel failing leaves the others measurable
            done.append({"id": item["id"], "ok": False, "error": f"{type(error).__name__}: {error}",
                         "traceback": traceback.format_exc(limit=3)})
        print(f"counters-worker: {item['id']} done", flush=True)
    return done


def main(job_path: str, result_path: str) -> None:
    job = json.loads(Path(job_path).read_text())
    try:
        result: dict[str, Any] = {"ok": True, "kernels": profile_kernels(job["kernels"])}
    except BaseException as error:  # report, never leave the parent without an answer
        result = {"ok": False, "error": f"{type(error).__name__}: {error}", "traceback": traceback.format_exc(limit=5)}
    Path(result_path).write_text(json.dumps(result))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
