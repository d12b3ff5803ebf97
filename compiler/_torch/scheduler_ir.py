"""Plain records of Inductor's scheduler nodes (the loop-level IR) and fused groups.

Called from inside ``Scheduler._init`` (``V.graph`` is live there: several node methods need it).
Index expressions and ranges stay sympy objects; everything else becomes str/list.

The texts are made here, eagerly, because what they are made from does not stay as it is: fusion
replaces a node's ``_body`` (loop reordering, merging) and ``LoopBodyBlock.extract_pw_from_reduction``
edits a block's FX graph in place, and the copies that reordering makes share that graph. What makes
them cheap instead: each body block's code comes straight from its FX graph (``LoopBody.debug_str``
builds a GraphModule per block only to read its code), and sympy's printer, slow and called with the
same index expressions for every layer of a model, runs once per distinct expression of a graph.
"""

from __future__ import annotations

import re
from typing import Any, Callable

from torch._inductor import ir as _ir
from torch._inductor import scheduler as _sched
from torch._inductor.virtualized import V

NameOf = Callable[[Any], str]  # an origin fx.Node -> the name it has in the captured stage
Text = Callable[[Any], str]  # str() of a sympy expression (or anything printable)


def _plain_name(node: Any) -> str:
    return node.name


_KINDS = (
    ("ExternKernelSchedulerNode", "extern"),
    ("NopKernelSchedulerNode", "nop"),
    ("ForeachKernelSchedulerNode", "foreach"),
    ("FusedMixOrderReductions", "fused"),
    ("FusedSchedulerNode", "fused"),
    ("GroupedSchedulerNode", "grouped"),
)


def node_kind(snode: Any) -> str:
    for cls_name, kind in _KINDS:
        cls = getattr(_sched, cls_name, None)
        if cls is not None and isinstance(snode, cls):
            return kind
    if _is_template(snode):
        return "template"
    if isinstance(snode, _sched.SchedulerNode):
        return "reduction" if snode.is_reduction() else "pointwise"
    return "other"


def _is_template(snode: Any) -> bool:
    try:
        return bool(snode.is_template())
    except Exception:
        return False


def expression_texts() -> Text:
    """``str`` of an expression, remembered: one graph's nodes print the same index expressions and
    sizes over and over (every layer of a stack repeats them). Keys compare as sympy does, structurally
    (since sympy 1.13 ``Float(2.0) != Integer(2)``), so equal keys print alike. Made per graph, so
    nothing outlives it."""
    memo: dict[Any, str] = {}

    def text(expr: Any) -> str:
        try:
            return memo[expr]
        except KeyError:
            printed = memo[expr] = str(expr)
            return printed
        except TypeError:  # unhashable
            return str(expr)

    return text


def _dep_str(dep: Any, text: Text = str) -> str:
    """``buf0[c0 + 16*c1]`` for memory deps; ``buf0[*]`` where the dep has no index (StarDep, WeakDep)."""
    try:
        return f"{dep.name}[{text(dep.index)}]"
    except (NotImplementedError, AttributeError):
        return f"{dep.name}[*]"


def _origins(ir_node: Any, name_of: NameOf) -> list[str]:
    origins = getattr(ir_node, "origins", None) or ()
    return [name_of(o) for o in origins]


def _layout(ir_node: Any, text: Text = str) -> dict[str, Any]:
    try:
        layout = ir_node.get_layout()
        return {
            "dtype": str(layout.dtype),
            "size": [text(s) for s in layout.size],
            "stride": [text(s) for s in layout.stride],
        }
    except Exception:
        return {"dtype": None, "size": [], "stride": []}


def _device(ir_node: Any) -> str | None:
    try:
        device = ir_node.get_device()
        return None if device is None else str(device.type)
    except Exception:
        return None


def _extern_target(ir_node: Any) -> str | None:
    for attr in ("python_kernel_name", "op_overload"):
        value = getattr(ir_node, attr, None)
        if value:
            return str(value)
    return None


def _buffer_nodes(snode: Any, name_of: NameOf) -> dict[str, str]:
    """Output buffer -> the post-grad node whose value it holds (Inductor's best-effort ``origin_node``)."""
    out: dict[str, str] = {}
    for buf in snode.get_outputs():
        try:
            origin = buf.node.get_origin_node()
        except (AttributeError, AssertionError):
            continue
        if origin is not None:
            out[buf.get_name()] = name_of(origin)
    return out


