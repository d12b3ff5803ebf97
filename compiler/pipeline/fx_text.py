"""FX graph code as torch prints it (``GraphModule.print_readable``) -> an FxStage, without running it.

TORCH_TRACE logs keep Dynamo's graph, the AOT graphs and the post-grad graph as printed code::

    def forward(self, L_x_: "f32[8, 3][3, 1]cpu"):
        l_x_ = L_x_
        # File: /path/model.py:3 in f, code: y = torch.sin(x) + 1
        sin: "f32[8, 3][3, 1]cpu" = torch.sin(l_x_);  l_x_ = None

The code is parsed with ``ast`` (never executed): every assignment is a node, its annotation gives
dtype and shape, the ``# File:`` comment above it the user line. Targets are spelled as a live
capture spells them (``aten.sin.default``, ``operator.add``), so loaded and live graphs compare.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from .._torch.fx_print import dtype_name
from ..model.stages import FxNode, FxStage

_CLASS_NAME = re.compile(r"^(\s*class )<[^>]*>\(", re.M)  # "class <lambda>(...)" is not Python
_FILE = re.compile(r"#\s*File: (?P<file>.+?):(?P<line>\d+) in (?P<fn>[^,]+), code: (?P<code>.*)$")
_NO_STACK = "# No stacktrace found"
_ANNOTATION = re.compile(r"^(?P<dtype>[a-z]+[0-9a-z]*)\[(?P<shape>[^\]]*)\]")
_SYM = re.compile(r"^Sym\((?P<expr>.*)\)$")
_MODULES = {"torch._C._nn": "torch.nn.functional", "_operator": "operator"}
_OPERATORS = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "truediv", ast.FloorDiv: "floordiv",
              ast.Mod: "mod", ast.Pow: "pow", ast.MatMult: "matmul", ast.BitAnd: "and_", ast.BitOr: "or_",
              ast.BitXor: "xor", ast.LShift: "lshift", ast.RShift: "rshift", ast.USub: "neg", ast.UAdd: "pos",
              ast.Invert: "invert", ast.Not: "not_", ast.Eq: "eq", ast.NotEq: "ne", ast.Lt: "lt", ast.LtE: "le",
              ast.Gt: "gt", ast.GtE: "ge"}
_ARGS_LIMIT = 240


def parse(stage: str, code: str) -> FxStage:
    """The FxStage of printed graph code; code that does not parse gives its text and no nodes.

    A higher-order op's bodies are printed as classes nested in the graph's class (``class
    true_graph_0(torch.nn.Module)``); their nodes join the stage under qualified names
    (``true_graph_0.sin``) with ``subgraph`` set, as a live capture names them."""
    try:
        tree = ast.parse(_CLASS_NAME.sub(r"\1_graph(", code))
    except SyntaxError:
        return FxStage(stage=stage, code=code, nodes=[])
    forward = _forward(tree)
    if forward is None:
        return FxStage(stage=stage, code=code, nodes=[])
    nodes = _Builder(code, forward).nodes()
    top = next((stmt for stmt in tree.body if isinstance(stmt, ast.ClassDef) and forward in stmt.body), None)
    for path, body in _subgraphs(top, ""):
        nodes += [_qualified(node, path) for node in _Builder(code, body).nodes()]
    return FxStage(stage=stage, code=code, nodes=nodes)


def _subgraphs(owner: ast.ClassDef | None, prefix: str) -> list[tuple[str, ast.FunctionDef]]:
    """(dotted path, forward) of every class nested in ``owner`` that has a forward, depth first."""
    found: list[tuple[str, ast.FunctionDef]] = []
    for stmt in owner.body if owner is not None else []:
        if isinstance(stmt, ast.ClassDef):
            forward = next((f for f in stmt.body if isinstance(f, ast.FunctionDef) and f.name == "forward"), None)
            path = f"{prefix}.{stmt.name}" if prefix else stmt.name
            if forward is not None:
                found.append((path, forward))
            found += _subgraphs(stmt, path)
    return found


def _qualified(node: FxNode, path: str) -> FxNode:
    node.name = f"{path}.{node.name}"
    node.inputs = [f"{path}.{n}" for n in node.inputs]
    node.users = [f"{path}.{n}" for n in node.users]
    node.subgraph = path
    return node


def user_lines(code: str) -> dict[tuple[str, int], str]:
    """(file, line) -> source text of every ``# File: ..., code: ...`` comment in printed graph code."""
    return {(m["file"], int(m["line"])): m["code"].strip() for m in map(_FILE.search, code.splitlines()) if m}


