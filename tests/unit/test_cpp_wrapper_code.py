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


AOT_WRAPPER = (FIXTURES / "aot_cuda_wrapper.cpp.txt").read_text()
AOT_KERNEL = "triton_per_fused_addmm_gelu_native_layer_norm_0"


def test_the_triton_kernel_of_a_gpu_package_comes_from_the_comment_of_its_launcher():
    """tests/fixtures/aot_cuda_wrapper.cpp.txt: the C++ wrapper of an AOTInductor package of the same
    model, recorded on an H100 (torch 2.11), where AOT codegen's Python pass never reached the output-code
    hook. Each Triton kernel's Python is a ``/* ... */`` block inside ``call_<kernel>``."""
    python = wrapper_code.kernel_definitions(cpp_wrapper_code.commented_python_kernels(AOT_WRAPPER))
    assert set(python) == {AOT_KERNEL} and python[AOT_KERNEL].language == "triton"
    source = python[AOT_KERNEL].source
    assert source.startswith("import triton") and f"def {AOT_KERNEL}(in_out_ptr0" in source
    assert "\n    def " not in source  # the block's indent is gone: the source is the module's again
    found = cpp_wrapper_code.kernel_definitions(AOT_WRAPPER, "", python)
    assert set(found) == {AOT_KERNEL}
    kernel, lines = found[AOT_KERNEL], AOT_WRAPPER.splitlines()
    (start, _), (call,) = kernel.lines, kernel.calls  # the def inside the comment is not a call
    assert lines[start - 1].lstrip().startswith(f"static inline void call_{AOT_KERNEL}(")
    assert lines[call - 1].strip().startswith(f"call_{AOT_KERNEL}(buf4,")
    assert cpp_wrapper_code.commented_python_kernels("/* a plain comment */ int x;") == ""
