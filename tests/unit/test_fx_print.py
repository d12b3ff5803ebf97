"""compiler/_torch/fx_print.py reads what FX prints without importing torch: its copy of the dtype
abbreviations must be the installed torch's own, and a stack trace's frames come out in order."""

from __future__ import annotations

from compiler._torch import fx_print


def test_the_dtype_table_is_torchs_own():
    torch_names = fx_print.torch_dtype_names()
    assert {abbr: torch_names.get(abbr) for abbr in fx_print.DTYPE_NAMES} == fx_print.DTYPE_NAMES
    assert fx_print.dtype_name("bf16") == "torch.bfloat16"
    newer = next((abbr for abbr in torch_names if abbr not in fx_print.DTYPE_NAMES), None)
    if newer is not None:  # a dtype the copy leaves out is still named, from torch's table
        assert fx_print.dtype_name(newer) == torch_names[newer]
    assert fx_print.dtype_name("x99") == "x99"


def test_frames_of_a_stack_trace():
    trace = ('  File "/home/u/model.py", line 12, in forward\n    y = self.fc(x)\n'
             '  File "/site-packages/torch/nn/modules/linear.py", line 134, in forward\n    return F.linear(x)\n')
    assert fx_print.frames_of(trace) == [("/home/u/model.py", 12, "forward"),
                                         ("/site-packages/torch/nn/modules/linear.py", 134, "forward")]
    assert fx_print.frames_of("") == []