def _forward(tree: ast.Module) -> ast.FunctionDef | None:
    for stmt in tree.body:
        if isinstance(stmt, ast.FunctionDef) and stmt.name == "forward":
            return stmt
        if isinstance(stmt, ast.ClassDef):
            for inner in stmt.body:
                if isinstance(inner, ast.FunctionDef) and inner.name == "forward":
                    return inner
    return None


def _shape_dtype(annotation: Any) -> tuple[list[Any] | None, str | None]:
    if not (isinstance(annotation, ast.Constant) and isinstance(annotation.value, str)):
        return None, None
    text = annotation.value.strip()
    if text.startswith("("):  # a tuple of values: the first one's (as a live capture reports)
        text = text[1:].split("]", 2)[0] + "]" if "[" in text else text[1:]
    symbolic = _SYM.match(text)
    if symbolic:
        return [], "SymInt"
    match = _ANNOTATION.match(text)
    if match is None:
        return None, None
    shape = [int(s) if s.strip().lstrip("-").isdigit() else s.strip() for s in match["shape"].split(",") if s.strip()]
    return shape, dtype_name(match["dtype"])


def _dotted(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


def _normalized(target: str) -> str:
    if target.startswith("torch.ops.higher_order."):  # a live capture names higher-order ops so too
        return target
    if target.startswith("torch.ops."):
        return target[len("torch.ops."):]
    module, _, name = target.rpartition(".")
    return f"{_MODULES[module]}.{name}" if module in _MODULES else target


class _Builder:
    def __init__(self, code: str, forward: ast.FunctionDef) -> None:
        self.code = code
        self.forward = forward
        self.frames = self._frames(code.splitlines())
        self.out: list[FxNode] = []
        self.by_name: dict[str, FxNode] = {}
        self.arguments: dict[str, ast.arg] = {a.arg: a for a in forward.args.args if a.arg != "self"}
        self.aliased: set[str] = set()

    @staticmethod
    def _frames(lines: list[str]) -> list[tuple[str, int, str] | None]:
        """The user frame in force at each line (1-based index), from the ``# File:`` comments."""
        current: tuple[str, int, str] | None = None
        out: list[tuple[str, int, str] | None] = [None]
        for text in lines:
            match = _FILE.search(text)
            if match:
                current = (match["file"], int(match["line"]), match["fn"].strip())
            elif _NO_STACK in text:
                current = None
            out.append(current)
        return out

    def nodes(self) -> list[FxNode]:
        self.aliased = {stmt.value.id for stmt in self.forward.body if isinstance(stmt, ast.Assign)
                        and isinstance(stmt.value, ast.Name) and stmt.value.id in self.arguments}
        for name, argument in self.arguments.items():  # inputs Dynamo did not rename (AOT / post-grad graphs)
            if name not in self.aliased:
                self._add(name, "placeholder", name, argument.annotation, stmt=None)
        for stmt in self.forward.body:
            self._statement(stmt)
        placeholders = [n for n in self.out if n.op == "placeholder"]
        order = list(self.arguments)
        placeholders.sort(key=lambda n: order.index(n.target) if n.target in order else len(order))
        self.out = placeholders + [n for n in self.out if n.op != "placeholder"]
        for node in self.out:
            for name in node.inputs:
                if name in self.by_name and node.name not in self.by_name[name].users:
                    self.by_name[name].users.append(node.name)
        return self.out

    def _statement(self, stmt: ast.stmt) -> None:
        if isinstance(stmt, ast.Return):
            names = self._names(stmt.value) if stmt.value is not None else []
            first = self.by_name[names[0]] if names else None  # a live graph's output reports its first value
            node = FxNode(name="output", op="output", target="output", args=self._segment(stmt.value),
                          inputs=names, shape=first.shape if first else None, dtype=first.dtype if first else None)
            self.out.append(node)
            self.by_name[node.name] = node
            return
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
            target, value, annotation = stmt.target.id, stmt.value, stmt.annotation
        elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            target, value, annotation = stmt.targets[0].id, stmt.value, None
        else:
            return
        if isinstance(value, ast.Constant) and value.value is None:
            return  # "x = None": the printed code freeing a value, not a node
        if isinstance(value, ast.Name) and value.id in self.aliased:
            # Dynamo's "l_x_ = L_x_": the placeholder under its node name
            self._add(target, "placeholder", value.id, self.arguments[value.id].annotation, stmt=None)
            return
        op, name, inputs, args = self._call(value)
        self._add(target, op, name, annotation, stmt=stmt, inputs=inputs, args=args)

    def _call(self, value: ast.expr) -> tuple[str, str, list[str], str]:
        if isinstance(value, ast.Call):
            dotted = _dotted(value.func) or ast.unparse(value.func)
            parts = list(value.args) + [k.value for k in value.keywords]
            args = "(" + ", ".join(self._segment(a) for a in value.args) + \
                   "".join(f", {k.arg}={self._segment(k.value)}" for k in value.keywords) + ")"
            if dotted.startswith("self."):
                return "call_module", dotted[len("self."):], self._names(*parts), args
            if isinstance(value.func, ast.Attribute) and isinstance(value.func.value, ast.Name) \
                    and value.func.value.id in self.by_name:
                return "call_method", value.func.attr, self._names(value.func.value, *parts), args
            return "call_function", _normalized(dotted), self._names(*parts), args
        if isinstance(value, ast.Attribute) and (_dotted(value) or "").startswith("self."):
            return "get_attr", (_dotted(value) or "")[len("self."):], [], ""
        if isinstance(value, ast.BinOp):
            return "call_function", f"operator.{_OPERATORS.get(type(value.op), 'op')}", \
                self._names(value.left, value.right), f"({self._segment(value.left)}, {self._segment(value.right)})"
        if isinstance(value, ast.UnaryOp):
            return "call_function", f"operator.{_OPERATORS.get(type(value.op), 'op')}", \
                self._names(value.operand), f"({self._segment(value.operand)},)"
        if isinstance(value, ast.Compare) and len(value.ops) == 1:
            return "call_function", f"operator.{_OPERATORS.get(type(value.ops[0]), 'op')}", \
                self._names(value.left, *value.comparators), \
                f"({self._segment(value.left)}, {self._segment(value.comparators[0])})"
        if isinstance(value, ast.Subscript):
            return "call_function", "operator.getitem", self._names(value.value, value.slice), \
                f"({self._segment(value.value)}, {self._segment(value.slice)})"
        return "call_function", ast.unparse(value)[:_ARGS_LIMIT], self._names(value), ""

    def _names(self, *exprs: ast.AST | None) -> list[str]:
        found: list[str] = []
        for expr in exprs:
            for node in ast.walk(expr) if expr is not None else ():
                if isinstance(node, ast.Name) and node.id in self.by_name and node.id not in found:
                    found.append(node.id)
        return found

    def _segment(self, expr: ast.AST | None) -> str:
        if expr is None:
            return ""
        text = ast.unparse(expr)
        return text if len(text) <= _ARGS_LIMIT else text[: _ARGS_LIMIT - 3] + "..."

    def _add(self, name: str, op: str, target: str, annotation: Any, stmt: ast.stmt | None,
             inputs: list[str] | None = None, args: str = "") -> None:
        shape, dtype = _shape_dtype(annotation)
        frame = self.frames[stmt.lineno] if stmt is not None and stmt.lineno < len(self.frames) else None
        node = FxNode(name=name, op=op, target=target, args=args, shape=shape, dtype=dtype, inputs=list(inputs or []),
                      user_line=(frame[0], frame[1]) if frame else None, stack=[frame] if frame else [])
        self.out.append(node)
        self.by_name[name] = node


def link(post_grad: FxStage, fx: FxStage, post_to_pre: dict[str, list[str]] | None) -> None:
    """Fill ``post_grad_node.fx`` and ``fx_node.post_grad``: from Inductor's provenance mapping when the
    log has one (``postToPre``), else from the user line both nodes point at."""
    fx_nodes = {n.name: n for n in fx.nodes if n.op not in ("placeholder", "output", "get_attr")}
    for node in post_grad.nodes:
        if node.op in ("placeholder", "output"):
            continue
        if node.subgraph is not None:  # the mapping names subgraph nodes without their subgraph: by line
            origins = [n.name for n in fx_nodes.values() if n.subgraph and node.user_line and n.user_line == node.user_line]
        elif post_to_pre is not None:
            origins = [name for name in post_to_pre.get(node.name, []) if name in fx_nodes]
        else:
            origins = [n.name for n in fx_nodes.values() if node.user_line and n.user_line == node.user_line]
        node.fx = origins
        for name in origins:
            if node.name not in fx_nodes[name].post_grad:
                fx_nodes[name].post_grad.append(node.name)
