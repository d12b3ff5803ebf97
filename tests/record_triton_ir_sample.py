"""Record tests/fixtures/triton_ir_sm90.json: a GPU trace whose Triton kernel carries its IR stages,
made on a machine WITHOUT a GPU.

Triton compiles for a GPU target it does not have (its passes, LLVM and ptxas run on the CPU), so the
kernel of tests/fixtures/gpu_deterministic.json (recorded on an H200) is compiled here for sm_90 by
Inductor's own CachingAutotuner (static launcher, as on the GPU), and k.ir is captured from Triton's
cache exactly as a GPU capture does (compiler/_torch/triton_ir.py), SASS from Triton's nvdisasm.
Registers and spills stay unknown: they come from loading the binary on a GPU.

Needs torch 2.11 + Triton 3.6 (a CUDA build of torch runs on CPU):

    PYTHONPATH=. /work/venvs/torch-2.11.0/bin/python -m tests.record_triton_ir_sample
"""

from __future__ import annotations

import importlib.util
import json
import os
import tempfile
import types
from pathlib import Path

from tests.record_paths import neutralize_file

FIXTURES = Path(__file__).parent / "fixtures"
SOURCE_TRACE = FIXTURES / "gpu_deterministic.json"
OUTPUT = FIXTURES / "triton_ir_sm90.json"


def _load_kernel(source: str, name: str, directory: str):
    from torch._inductor.runtime import triton_helpers

    triton_helpers.set_driver_to_gpu = lambda: None  # the module asks for a GPU driver at import; none here
    path = os.path.join(directory, f"{name}.py")
    Path(path).write_text(source + "\n")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name)


def main() -> None:
    from torch._inductor.runtime.runtime_utils import triton_hash_to_path_key

    from compiler.pipeline import ir_line_maps as kernel_ir, sass
    from compiler._torch import triton_ir

    trace = json.loads(SOURCE_TRACE.read_text())
    kernel = next(k for g in trace["graphs"] for k in g["kernels"] if k["language"] == "triton")
    with tempfile.TemporaryDirectory() as directory:
        os.environ["TRITON_CACHE_DIR"] = os.path.join(directory, "triton")
        tuner = _load_kernel(kernel["source"], kernel["name"], directory)
        result = tuner._precompile_config(tuner.configs[0])  # what precompile() does for each config
        tuner.compile_results = [result]
        # the launcher Inductor builds after loading the binary on a GPU, with what capture() reads of it
        cache_hash = triton_hash_to_path_key(result.kernel.hash)
        tuner.launchers = [types.SimpleNamespace(config=result.config, cache_hash=cache_hash, n_regs=None, n_spills=None,
                                                 shared=None)]
        raw = triton_ir.capture(tuner, kernel["name"])
        text, note = sass.disassemble(raw["cubin"])
        raw["notes"] += [note, "compiled for sm_90 on a machine without a GPU: registers and spills unknown"]
        if text:
            raw["texts"]["sass"] = text
        ir = kernel_ir.kernel_ir(raw, kernel["source"], kernel["name"])
    ir.source_file = f"{kernel['name']}.py"  # the temporary path is gone; keep its name
    kernel["ir"] = kernel_ir.kernel_ir_to_json(ir)
    OUTPUT.write_text(json.dumps(trace, indent=1))
    neutralize_file(OUTPUT)  # Triton's and torch's files quoted by the IR: tests/record_paths.py
    print(f"{OUTPUT}: {ir!r}")


if __name__ == "__main__":
    main()
