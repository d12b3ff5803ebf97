"""A kernel launch's arguments, read from the trace alone: what a reproducer of a loaded trace's kernel
launches it with.

A loaded trace holds no tensors, only their layouts. A reproducer launches the kernel on random tensors
of the shape, stride, dtype and device each argument had, from the first of these that has them:

- the Triton kernel module's benchmark harness (``def get_args()`` in ``k.source``, written by GPU
  captures): concrete values, also under dynamic shapes;
- the wrapper: the kernel's call line names its arguments (``cpp_fused_add_0(buf2, arg0_1)``) and each
  name is defined by an allocation (``buf2 = empty_strided_cpu((16, 48), (48, 1), torch.float32)``), a
  reuse (``buf2 = buf0; del buf0  # reuse``), a view (``reinterpret_tensor(buf0, size, stride, offset)``)
  or, for a graph input, the wrapper's own ``get_args()`` (``arg0_1 = rand_strided(...)``).

A tensor argument is a ``TensorSpec`` dict; a scalar stays a number. Under dynamic shapes sizes are
expressions of symbols (``empty_strided_cpu((s77, ), ...)``, ``s77 = arg0_1``): they are computed from
the values the wrapper's ``get_args()`` gives the graph's scalar inputs. An argument none of these pins
down raises ``ValueError`` naming it.
"""

from __future__ import annotations

import ast
import operator
import re
from typing import Any, TypedDict

from . import kernel_io


class TensorSpec(TypedDict):
    shape: list[int]
    stride: list[int]
    dtype: str  # torch's name without "torch.": "float32"
    device: str


def cpp_argtypes(kernel: Any, wrapper_source: str) -> list[str]:
    """The C++ parameter types the wrapper binds ``kernel`` with
    (``cpp_fused_add_0 = async_compile.cpp_pybinding(['float*', 'const int64_t'], ...)``)."""
    match = re.search(rf"^{re.escape(kernel.name)} = async_compile\.cpp_pybinding\((\[[^\]]*\])",
                      wrapper_source, re.MULTILINE)
    if match is None and kernel_io.parameter_types(kernel):  # a C++ wrapper calls the kernel as declared
        return kernel_io.parameter_types(kernel)
    if match is None:
        raise ValueError(f"the wrapper does not bind {kernel.name} with async_compile.cpp_pybinding "
                         "(a cpp_wrapper compile?): its argument types are unknown")
    return list(ast.literal_eval(match.group(1)))


def launch_args(kernel: Any, wrapper_source: str) -> list[TensorSpec | int | float | bool | None]:
    """The arguments of ``kernel``'s first launch, as specs and scalars (see the module docstring)."""
    harness = _function(kernel.source, "get_args")
    if harness is not None:
        returned = next((n.value for n in ast.walk(harness) if isinstance(n, ast.Return)), None)
        if isinstance(returned, (ast.Tuple, ast.List)):
            reader = _Reader(harness, f"{kernel.name}'s get_args()")
            return [reader.value(item) for item in returned.elts]
    calls = kernel_io.kernel_calls(kernel, wrapper_source)
    if not calls:
        raise ValueError(f"no call of {kernel.name} in the wrapper and no get_args() in its source: the "
                         "arguments it was launched with are not in this trace")
    line = wrapper_source.splitlines()[calls[0].line - 1].strip()
    call = ast.parse(line).body[0].value  # kernel_calls parsed this very line
    reader = _Reader(ast.parse(wrapper_source), f"the wrapper's line {calls[0].line} ({line})")
    declared = _declared_dtypes(kernel, wrapper_source)
    device = "cpu" if kernel.language == "cpp" else "cuda"
    return [reader.value(arg, declared[i] if i < len(declared) else None, device) for i, arg in enumerate(call.args)]


# the element type of a pointer parameter: C++ (codegen/cpp_utils.DTYPE_TO_CPP) and Triton signatures
_CPP_DTYPES = {"float": "float32", "double": "float64", "at::Half": "float16", "at::BFloat16": "bfloat16",
               "int64_t": "int64", "int32_t": "int32", "int16_t": "int16", "int8_t": "int8", "uint8_t": "uint8",
               "bool": "bool"}
_TRITON_DTYPES = {"fp32": "float32", "fp64": "float64", "fp16": "float16", "bf16": "bfloat16", "i64": "int64",
                  "i32": "int32", "i16": "int16", "i8": "int8", "u8": "uint8", "i1": "bool"}


def _declared_dtypes(kernel: Any, wrapper_source: str) -> list[str | None]:
    """The dtype each parameter of the kernel points to (None for a scalar or an unknown type)."""
    if kernel.language == "cpp":
        types = [t.replace("const ", "").strip() for t in cpp_argtypes(kernel, wrapper_source)]
        return [_CPP_DTYPES.get(t[:-1]) if t.endswith("*") else None for t in types]
    signature = (kernel.meta.get("triton_meta") or {}).get("signature") or {}
    return [_TRITON_DTYPES.get(t[1:]) if t.startswith("*") else None for t in signature.values()]


