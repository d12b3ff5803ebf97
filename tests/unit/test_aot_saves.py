"""Reading AOTInductor's intermediate-value saves: which kernel and argument each printed save is."""

from __future__ import annotations

from compiler._torch import aot_saves
from compiler.runs import package_numerics

KERNELS = ["cpp_fused_add_0", "cpp_fused_add_0_relu_1", "aoti_torch_cpu_addmm_out"]

# torch 2.13 joins the folder and the name without a separator; other versions with one
PRINTED = """\
aoti_torch_save_tensor_handle: Path does not exist, creating it..."/run/tmp/aoti_torch"
aoti_torch_save_tensor_handle: Saved tensor to /run/tmp/aoti_torchbefore_launch_aoti_torch_cpu_addmm_out_buf0_cpu.pt
aoti_torch_save_tensor_handle: Saved tensor to /run/tmp/aoti_torchafter_launch_aoti_torch_cpu_addmm_out_buf0_cpu.pt
aoti_torch_save_tensor_handle: Saved tensor to /run/tmp/aoti_torch/before_launch_cpp_fused_add_0_relu_1_arg4_1_cuda:0.pt
aoti_torch_save_tensor_handle: Saved tensor to /run/tmp/aoti_torch/after_launch_cpp_fused_add_0_relu_1_buf2_cuda:0.pt
aoti_torch_save_tensor_handle: Saved tensor to /run/tmp/aoti_torch/before_launch_cpp_fused_add_0_buf3_cpu.pt
aoti_torch_save_tensor_handle: Saved tensor to /run/tmp/aoti_torch/before_launch_triton_new_9_buf5_cpu.pt
"""


def test_saves_name_kernel_argument_and_order_with_shared_prefixes():
    found, unknown = aot_saves.saves(PRINTED, KERNELS)
    assert [(s.order, s.after, s.kernel, s.argument) for s in found] == [
        (0, False, "aoti_torch_cpu_addmm_out", "buf0"),
        (1, True, "aoti_torch_cpu_addmm_out", "buf0"),
        (2, False, "cpp_fused_add_0_relu_1", "arg4_1"),  # the longest name that fits, not cpp_fused_add_0
        (3, True, "cpp_fused_add_0_relu_1", "buf2"),
        (4, False, "cpp_fused_add_0", "buf3"),
    ]
    assert found[2].path.endswith("before_launch_cpp_fused_add_0_relu_1_arg4_1_cuda:0.pt")
    assert unknown == ["triton_new_9_buf5"]


def test_a_run_that_stopped_names_the_kernel_it_was_in():
    assert package_numerics._last_launch(PRINTED, KERNELS) == (
        "the last kernel launched and not finished: cpp_fused_add_0")
    finished = "\n".join(PRINTED.splitlines()[:5])
    assert package_numerics._last_launch(finished, KERNELS) == "no kernel had been launched"


def test_a_fallback_ops_saves_belong_to_the_shim_the_wrapper_calls():
    """``aoti_torch_cpu_cumsum`` saves under ``at::_ops::cumsum::call`` (seen exporting GPT-2's position ids)."""
    printed = ("aoti_torch_save_tensor_handle: Saved tensor to /run/tmp/aoti_torchbefore_launch_at::_ops::cumsum::call_buf3_cpu.pt\n"
               "aoti_torch_save_tensor_handle: Saved tensor to /run/tmp/aoti_torchafter_launch_at::_ops::cumsum::call_buf3_cpu.pt\n")
    found, unknown = aot_saves.saves(printed, [*KERNELS, "aoti_torch_cpu_cumsum"])
    assert [(s.after, s.kernel, s.argument) for s in found] == [
        (False, "aoti_torch_cpu_cumsum", "buf3"), (True, "aoti_torch_cpu_cumsum", "buf3")]
    assert unknown == []
    assert aot_saves.saves(printed, KERNELS)[1] == ["at::_ops::cumsum::call_buf3", "at::_ops::cumsum::call_buf3"]
