"""Every notebook in examples/ runs top to bottom, headless, in a kernel started with this Python.

The kernel's working directory is examples/ and it imports the package the rest of the suite tests
(the repository root is on its PYTHONPATH, as pytest's own ``pythonpath`` setting does). A notebook
passes when no cell raised and the outputs that carry its lesson were printed.
"""

from __future__ import annotations

import inspect

import nbformat
import pytest
import torch

from compiler._torch import inductor_config
from tests.notebook_runner import EXAMPLES, errors_of, execute, notebook_names, save_executed

NOTEBOOKS = notebook_names()


def text_of(nb: nbformat.NotebookNode) -> str:
    """Everything the notebook printed or displayed as text, in order."""
    parts = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            if out.output_type == "stream":
                parts.append(out.text)
            elif out.output_type in ("execute_result", "display_data"):
                parts.append(out.data.get("text/plain", ""))
    return "\n".join(parts)


def test_notebooks_are_stored_without_outputs():
    assert NOTEBOOKS, "no notebooks in examples/"
    for name in NOTEBOOKS:
        nb = nbformat.read(EXAMPLES / name, as_version=4)
        nbformat.validate(nb)
        for cell in nb.cells:
            if cell.cell_type == "code":
                assert not cell.outputs and cell.execution_count is None, f"{name} is stored with outputs"


def _fuses_through_broadcasts() -> bool:
    """Whether Inductor fuses a broadcast producer into the reduction that reads it outside deterministic
    mode. torch 2.13 added this (``IRNode.mark_reuse`` gained ``graph_reuse``); 2.11 and 2.12 always keep
    the boundary, so 06's default and deterministic builds have the same loop IR there."""
    from torch._inductor import ir

    return "graph_reuse" in inspect.signature(ir.IRNode.mark_reuse).parameters


