"""What the kernels of real models must list, asserted the same way on the CPU (test_conformance.py) and on
a GPU (tests/gpu/test_gpu_conformance.py): each function raises ``AssertionError`` naming the kernel that
lists too much or too little. The truth each one checks comes from outside the explorer: the library's own
source (the lines of an RMSNorm's forward, of a residual add), the generated code (a kernel that calls
``sin`` computes one) and the graph's structure (what an attention reads).
"""

from __future__ import annotations

import inspect
import re
from typing import Any, Callable

from compiler.model.stages import FxNode, GraphCapture


def source_lines(fn: Callable[..., Any], text: str) -> list[tuple[str, int]]:
    """(file, line) of each line of ``fn``'s source holding ``text`` (under its decorators' wrappers)."""
    fn = inspect.unwrap(fn)
    source, start = inspect.getsourcelines(fn)
    return [(inspect.getsourcefile(fn), start + i) for i, row in enumerate(source) if text in row]


def source_line(fn: Callable[..., Any], text: str) -> tuple[str, int]:
    """(file, line) of the first line of ``fn``'s source holding ``text``."""
    return source_lines(fn, text)[0]


def innermost(node: FxNode) -> tuple[str, int] | None:
    """The line an FX node was traced at: its innermost frame, in a library or not."""
    return tuple(node.stack[-1][:2]) if node.stack else None


def norm_kernels_list_their_layers_lines(graph: GraphCapture, norm_lines: set[tuple[str, int]],
                                         residual_lines: set[tuple[str, int]], on_embeddings: int = 1) -> None:
    """Every kernel computing an RMSNorm (an ``rsqrt``) lists each line of the norm's forward that computes,
    and the residual add it fuses reaches into the layer that called it: the kernel lists the add's line
    exactly when it lists an add whose FX node is on that line, and every residual line of the model is
    listed by some norm kernel (each norm reads a residual sum, but the first of each stack, on the
    embeddings: ``on_embeddings`` of them)."""
    fx = {n.name: n for n in graph.fx}
    norms = [k for k in graph.kernels if any(n.startswith("rsqrt") for n in k.post_grad_nodes)]
    assert norms, "no kernel computes an RMSNorm"
    reached = set()
    for kernel in norms:
        lines = set(kernel.user_lines)
        assert norm_lines <= lines, (kernel.id, sorted(norm_lines - lines))
        added = {innermost(fx[f]) for n in kernel.post_grad_nodes if n.startswith("add")
                 for f in graph.post_grad.node(n).fx if f in fx} & residual_lines
        assert lines & residual_lines == added, (kernel.id, sorted(lines & residual_lines), sorted(added))
        reached |= added
    assert reached == residual_lines, sorted(residual_lines - reached)
    assert len([k.id for k in norms if not set(k.user_lines) & residual_lines]) == on_embeddings


def attention_output_kernels_list_the_transpose(graph: GraphCapture, transpose_line: tuple[str, int]) -> None:
    """The attention's output is transposed back (``sdpa_attention.py``): each kernel listing a node torch
    traces to that line (the permute, or the copy that makes it contiguous) lists the line, and no attention
    kernel lists it."""
    nodes = [n for n in graph.post_grad if any(innermost(graph.fx.node(f)) == transpose_line for f in n.fx)]
    assert nodes, "no post-grad node comes from the transpose"
    listing = [k for k in graph.kernels if {n.name for n in nodes} & set(k.post_grad_nodes)]
    assert listing, "no kernel lists the transpose"
    for kernel in listing:
        assert transpose_line in kernel.user_lines, (kernel.id, kernel.user_lines)
        assert not any("scaled_dot_product" in n for n in kernel.post_grad_nodes), kernel.id


def fx_nodes_hold_those_of_every_listed_node(graph: GraphCapture) -> None:
    """A kernel's FX nodes hold the FX nodes of each post-grad node it lists (the ``getitem`` of an
    attention's output a matmul reads brings its FX node)."""
    for kernel in graph.kernels:
        for name in kernel.post_grad_nodes:
            node = graph.post_grad.node(name)
            assert set(node.fx) <= set(kernel.fx_nodes), (kernel.id, name, node.fx)


def kernels_list_a_function_exactly_where_their_code_calls_it(graph: GraphCapture, op: str) -> None:
    """The generated code is the oracle: a C++ or Triton kernel computes ``aten.<op>`` where its source calls
    ``op(`` (``std::sin(``, ``.sin()``, ``tl_math.sin(``), so a node Inductor inlines into several kernels
    (a rotary embedding's ``cos`` and ``sin``) is listed by each of them and by no other."""
    wanted = {n.name for n in graph.post_grad if n.target == f"aten.{op}.default"}
    assert wanted, f"no aten.{op} in the graph"
    listing = {k.id for k in graph.kernels if wanted & set(k.post_grad_nodes)}
    calling = {k.id for k in graph.kernels if k.language != "extern" and re.search(rf"\b{op}\(", k.source)}
    assert listing == calling, (op, sorted(listing ^ calling))


def attention_masks_stay_with_the_kernel_writing_them(graph: GraphCapture) -> int:
    """An attention taking its mask dense reads the ``expand`` over the ``where`` the mask kernel computes:
    the kernels listing the expand are those computing what it views, never the attention's own. Returns
    how many attentions took an expanded mask."""
    nodes = {n.name: n for n in graph.post_grad}
    checked = 0
    for attention in (n for n in graph.post_grad if "scaled_dot_product" in n.target and len(n.inputs) > 3):
        mask = attention.inputs[3]
        if not nodes[mask].target.startswith("aten.expand"):
            continue
        base = nodes[mask].inputs[0]
        listing = [k for k in graph.kernels if mask in k.post_grad_nodes]
        assert listing and all(base in k.post_grad_nodes for k in listing), (mask, [k.id for k in listing])
        assert not any(k.language == "extern" and attention.name in k.post_grad_nodes for k in listing), mask
        checked += 1
    return checked
