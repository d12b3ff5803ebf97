"""Reading Inductor's C++ wrapper (``cpp_wrapper`` and AOTInductor): kernel definitions and their calls.

The C++ wrapper calls each generated kernel by name (``cpp_fused_relu_0(...)``; on a GPU
``call_triton_poi_fused_add_0(...)`` around a launch) and marks every call with the same provenance
comment as the Python wrapper (``// [Provenance debug handles] cpp_fused_relu_0:2``). C++ kernels are
``extern "C"`` functions, defined in the wrapper itself (JIT ``cpp_wrapper``) or in the separate kernel
file of an AOT package; Triton kernels keep their Python source in the first, Python pass of AOT
codegen, in a comment of the C++ function that launches them (an AOT package on a GPU), or, in a JIT
``cpp_wrapper`` module on a GPU, in its compile-time auto-tuning block. A JIT
``cpp_wrapper`` module is Python that holds the C++ source as one string (``cpp_wrapper_src``): that
string is the wrapper stage.
"""

from __future__ import annotations

import ast
import re
import textwrap

from .wrapper_code import KernelDefinition, handle_comments, mentions

_HANDLE_COMMENT = re.compile(r"//\s*\[Provenance debug handles\]\s*(?P<key>\S+)")
_EXTERN_C = re.compile(r'^extern\s+"C"[^(;{\n]*?\b(?P<name>[A-Za-z_]\w*)\s*\(', re.MULTILINE)
_SOURCE_NAME = "cpp_wrapper_src"
_AUTOTUNE_BLOCK = "Compile-time auto-tuning block:"
_COMMENT_BLOCK = re.compile(r"/\*(.*?)\*/", re.DOTALL)
_ASYNC_COMPILE = re.compile(r"async_compile\.\w+\(\s*'(?P<name>\w+)'")


def cpp_source(python_wrapper: str) -> str | None:
    """The C++ source a JIT ``cpp_wrapper`` module compiles, or None when ``python_wrapper`` is not one."""
    if _SOURCE_NAME not in python_wrapper:
        return None
    try:
        tree = ast.parse(python_wrapper)
    except SyntaxError:
        return None
    for stmt in tree.body:
        if (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
                and stmt.targets[0].id == _SOURCE_NAME and isinstance(stmt.value, ast.Constant)
                and isinstance(stmt.value.value, str)):
            return stmt.value.value.strip("\n")
    return None


def python_kernels_source(python_wrapper: str) -> str:
    """The Python that defines a JIT ``cpp_wrapper`` module's Triton kernels. On a GPU, Inductor writes
    them into a "Compile-time auto-tuning block" that is the module's docstring (run once at compile time
    to build and tune the kernels the C++ then loads as cubins); elsewhere the module itself."""
    try:
        tree = ast.parse(python_wrapper)
    except SyntaxError:
        return python_wrapper
    block = (ast.get_docstring(tree, clean=False) or "").lstrip()
    return block[len(_AUTOTUNE_BLOCK):] if block.startswith(_AUTOTUNE_BLOCK) else python_wrapper


def commented_python_kernels(wrapper: str) -> str:
    """Python assigning each Triton kernel whose definition an AOT C++ wrapper keeps in a comment: on a GPU,
    AOTInductor writes ``async_compile.triton('name', '''<source>''')`` into a ``/* ... */`` block of the
    ``call_<name>`` function that launches the kernel, indented with the function's body. The result
    reads like a Python wrapper (``name = async_compile.triton(...)``); empty when there is none."""
    definitions = []
    for block in _COMMENT_BLOCK.findall(wrapper):
        text = textwrap.dedent(block).strip()
        named = _ASYNC_COMPILE.match(text)
        if named:
            definitions.append(f"{named.group('name')} = {text}")
    return "\n\n".join(definitions)


