"""k.repro() of a kernel of an AOTInductor package (C++ or Triton): its arguments at its first launch.

The package's wrapper calls the kernel inside a compiled library, so the launch cannot be watched as a
Python wrapper's is. The package's saving copy (compiler/runs/package_numerics.py) saves every tensor
argument of every kernel call before and after the launch; the call line of the C++ wrapper says which
tensor or value each argument is (``(float*)(buf1.data_ptr())``, ``24L``, ``s77``). What the copy does
not save is read where the package reads it: a weight (``constants_->at(i)``) from the graph the package
was compiled from, a size symbol (``int64_t s77 = arg2_1_size[0];``) from the input it is read from.
"""

from __future__ import annotations

import re
from typing import Any

import torch

from .._torch import aot_saves
from ..model import kernel_io
from . import package_numerics

_SIZE = r"^\s*(?:const\s+)?(?:int64_t|auto)\s+{symbol}\s*=\s*(\w+)_size\[(\d+)\];"
_INTEGER = re.compile(r"^\s*(?:static_cast<\w+>\()?\s*(-?\d+)L?\s*\)?\s*$")
_CAST = re.compile(r"^\s*static_cast<\w+>\(\s*(\w+)\s*\)\s*$")


def first_launch(kernel: Any) -> tuple[list[Any], dict[str, Any], dict[int, str]]:
    """``kernel``'s arguments at its first launch in the package, what it left in those it writes
    (argument position -> tensor) and which parameter each written position is (``in_out_ptr0 (buf4)``).
    A kernel the package calls again with the same buffers has one file per buffer, the last call's."""
    c, graph = kernel.graph.compilation, kernel.graph
    source = graph.wrapper.source
    arguments, params = launch_arguments(kernel, source)
    written = [i for i, name in enumerate(params) if name.startswith(("out_ptr", "in_out_ptr")) and i < len(arguments)]
    with package_numerics.saving_run(c, "repro") as (_, inputs, saved, _):
        mine = [s for s in saved if s.kernel == kernel.name]
        first = {s.argument: s for s in reversed(mine) if not s.after}
        after = {s.argument: s for s in reversed(mine) if s.after}
        named = _named_tensors(graph, inputs, saved)
        values = [_value(kernel, text, first, named, graph, source) for text in arguments]
        if not first:
            raise RuntimeError(f"k.repro({kernel.id}): the package did not launch {kernel.name} on these inputs, so "
                               "it has no inputs to save")
        outputs = {i: aot_saves.load(after[arguments[i]]) for i in written if arguments[i] in after}
    names = {i: f"{params[i]} ({arguments[i]})" for i in written}
    return values, outputs, names


def launch_arguments(kernel: Any, wrapper: str) -> tuple[list[str], list[str]]:
    """What the package's C++ wrapper passes ``kernel`` at its first call (``buf4``, ``constant_0_bias``,
    ``32L``), and the kernel's parameters those arguments are, in order. A C++ kernel is called by its name;
    a Triton kernel through its launcher ``call_<name>(...)``, whose arguments after the kernel's own
    (device, stream, the loaded kernels, the cubin folder) are the launcher's."""
    lines = wrapper.splitlines()
    callee = kernel.name if kernel.language == "cpp" else f"call_{kernel.name}"
    call = next((lines[n - 1] for n in kernel.wrapper_lines
                 if 0 < n <= len(lines) and lines[n - 1].strip().startswith(f"{callee}(")), None)
    if call is None:
        raise ValueError(f"k.repro({kernel.id}): the package's wrapper has no call of {callee}")
    arguments = kernel_io.cpp_call_arguments(call)
    if kernel.language == "cpp":
        return arguments, kernel_io.parameter_names(kernel)
    params = kernel_io.triton_runtime_parameters(kernel)
    return arguments[:len(params)], params


def _named_tensors(graph: Any, inputs: list[Any], saved: list[Any]) -> dict[str, Any]:
    """The graph's inputs by the wrapper's names (``arg4_1``), and every saved name's first save."""
    gm = graph.post_grad.module
    placeholders = [n.name for n in gm.graph.nodes if n.op == "placeholder"] if gm is not None else []
    named: dict[str, Any] = dict(zip(placeholders, inputs))
    for item in saved:
        if not item.after:
            named.setdefault(item.argument, item)
    return named


def _value(kernel: Any, text: str, first: dict[str, Any], named: dict[str, Any], graph: Any, source: str) -> Any:
    if text in first:
        return aot_saves.load(first[text])
    integer = _INTEGER.match(text)
    if integer:
        return int(integer.group(1))
    cast = _CAST.match(text)
    name = cast.group(1) if cast else text
    constant = _constant(graph, name)
    if constant is not None:
        return constant.detach().clone()
    size = re.search(_SIZE.format(symbol=re.escape(name)), source, re.MULTILINE)
    if size and size.group(1) in named:
        tensor = named[size.group(1)]
        tensor = tensor if isinstance(tensor, torch.Tensor) else aot_saves.load(tensor)
        return int(tensor.shape[int(size.group(2))])
    raise ValueError(f"k.repro({kernel.id}): the package passes {text!r} to {kernel.name}, which is neither a saved "
                     "tensor, a weight of the graph, a number nor a size read from an input")


def _constant(graph: Any, name: str) -> torch.Tensor | None:
    """A weight the package holds as a constant, by its name in the wrapper (``norm_weight``): the value of
    the graph's ``get_attr`` node of that name."""
    gm = graph.post_grad.module
    node = next((n for n in gm.graph.nodes if n.op == "get_attr" and n.name == name), None) if gm is not None else None
    if node is None:
        return None
    value: Any = gm
    for part in str(node.target).split("."):
        value = getattr(value, part)
    return value if isinstance(value, torch.Tensor) else None


_RUNTIME_HEADER = "#include <torch/csrc/inductor/aoti_runtime/utils.h>\n"


def bindable(source: str, name: str) -> str:
    """A package kernel's C++ source as Inductor's Python binding loads a kernel: its function named
    ``kernel`` (what the binding calls), and AOTInductor's runtime header included when the source uses
    it (the profiling ranges of a package kernel are ``torch::aot_inductor`` handles)."""
    renamed = re.sub(rf'(extern\s+"C"\s+void\s+){re.escape(name)}\(', r"\1kernel(", source, count=1)
    return (_RUNTIME_HEADER + renamed) if "torch::aot_inductor::" in renamed else renamed

