"""Reading a JIT ``cpp_wrapper`` module recorded on an H200 (torch 2.11, tests/fixtures/
cpp_wrapper_cuda_module.py.txt: a Linear, GELU and LayerNorm): the C++ wrapper is the stage, and the
Triton kernel it launches keeps its Python source, which Inductor writes into the module's
compile-time auto-tuning block (its docstring) rather than into the module itself."""

from __future__ import annotations

from types import SimpleNamespace

from compiler.pipeline import cpp_wrapper_code, wrapper_code
from compiler.runs import package_repro
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


def test_a_package_triton_kernels_arguments_are_the_first_ones_of_its_launcher_call():
    """``call_<kernel>(buf4, ..., 32L, 128L, this->device_idx_, stream, kernels, this->cubin_dir_)``: the
    kernel's own arguments are its parameters that are not ``tl.constexpr``; the rest are the launcher's."""
    python = wrapper_code.kernel_definitions(cpp_wrapper_code.commented_python_kernels(AOT_WRAPPER))
    definition = cpp_wrapper_code.kernel_definitions(AOT_WRAPPER, "", python)[AOT_KERNEL]
    kernel = SimpleNamespace(name=AOT_KERNEL, language="triton", source=definition.source,
                             wrapper_lines=[definition.lines[0], *definition.calls])
    arguments, params = package_repro.launch_arguments(kernel, AOT_WRAPPER)
    assert params == ["in_out_ptr0", "in_ptr0", "in_ptr1", "in_ptr2", "xnumel", "r0_numel"]  # not XBLOCK
    assert arguments == ["buf4", "constant_0_bias", "constant_2_weight", "constant_2_bias", "32L", "128L"]