def kernel_definitions(wrapper: str, kernel_code: str = "",
                       python_kernels: dict[str, KernelDefinition] | None = None) -> dict[str, KernelDefinition]:
    """Every kernel the C++ ``wrapper`` calls, with its source: a C++ kernel from its ``extern "C"``
    definition in ``wrapper`` or ``kernel_code``, a Triton kernel from ``python_kernels`` (the Python
    pass's definitions). ``lines`` is where the wrapper defines or declares the kernel (its first line,
    or where its first call is when it does neither); ``calls`` are the wrapper lines that call it. Only
    called functions are kernels: the wrapper's own ``extern "C"`` entry points are not."""
    found: dict[str, KernelDefinition] = {}
    for name, (source, language) in {**_cpp_functions(kernel_code), **_cpp_functions(wrapper)}.items():
        found[name] = KernelDefinition(name=name, language=language, source=source, lines=(0, 0))
    for name, definition in (python_kernels or {}).items():
        if name not in found:
            found[name] = KernelDefinition(name=name, language=definition.language, source=definition.source,
                                           lines=(0, 0))
    _place(wrapper, found)
    called = {name: d for name, d in found.items() if d.calls}  # the wrapper's own functions are never called
    for definition in called.values():
        if definition.lines == (0, 0):  # neither declared nor defined in the wrapper: its first call stands in
            definition.lines = (definition.calls[0], definition.calls[0])
            definition.calls = definition.calls[1:]
    return called


def handle_call_lines(wrapper: str) -> dict[str, tuple[int, str]]:
    """Provenance key (``name:handle``) -> (line number, text) of the C++ statement it annotates."""
    lines = wrapper.splitlines()
    out: dict[str, tuple[int, str]] = {}
    for index, key in handle_comments(lines, _HANDLE_COMMENT):
        name = key.rpartition(":")[0] or key
        statements = [(follow + 1, lines[follow].strip()) for follow in range(index + 1, min(index + 8, len(lines)))]
        statements = [(number, text) for number, text in statements if text and not text.startswith(("//", "{", "}"))]
        calling = [(number, text) for number, text in statements if name in text]  # past the shim's array constants
        if calling or statements:
            out[key] = (calling or statements)[0]
    return out


def _cpp_functions(code: str) -> dict[str, tuple[str, str]]:
    """name -> (source, "cpp") of each ``extern "C"`` function *defined* (with a body) in ``code``."""
    out: dict[str, tuple[str, str]] = {}
    for match in _EXTERN_C.finditer(code):
        end = _body_end(code, match.end())
        if end is not None:
            start = code.rfind("\n#include", 0, match.start())  # the kernel's own includes belong to it
            begin = start + 1 if start != -1 and "}" not in code[start:match.start()] else match.start()
            out[match["name"]] = (code[begin:end].strip("\n"), "cpp")
    return out


def _body_end(code: str, position: int) -> int | None:
    """The end of the function body after a signature starting before ``position`` (None for a
    declaration): parentheses first, then the braces matched."""
    depth, index = 1, position
    while index < len(code) and depth:
        depth += {"(": 1, ")": -1}.get(code[index], 0)
        index += 1
    rest = code[index:].lstrip()
    if not rest.startswith("{"):
        return None
    index = code.index("{", index)
    depth = 0
    for cursor in range(index, len(code)):
        depth += {"{": 1, "}": -1}.get(code[cursor], 0)
        if depth == 0:
            return cursor + 1
    return None


def _place(wrapper: str, found: dict[str, KernelDefinition]) -> None:
    """Fill ``lines`` (where the wrapper declares or defines each kernel) and ``calls``. Comments are not
    calls: neither ``//`` lines nor the ``/* ... */`` blocks that hold Triton kernels' Python."""
    commented: set[int] = set()
    line, position = 1, 0  # newlines counted once, block after block
    for match in _COMMENT_BLOCK.finditer(wrapper):
        line += wrapper.count("\n", position, match.start())
        last = line + wrapper.count("\n", match.start(), match.end())
        commented.update(range(line, last + 1))
        line, position = last, match.end()
    for lineno, line, name in mentions(wrapper, found, r"\b(?:call_)?", r"\s*\("):
        if line.lstrip().startswith("//") or lineno in commented:
            continue
        definition = found[name]
        if line.lstrip().startswith("extern") or re.match(r"\s*(static\s+)?(inline\s+)?void\s", line):
            if definition.lines == (0, 0):
                definition.lines = (lineno, lineno)
        else:
            definition.calls.append(lineno)
