"""Reading a JIT ``cpp_wrapper`` module recorded on an H200 (torch 2.11, tests/fixtures/
cpp_wrapper_cuda_module.py.txt: a Linear, GELU and LayerNorm): the C++ wrapper is the stage, and the
Triton kernel it launches keeps its Python source, which Inductor writes into the module's
compile-time auto-tuning block (its docstring) rather than into the module itself."""

from __future__ import annotations

from compiler.pipeline import cpp_wrapper_code, wrapper_code
from tests.paths import FIXTURES

MODULE = (FIXTURES / "cpp_wrapper_cuda_module.py.txt").read_text()
KERNEL = "triton_per_fused_gelu_native_layer_norm_0"


def test_the_triton_kernel_of_a_gpu_cpp_wrapper_comes_from_its_autotuning_block():
    assert wrapper_code.kernel_definitions(MODULE) == {}  # the module's own statements define no kernel
    block = cpp_wrapper_code.python_kernels_source(MODULE)
    assert block.lstrip().startswith("import torch") and "cpp_wrapper_src" not in block
    python = wrapper_code.kernel_definitions(block)
    assert set(python) == {KERNEL} and python[KERNEL].language == "triton"
    assert "@triton.jit" in python[KERNEL].source

    cpp = cpp_wrapper_code.cpp_source(MODULE)
    lines = cpp.splitlines()
    found = cpp_wrapper_code.kernel_definitions(cpp, "", python)
    assert set(found) == {KERNEL}
    kernel = found[KERNEL]
    assert kernel.language == "triton" and kernel.source == python[KERNEL].source
    (start, _), (call,) = kernel.lines, kernel.calls
    assert lines[start - 1].lstrip().startswith(f"static inline void call_{KERNEL}(")
    assert lines[call - 1].strip().startswith(f"call_{KERNEL}(")


def test_a_module_without_an_autotuning_block_is_its_own_kernel_source():
    plain = "async_compile = None\nk = async_compile.triton('k', '''\\n@triton.jit\\ndef k(): pass\\n''')\n"
    assert cpp_wrapper_code.python_kernels_source(plain) == plain
    assert cpp_wrapper_code.python_kernels_source("def broken(:") == "def broken(:"