# What each notebook must print, beyond running without errors: the lines that carry its lesson, and the
# success line of its "Try this" check. The notebooks are a learning path, in this order.
EXPECTED = {
    "01_tour.ipynb": [
        "same result as eager: True",
        "kernel line",  # kernel lines traced back through post-grad and FX nodes...
        "<- post-grad ['var_mean'] <- FX ['h']",
        "<- your line 17: h = self.norm(x)",  # ...to the user's source line
        "'kind': 'kernel_line'",  # the widget's selection, driven from Python
        "ExplorerWidget(",
        "same kernels after loading: True",
        "checked: 3 generated kernels, and cpp_fused_",
    ],
    "02_fusion.ipynb": [
        "loop-IR nodes for relu(x*2+1).sum(-1): 1",
        "softmax: 1 kernel",
        "horizontal: 2 reductions in group",
        "Inductor's reasons:",
        "intermediate nodes between node1 & node2",
        "no shared data",
        "checked: 2 loop-IR nodes in 1 kernel",
    ],
    "03_matmul.ipynb": [
        "extern kernel:",
        "epilogue kernel",
        "matches eager: True",
        "checked: linear_relu compiles to ['cpp', 'extern']; the slower kernel of linear_gelu is",
    ],
    "04_where_the_time_goes.ipynb": [
        "slowest generated kernel:",
        "slowest line: ",
        "comes from your lines:",
        "-> kernels",  # from the softmax line to its kernels
        "largest kernel:",
        "lines only in",
        "time: cpp_fused",  # the two LayerNorm kernels' times
        "CompileTimeReport(capture:",  # the compile's own time, from what the capture recorded
        "kernel_compile",
        "ExplorerWidget(",
        "checked: the FX node with the most time is",
    ],
    "05_which_kernel_is_wrong.ipynb": [
        "first divergent kernel: cpp_fused",
        "closer to float64 than eager: True",
        # where the C++ backend never reads the toggle (torch < 2.13) the drift stays, and the notebook says so
        "after emulate_precision_casts: " + ("all within tolerance" if inductor_config.codegen_reads("cpp", "emulate_precision_casts")
                                             else "cpp_fused"),
        "random op",
        "running mean unchanged by the check: True",
        "ExplorerWidget(",
        "checked: cpp_fused__to_copy_add_mul_sub_1 diverges first; it comes from lines [4, 5] of two_steps",
    ],
    "06_deterministic.ipynb": [
        "inductor_overrides: {'deterministic': True}",
        # the materialization boundary before broadcasts: always kept in deterministic mode, and by default
        # too where Inductor does not fuse through broadcasts (see _fuses_through_broadcasts)
        f"loop-IR nodes: default {1 if _fuses_through_broadcasts() else 2}, deterministic 2",
        "both match eager: True",
        "bitwise equal over 5 runs: True",
        "checked: deterministic mode sets 1 key; it changes plain_sum's code: False",
    ],
    "07_dynamo_and_ranks.ipynb": [
        "graph break at line 14: Failed to trace builtin operator",
        "graphs before it: ['g0'], after it: ['g1']",
        "TENSOR_MATCH",
        "= L['x'].size()[0], saw 8, range [5, ",
        "recompiles after 16 rows: 0",
        "recompiled normalize (0/1) -> new graphs ['g2']",
        "exit code 0",
        "[graph] 0/0 forward: ranks compiled different graphs (rank 0 vs rank 1)",
        "[recompile] ranks recompiled a different number of times",
        "[graph_break] ranks broke their graphs at different places",
        "added on rank 1: cpp_fused_add_mul_1",
        "rank 1 recompiled because: 0/0: n == 1",
        "checked: the graph breaks at line 14; 6 rows recompile: False",
    ],
    "08_memory_and_ir.ipynb": [
        "MemoryTimeline(",
        "<- peak",
        "reuse marks match the wrapper text: True",
        "{'inplace_buffers': False}: peak",
        "reorder_for_peak_memory=True: mm -> reduce -> mm -> reduce",
        "block on CPU: WrapperFx(unsupported: NotImplementedError",
        "kernel=extern_kernels.mm:1",
        "the compiled function ran through our backend: ['empty_strided', 'mm.out'",
        "-> ptx line",
        "checked: the peak is at",
    ],
    "09_real_model.ipynb": [
        "GPT2LMHeadModel",
        "FX nodes:",
        "logits match eager: True",
        "transformers/models/gpt2/modeling_gpt2.py",
        "slowest line: transformers/",  # c.profile() found the line that costs the most time
        "ExplorerWidget(",
        "checked: extern calls take",
    ],
    "10_inductor_features.ipynb": [
        "bound check guards the embedding node: True",
        "findings without the check: 0",
        "tl.device_assert",  # the same check in a Triton kernel
        "bitcast: torch.float32 -> torch.int32, torch.int32 -> torch.float32",
        "rounding casts: 3 with the toggle, 0 without",
        "branch kernel",
        "the wrapper chooses at run time: ",  # `if buf1.item():`, or a selector from it (torch 2.14)
        "combo kernel combines",
        "block pointers:",
        "pad_mm: ",
        "split scan workspace: {'workspace_",
        "checked: gather_rows has 1 bound check(s), reinterpret 1 bitcast(s)",
    ],
    "11_sweeps.ipynb": [
        "Sweep(mlp on cpu, local: 4 points, 4 ran, 0 failed, best #",
        "#3 inplace_buffers=False, allow_buffer_reuse=False",
        "best point:",
        "Compilation(",  # a point opened
        "its slowest kernels:",
        "inplace_buffers: True -> False",  # the diff of two points
        "checked: point",
    ],
    "12_counters.ipynb": [
        "NVIDIA H200 with Nsight Compute",
        "compute",  # the GELU epilogue
        "top stall: long_sb",
        "hottest line of your model: workloads.py:",
        "checked: triton_poi_fused_add_addmm_view_3 is memory-bound",
    ],
}

if not torch.cuda.is_available():
    # On a machine without a GPU the GPU cells must say so instead of failing.
    for _name in ("02_fusion.ipynb", "03_matmul.ipynb", "04_where_the_time_goes.ipynb", "05_which_kernel_is_wrong.ipynb",
                  "06_deterministic.ipynb", "08_memory_and_ir.ipynb", "10_inductor_features.ipynb", "11_sweeps.ipynb"):
        EXPECTED[_name].append("No CUDA GPU here")


@pytest.mark.timeout(600)
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_runs(name, kernel_specs):
    nb, _ = execute(name, kernel_specs)  # how long each takes: `--durations` (make test lists the slowest)
    errors = errors_of(nb)
    assert not errors, f"{name} raised:\n" + "\n\n".join(errors)
    printed = text_of(nb)
    missing = [s for s in EXPECTED.get(name, []) if s not in printed]
    assert not missing, f"{name} did not print {missing}; it printed:\n{printed[-4000:]}"
    save_executed(nb, name)  # build/notebooks/: what `make docs` renders, so CI runs each notebook once


def test_every_notebook_has_expectations():
    assert set(NOTEBOOKS) == set(EXPECTED), "add the key outputs of new notebooks to EXPECTED"