def loop_ir_records(snodes: list[Any], name_of: NameOf = _plain_name) -> list[dict[str, Any]]:
    """The pre-fusion scheduler nodes of one graph, sharing one ``expression_texts``."""
    text = expression_texts()
    return [loop_ir_record(snode, name_of, text) for snode in snodes]


def loop_ir_record(snode: Any, name_of: NameOf = _plain_name, text: Text = str) -> dict[str, Any]:
    """One pre-fusion scheduler node: what the loop IR says it computes."""
    ir_node = snode.node
    body = getattr(snode, "_body", None)
    sizes = getattr(snode, "_sizes", None)
    record: dict[str, Any] = {
        "name": snode.get_name(),
        "kind": node_kind(snode),
        "buffers": [buf.get_name() for buf in snode.get_outputs()],
        "buffer_nodes": _buffer_nodes(snode, name_of),
        "device": _device(ir_node) if ir_node is not None else None,
        "ranges": dict(body.var_ranges) if body is not None else {},
        "sizes": [list(part) for part in sizes] if sizes is not None else [],
        "indexing": dict(body.indexing_exprs) if body is not None else {},
        "reads": sorted(_dep_str(d, text) for d in snode.read_writes.reads),
        "writes": sorted(_dep_str(d, text) for d in snode.read_writes.writes),
        "body": _body_text(snode, body, text),
        "origins": _origins(ir_node, name_of) if ir_node is not None else [],
        "extern_target": _extern_target(ir_node) if ir_node is not None else None,
    }
    record.update(_layout(ir_node, text) if ir_node is not None else {"dtype": None, "size": [], "stride": []})
    return record


def _body_text(snode: Any, body: Any, text: Text = str) -> str:
    if body is not None:
        try:
            return loop_body_text(body, text)
        except Exception:  # a LoopBody laid out otherwise than this torch's: Inductor's own printout
            try:
                return str(body.debug_str())
            except Exception:
                return str(body)
    try:
        return snode.debug_str()
    except Exception:
        return ""


_DEL_SUFFIX = re.compile(r";[^\n]*")  # the ``; del var0`` FX appends to a line


def loop_body_text(body: Any, text: Text = str) -> str:
    """What ``LoopBody.debug_str()`` returns, made without a GraphModule per block (tests compare the two)."""
    blocks = [("body", body.root_block), *body.subblocks.items()]
    ranges = ", ".join(f"{text(var)}: {text(size)}" for var, size in body.var_ranges.items())
    lines = [f"var_ranges = {{{ranges}}}"]
    lines += [f"{name} = {text(expr)}" for name, expr in body.indexing_exprs.items()]
    lines += [_block_text(block, name) for name, block in blocks]
    return "\n".join(lines)


def _block_text(block: Any, name: str) -> str:
    """``LoopBodyBlock.debug_str(name)``: the block's FX code as ``def name(self, ops)``."""
    code = block.graph.python_code(root_module="self").src
    return _DEL_SUFFIX.sub("", code.strip().replace("def forward(", f"def {name}("))


def fused_record(snode: Any, name_of: NameOf = _plain_name) -> dict[str, Any]:
    members = [n.get_name() for n in snode.get_nodes()]
    kind = node_kind(snode)
    if kind in ("pointwise", "reduction"):
        kind = "single"
    origins: list[str] = []
    for member in snode.get_nodes():
        for name in _origins(member.node, name_of) if member.node is not None else []:
            if name not in origins:
                origins.append(name)
    return {"name": snode.get_name(), "kind": kind, "nodes": members, "origins": origins}


def eliminated_records(kept: set[str], name_of: NameOf = _plain_name) -> list[dict[str, Any]]:
    """Operations the graph lowered that the scheduler dropped before fusion (dead code)."""
    out = []
    for op in getattr(V.graph, "operations", []):
        try:
            name = op.get_operation_name()
        except Exception:
            continue
        if name in kept:
            continue
        out.append(
            {
                "name": name,
                "kind": "extern" if isinstance(op, _ir.ExternKernel) else "other",
                "buffers": [b.get_name() for b in op.get_outputs()] if hasattr(op, "get_outputs") else [],
                "buffer_nodes": {},
                "device": _device(op),
                "ranges": {}, "sizes": [], "indexing": {}, "reads": [], "writes": [],
                "body": "", "origins": _origins(op, name_of), "extern_target": _extern_target(op),
                **_layout(op),
            }
        )
    return out


def lowered_graph_module() -> Any:
    """The GraphModule the running ``GraphLowering`` lowers: the post-grad graph, or one subgraph of it
    (a cond branch, a loop body) that Inductor lowers and schedules on its own."""
    return getattr(V.graph, "module", None)
