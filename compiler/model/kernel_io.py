"""Which buffers each kernel call of the wrapper writes, read from the trace alone.

A generated kernel's parameters are named by Inductor's codegen: ``in_ptr*`` are read, ``out_ptr*``
written and ``in_out_ptr*`` updated in place; the wrapper's call line passes the buffers in the same
order (``cpp_fused_add_0(buf1, arg0_1, buf4)``, ``triton_poi_fused_0.run(buf0, arg0_1, 1024, ...)``).
An extern call names its output with ``out=buf5`` or assigns it (``buf3 = torch.ops.aten...(...)``).
"""

from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass, field
from typing import Any

_CPP_SIGNATURE = re.compile(r'extern\s+"C"[^(]*\(([^)]*)\)', re.DOTALL)
_WRITTEN = ("out_ptr", "in_out_ptr")


@dataclass
class KernelCall:
    """One call line of a kernel in the wrapper."""

    line: int
    args: list[str]  # the buffer (or value) each positional argument names, as written
    outputs: dict[int, str] = field(default_factory=dict)  # argument position -> buffer name written
    inplace: set[int] = field(default_factory=set)  # positions updated in place (in_out_ptr)
    keyword_output: str | None = None  # extern calls: the buffer of out=..., or the assigned name


def parameter_names(kernel: Any) -> list[str]:
    """The kernel's parameters in call order (C++ signature, or the Triton function's arguments)."""
    if kernel.language == "cpp":
        match = _CPP_SIGNATURE.search(kernel.source)
        if not match:
            return []
        return [re.findall(r"\w+", part)[-1] for part in match.group(1).split(",") if re.findall(r"\w+", part)]
    return list(kernel.meta.get("arguments") or [])


def triton_runtime_parameters(kernel: Any) -> list[str]:
    """A Triton kernel's parameters that a launch passes, in order: those not annotated ``tl.constexpr``
    (block sizes are the config's, not the caller's)."""
    try:
        tree = ast.parse(kernel.source)
    except SyntaxError:
        return []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == kernel.name:
            return [a.arg for a in node.args.args
                    if a.annotation is None or not ast.unparse(a.annotation).endswith("constexpr")]
    return []


def parameter_types(kernel: Any) -> list[str]:
    """A C++ kernel's parameter types in call order (``float*``, ``const int64_t``), from its signature."""
    match = _CPP_SIGNATURE.search(kernel.source)
    if not match:
        return []
    return [" ".join(part.split()[:-1]) for part in match.group(1).split(",") if len(part.split()) > 1]


def cpp_call_arguments(line: str) -> list[str]:
    """What each argument of a C++ wrapper's kernel call names: the tensor (``buf1`` for
    ``(float*)(buf1.data_ptr())``), or the value's text (``24L``, ``s77``)."""
    inner = line.strip().rstrip(";").strip()
    inner = inner[inner.index("(") + 1:inner.rindex(")")] if "(" in inner else ""
    parts, depth, current = [], 0, ""
    for char in inner:
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
            continue
        depth += char in "(<[{"
        depth -= char in ")>]}"
        current += char
    if current.strip():
        parts.append(current)
    out = []
    for part in parts:
        tensor = re.search(r"\(\s*(\w+)\.data_ptr\(\)\s*\)", part)
        out.append(tensor.group(1) if tensor else part.strip())
    return out


def _buffer_of(node: ast.AST) -> str:
    """``buf2`` for ``buf2`` and for ``reinterpret_tensor(buf2, ...)``; else the argument's source text."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Name):
        return node.args[0].id
    return ast.unparse(node)


def _call_of(text: str) -> tuple[ast.Call, str | None] | None:
    try:
        stmt = ast.parse(text.strip()).body[0]
    except (SyntaxError, IndexError):
        return None
    target = None
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
        target, value = stmt.targets[0].id, stmt.value
    elif isinstance(stmt, ast.Expr):
        value = stmt.value
    else:
        return None
    return (value, target) if isinstance(value, ast.Call) else None


@functools.lru_cache(maxsize=4)
def _lines(wrapper_source: str) -> tuple[str, ...]:
    """The wrapper's lines, split once for all its kernels (a 24-block step: 360 kernels, a 2 MB wrapper)."""
    return tuple(wrapper_source.splitlines())


def kernel_calls(kernel: Any, wrapper_source: str) -> list[KernelCall]:
    """Every call of ``kernel`` in the wrapper, in wrapper order, with the buffers it writes."""
    lines = _lines(wrapper_source)
    numbers = kernel.call_lines
    params = parameter_names(kernel)
    calls = []
    for number in numbers:
        if not 0 < number <= len(lines):
            continue
        parsed = _call_of(lines[number - 1])
        if parsed is None:
            continue
        call, target = parsed
        call_out = KernelCall(line=number, args=[_buffer_of(a) for a in call.args])
        if kernel.language == "extern":
            out = next((kw.value for kw in call.keywords if kw.arg == "out"), None)
            call_out.keyword_output = _buffer_of(out) if out is not None else target
        else:
            for position, (name, buffer) in enumerate(zip(params, call_out.args)):
                if name.startswith(_WRITTEN):
                    call_out.outputs[position] = buffer
                    if name.startswith("in_out_ptr"):
                        call_out.inplace.add(position)
        calls.append(call_out)
    return calls


def extern_function(kernel: Any) -> str | None:
    """``mm`` for a kernel whose source is ``extern_kernels.mm(...)``; None for other extern calls."""
    match = re.search(r"\bextern_kernels\.(\w+)\(", kernel.source)
    return match.group(1) if match else None


def defined_buffers(kernel: Any, graph: Any) -> dict[str, str | None]:
    """The buffers ``kernel`` computes -> the post-grad node whose value each holds (None: a buffer of
    Inductor's own), from the loop IR of the scheduler nodes it implements. A C++ wrapper cannot be read
    as Python like the call lines above, so runs of a package find a kernel's outputs this way."""
    mine = set(kernel.loop_ir)
    return {buffer: ir.buffer_nodes.get(buffer) for ir in graph.loop_ir if ir.name in mine
            for buffer in [*ir.buffers, *ir.buffer_nodes]}