def _function(source: str, name: str) -> ast.FunctionDef | None:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    return next((n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == name), None)


_OPERATORS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.FloorDiv: operator.floordiv,
              ast.Mod: operator.mod}


class _Reader:
    """Resolves launch arguments against the assignments of one source tree (the harness or the wrapper).

    ``name = value`` is kept for every plain assignment: only ``get_args`` and a graph's ``call`` assign
    the names a launch passes, each once (graph inputs ``call`` unpacks from a tuple, which is not kept).
    The layouts the wrapper asserts are kept too: it asserts those of the buffers extern ops return
    (``buf3 = torch.ops.aten.cumsum.default(...)``), as ``assert_size_stride(buf3, size, stride, ...)``
    (torch 2.11 to 2.13; the dtype is then the one the kernel's parameter declares) or
    ``assert_tensor_metadata(buf3, size, stride, dtype, ...)`` (2.14), and the graph inputs' in
    ``assert_size_stride_grouped((names), (sizes), (strides), ...)`` (2.14).
    """

    def __init__(self, tree: ast.AST, where: str) -> None:
        self.where = where
        self.names: dict[str, ast.expr] = {}
        self.asserted: dict[str, tuple[ast.expr, ast.expr, ast.expr | None]] = {}  # name -> size, stride, dtype
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                self.names[node.targets[0].id] = node.value
            elif isinstance(node, ast.Call) and len(node.args) >= 3:
                self._keep_assert(ast.unparse(node.func), node.args)

    def _keep_assert(self, function: str, args: list[ast.expr]) -> None:
        if function in ("assert_size_stride", "assert_tensor_metadata") and isinstance(args[0], ast.Name):
            dtype = args[3] if function == "assert_tensor_metadata" and len(args) > 3 else None
            self.asserted[args[0].id] = (args[1], args[2], dtype)
        elif function == "assert_size_stride_grouped" and all(isinstance(a, ast.Tuple) for a in args[:3]):
            for name, size, stride in zip(*(a.elts for a in args[:3])):
                if isinstance(name, ast.Name):
                    self.asserted[name.id] = (size, stride, None)

    def fail(self, node: ast.expr, why: str) -> ValueError:
        return ValueError(f"cannot recover the argument {ast.unparse(node)!r} of {self.where}: {why}")

    def value(self, node: ast.expr, declared: str | None = None, device: str = "cpu", depth: int = 0) -> Any:
        """The spec or scalar ``node`` stands for; ``declared``: the dtype the kernel's parameter points to."""
        if depth > 32:
            raise self.fail(node, "its definitions go round in a circle")
        if isinstance(node, ast.Constant) or (isinstance(node, ast.UnaryOp) and isinstance(node.operand, ast.Constant)):
            return ast.literal_eval(node)
        if isinstance(node, (ast.BinOp, ast.UnaryOp)):
            return self.integer(node, depth)
        if isinstance(node, ast.Name):
            if node.id not in self.names and node.id not in self.asserted:
                raise self.fail(node, "it is a symbol with no value in the trace")
            try:
                return self.value(self.names[node.id], declared, device, depth + 1)
            except (KeyError, ValueError):
                size, stride, dtype = self.asserted.get(node.id, (None, None, None))
                if size is None or (dtype is None and declared is None):
                    raise
                return TensorSpec(shape=self.ints(size, depth), stride=self.ints(stride, depth),
                                  dtype=_dtype(dtype) if dtype is not None else declared, device=device)
        if not isinstance(node, ast.Call):
            raise self.fail(node, "not a tensor allocation, a view or a number")
        return self.allocation(node, declared, device, depth)

    def integer(self, node: ast.expr, depth: int) -> int:
        """An integer expression of sizes (``s77``, ``2*s27 + 1``): names resolve to the scalars the
        trace gives them (under dynamic shapes, the graph inputs of the wrapper's ``get_args()``)."""
        if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
            return _OPERATORS[type(node.op)](self.integer(node.left, depth), self.integer(node.right, depth))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -self.integer(node.operand, depth)
        value = self.value(node, depth=depth + 1) if isinstance(node, ast.Name) else getattr(node, "value", None)
        if not isinstance(value, int) or isinstance(value, bool):
            raise self.fail(node, "not an integer the trace gives a value")
        return value

    def ints(self, node: ast.expr, depth: int) -> list[int]:
        return [self.integer(item, depth) for item in (node.elts if isinstance(node, (ast.Tuple, ast.List)) else [node])]

    def allocation(self, node: ast.Call, declared: str | None, device: str, depth: int) -> TensorSpec:
        function = ast.unparse(node.func)
        keywords = {k.arg: k.value for k in node.keywords}
        try:
            if function.endswith("rand_strided"):
                return self.spec(node.args[0], node.args[1], keywords.get("dtype"), keywords.get("device"), depth)
            if function.startswith("empty_strided_"):
                return self.spec(node.args[0], node.args[1], node.args[2], function.removeprefix("empty_strided_"), depth)
            if function in ("torch.zeros", "torch.empty"):  # a harness's workspace: torch.zeros(n, device=, dtype=)
                shape = self.ints(node.args[0], depth)
                stride = [1] * len(shape)
                for i in range(len(shape) - 2, -1, -1):
                    stride[i] = stride[i + 1] * shape[i + 1]
                return TensorSpec(shape=shape, stride=stride, dtype=_dtype(keywords.get("dtype")),
                                  device=str(ast.literal_eval(keywords["device"])))
            if function == "reinterpret_tensor":
                base = self.value(node.args[0], declared, device, depth + 1)
                return TensorSpec(shape=self.ints(node.args[1], depth), stride=self.ints(node.args[2], depth),
                                  dtype=base["dtype"], device=base["device"])
        except (IndexError, KeyError, TypeError) as error:
            raise self.fail(node, f"its size, stride, dtype or device is missing ({error})") from None
        raise self.fail(node, f"made by {function}(), which this reader does not know")

    def spec(self, shape: ast.expr, stride: ast.expr, dtype: ast.expr | None, device: ast.expr | str | None,
             depth: int) -> TensorSpec:
        place = device if isinstance(device, str) else ("cpu" if device is None else str(ast.literal_eval(device)))
        return TensorSpec(shape=self.ints(shape, depth), stride=self.ints(stride, depth), dtype=_dtype(dtype),
                          device=place)


