"""AOTInductor's intermediate-value saving: a package whose C++ wrapper writes every kernel's tensor
arguments to files, before and after each launch.

With ``aot_inductor.debug_intermediate_value_printer = "1"`` the C++ wrapper calls
``aoti_torch_save_tensor_handle(buf, "buf", "before_launch" | "after_launch", kernel)`` around each
kernel call (generated, Triton and extern alike). The shim pickles the tensor to a ``.pt`` file under
``tmp/aoti_torch`` of the working directory, named ``<when>_<kernel>_<argument>_<device>.pt``, and
prints ``Saved tensor to <path>`` (flushed), so the printed lines give the order of the saves and, if
the package dies, the last kernel it launched. How torch joins the folder and the name has varied
between versions (2.13 drops the separator), so only the file's base name after the folder is read.
A fallback op called through its shim (``aoti_torch_cpu_cumsum``) saves under its ATen operator's name
(``at::_ops::cumsum::call``), and only the tensors it is passed: its outputs come back through new
handles, which are not saved.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterable

import torch

SAVE_EVERY_KERNEL: dict[str, Any] = {"aot_inductor.debug_intermediate_value_printer": "1"}

_SAVED = re.compile(r"Saved tensor to (?P<path>.+\.pt)\s*$")
_SHIM = re.compile(r"^aoti_torch_(?:cpu|cuda|xpu|mps)_(?P<op>\w+)$")
_NAME = re.compile(r"(?P<when>before|after)_launch_(?P<rest>.+)_(?P<device>[^_]+)\.pt$")


@dataclass(frozen=True)
class SavedTensor:
    """One tensor argument of one kernel call, saved before or after the launch."""

    order: int  # position among the package's saves, in the order they ran
    after: bool  # saved after the launch (what the kernel left there); False: before it
    kernel: str  # the kernel's name as the wrapper calls it (``cpp_fused_relu_0``, ``aoti_torch_cpu_addmm_out``)
    argument: str  # the wrapper's name of the tensor (``buf3``, ``arg4_1``)
    path: str


def saves(output: str, kernel_names: Iterable[str]) -> tuple[list[SavedTensor], list[str]]:
    """The saves a package run printed, in order, and the base names it saved that name no kernel of
    ``kernel_names`` (the longest name that starts a file's name is its kernel: names share prefixes)."""
    known = list(kernel_names)
    aliases = {_operator_name(name): name for name in known if _SHIM.match(name)}
    names = sorted({*known, *aliases}, key=len, reverse=True)
    found: list[SavedTensor] = []
    unknown: list[str] = []
    for line in output.splitlines():
        saved = _SAVED.search(line)
        if not saved:
            continue
        path = saved.group("path").strip().strip('"')
        parsed = _NAME.search(path.replace("\\", "/").rsplit("/", 1)[-1])
        if not parsed:
            unknown.append(path)
            continue
        rest = parsed.group("rest")
        kernel = next((name for name in names if rest.startswith(name + "_")), None)
        if kernel is None:
            unknown.append(rest)
            continue
        found.append(SavedTensor(len(found), parsed.group("when") == "after", aliases.get(kernel, kernel),
                                 rest[len(kernel) + 1:], path))
    return found, unknown


def _operator_name(shim: str) -> str:
    """The name a fallback op's saves carry, for the shim the wrapper calls: ``aoti_torch_cpu_cumsum``
    saves as ``at::_ops::cumsum::call`` (the shim's name is made from that one: torch/_inductor/codegen/
    cpp_wrapper_cpu.py, ``get_c_shim_func_name``)."""
    return f"at::_ops::{_SHIM.match(shim).group('op')}::call"  # type: ignore[union-attr]


def load(saved: SavedTensor) -> torch.Tensor:
    """The saved tensor, on the device it was saved from."""
    return torch.load(saved.path, weights_only=True)