def _dtype(node: ast.expr | None) -> str:
    """``torch.float32`` -> ``"float32"`` (torch's default dtype when absent)."""
    return "float32" if node is None else ast.unparse(node).removeprefix("torch.")


class ExternCall(TypedDict):
    """An extern kernel's call as the wrapper makes it: the callee as written (``extern_kernels.mm``,
    ``torch.ops.aten._scaled_dot_product_efficient_attention.default``) and its arguments, each a
    ``TensorSpec``, a number, ``None``, a bool, a string, ``{"attribute": "torch.bfloat16"}`` for a torch
    constant, or a list of these."""

    function: str
    args: list[Any]
    kwargs: dict[str, Any]


def extern_call(kernel: Any, wrapper_source: str) -> ExternCall:
    """How the wrapper calls the extern ``kernel`` (its first call line), with every tensor argument as
    the layout it had there: ``extern_kernels.mm(arg0_1, reinterpret_tensor(buf3, ...), out=buf4)``.

    Layouts are read as for ``launch_args``. A buffer an earlier extern op returned is known only by the
    layout the wrapper asserts for it; when the assertion names no dtype (torch 2.11 to 2.13), it takes
    the dtype of the call's other tensors, as the operands of a matmul or attention share one."""
    calls = kernel_io.kernel_calls(kernel, wrapper_source)
    if not calls:
        raise ValueError(f"no call of {kernel.id} in the wrapper (its wrapper lines: {kernel.wrapper_lines}): the "
                         "arguments it was called with are not in this trace")
    line = wrapper_source.splitlines()[calls[0].line - 1].strip()
    call = ast.parse(line).body[0].value  # kernel_calls parsed this very line as a call (or an assigned one)
    reader = _Reader(ast.parse(wrapper_source), f"the wrapper's line {calls[0].line} ({line})")
    nodes = [*call.args, *(k.value for k in call.keywords)]
    values = _extern_values(reader, nodes, None)
    dtypes = [v["dtype"] for v in _tensors(values)]
    if any(v is _UNRESOLVED for v in values):
        values = _extern_values(reader, nodes, dtypes[0] if dtypes else None, strict=True)
    named = [k.arg for k in call.keywords]
    if None in named:
        raise ValueError(f"the wrapper's line {calls[0].line} ({line}) passes **keywords, which this reader "
                         "does not know")
    return ExternCall(function=ast.unparse(call.func), args=values[:len(call.args)],
                      kwargs=dict(zip([str(n) for n in named], values[len(call.args):])))


_UNRESOLVED = object()


def _extern_values(reader: _Reader, nodes: list[ast.expr], declared: str | None, strict: bool = False) -> list[Any]:
    """Each argument's value; ``_UNRESOLVED`` for a tensor whose dtype is not known yet (unless ``strict``)."""
    out: list[Any] = []
    for node in nodes:
        try:
            out.append(_extern_value(reader, node, declared))
        except (KeyError, ValueError) as error:
            if strict:
                raise error if isinstance(error, ValueError) else reader.fail(node, "its layout is not in the wrapper")
            out.append(_UNRESOLVED)
    return out


def _extern_value(reader: _Reader, node: ast.expr, declared: str | None) -> Any:
    if isinstance(node, (ast.Tuple, ast.List)):
        return [_extern_value(reader, item, declared) for item in node.elts]
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Attribute) and ast.unparse(node).startswith("torch."):
        return {"attribute": ast.unparse(node)}
    return reader.value(node, declared, "cuda")


def _tensors(values: list[Any]) -> list[TensorSpec]:
    found: list[TensorSpec] = []
    for value in values:
        if isinstance(value, list):
            found += _tensors(value)
        elif isinstance(value, dict) and "shape" in value:
            found.append(value)  # type: ignore[arg-type]
    return found
