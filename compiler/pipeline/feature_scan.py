"""Which Inductor systems acted on a graph, and where each one shows.

A ``FeatureUse`` names one system (combo kernels, block pointers, shape padding, split scans, index
bound checks, control-flow subgraphs, dtype bitcasts, low-precision casts), says in one line what it did
here, and points at the evidence by id: the kernel and its source lines, the post-grad nodes, the
wrapper lines. Most are read from what the capture already holds (kernel sources, ``line_nodes``, the
wrapper); combo kernel groups and shape-padding decisions are recorded while Inductor runs (see
``compiler._torch.combo_kernels`` and ``compiler._torch.pad_mm_decisions``).
"""

from __future__ import annotations

import re
from typing import Any, Iterable

from ..model.features import FeatureUse
from ..model.stages import FxStage, Kernel

_BOUND_CHECK = re.compile(r"index out of bounds|device_assert")
_BITCAST = re.compile(r"bit_cast<|bitcast=True")
_LOW_PRECISION_CAST = re.compile(r"convert<(at::BFloat16|at::Half|bfloat16|half)\b|"
                                 r"static_cast<(at::BFloat16|at::Half)>|\.to\(tl\.(bfloat16|float16)\b")
_BLOCK_PTR = re.compile(r"\btl\.make_block_ptr\(|\bblock_ptr\d+\b")
_WORKSPACE = re.compile(r"^\s*(?P<name>workspace_\d+)\s*=\s*(?P<call>\w+)\((?P<args>.*)\)\s*$")


def _matching_lines(kernel: Kernel, pattern: re.Pattern[str]) -> list[int]:
    return [number for number, text in enumerate(kernel.lines, start=1) if pattern.search(text)]


def _nodes_at(kernel: Kernel, lines: Iterable[int]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(name for line in lines for name in kernel.line_nodes.get(line, [])))


def _by_target(kernel: Kernel, post_grad: FxStage, prefix: str) -> list[str]:
    wanted = set(kernel.post_grad_nodes)
    return [n.name for n in post_grad.nodes if n.name in wanted and n.target.startswith(prefix)]


def kernel_features(kernel: Kernel, post_grad: FxStage, wrapper: str) -> list[FeatureUse]:
    """What one kernel's own source shows."""
    found: list[FeatureUse] = []
    checks = _matching_lines(kernel, _BOUND_CHECK)
    if checks:
        found.append(FeatureUse("bound_check", f"{len(checks)} index bound check(s)", kernel.id, tuple(checks),
                                _nodes_at(kernel, checks)))
    casts = _matching_lines(kernel, _BITCAST)
    if casts:
        views = _by_target(kernel, post_grad, "aten.view.dtype")
        dtypes = [f"{_dtype_of(post_grad, post_grad.node(v).inputs[0])} -> {post_grad.node(v).dtype}" for v in views
                  if post_grad.node(v).inputs]
        found.append(FeatureUse("bitcast", "reinterprets " + (", ".join(dtypes) or "bits"), kernel.id, tuple(casts),
                                tuple(views) or _nodes_at(kernel, casts), detail={"views": dtypes}))
    rounding = _matching_lines(kernel, _LOW_PRECISION_CAST)
    if rounding:
        found.append(FeatureUse("low_precision_cast", f"{len(rounding)} line(s) cast to a 16-bit float", kernel.id,
                                tuple(rounding), _nodes_at(kernel, rounding)))
    block = _matching_lines(kernel, _BLOCK_PTR)
    if block:
        made = sum(1 for line in block if "make_block_ptr" in kernel.lines[line - 1])
        found.append(FeatureUse("block_ptr", f"{made} block pointer(s), used on {len(block) - made} line(s)",
                                kernel.id, tuple(block), _nodes_at(kernel, block), detail={"block_pointers": made}))
    if kernel.meta.get("heuristic") == "split_scan" or "@triton_heuristics.split_scan" in kernel.source:
        found.append(_split_scan(kernel, wrapper))
    return found


def _dtype_of(stage: FxStage, name: str) -> str | None:
    try:
        return stage.node(name).dtype
    except KeyError:
        return None


def _split_scan(kernel: Kernel, wrapper: str) -> FeatureUse:
    """The kernel's workspace: allocated (and zeroed) in the wrapper, passed to the kernel's call."""
    lines = wrapper.splitlines()
    calls = [lines[n - 1] for n in kernel.wrapper_lines if 0 < n <= len(lines) and kernel.name in lines[n - 1]]
    allocations: list[int] = []
    workspaces: dict[str, str] = {}
    for number, text in enumerate(lines, start=1):
        match = _WORKSPACE.match(text)
        if match and any(re.search(rf"\b{match['name']}\b", call) for call in calls):
            workspaces[match["name"]] = match["args"]
            allocations.append(number)
    for number, text in enumerate(lines, start=1):
        if any(text.strip().startswith(f"{name}.zero_(") for name in workspaces):
            allocations.append(number)
    summary = "scan split across blocks"
    if workspaces:
        summary += ", workspace " + ", ".join(f"{name} ({args})" for name, args in workspaces.items())
    return FeatureUse("split_scan", summary, kernel.id, (), tuple(kernel.post_grad_nodes), tuple(sorted(allocations)),
                      detail={"workspaces": workspaces})


def subgraph_features(post_grad: FxStage, kernels: list[Kernel], wrapper: str) -> list[FeatureUse]:
    """One finding per control-flow body: the op that runs it, the kernels inside, its wrapper function."""
    found: list[FeatureUse] = []
    bodies = list(dict.fromkeys(n.subgraph for n in post_grad.nodes if n.subgraph))
    lines = wrapper.splitlines()
    for path in bodies:
        prefix = f"{path}."
        inside = [k.id for k in kernels if any(n.startswith(prefix) for n in k.post_grad_nodes)]
        callers = [n.name for n in post_grad.nodes if n.subgraph is None and n.op == "call_function"
                   and path.split(".")[0] in n.inputs]
        function = path.replace(".", "_")  # Inductor names the lowered body after its qualified path
        mentions = tuple(i for i, text in enumerate(lines, start=1)
                         if re.search(rf"\b{re.escape(function)}\b", text))
        op = post_grad.node(callers[0]).target if callers else "a higher-order op"
        found.append(FeatureUse("subgraph", f"{path}: body of {op}, {len(inside)} kernel(s)", None, (),
                                tuple(callers), mentions, detail={"subgraph": path, "kernels": inside}))
    return found


def combo_features(kernels: list[Kernel], combos: dict[str, list[list[str]]], loop_ir_origins: dict[str, list[str]]
                   ) -> list[FeatureUse]:
    """``combos``: kernel id -> its sub-kernels as lists of scheduler (loop-IR) nodes."""
    found = []
    for kernel in kernels:
        groups = combos.get(kernel.id)
        if not groups:
            continue
        parts = [list(dict.fromkeys(o for node in group for o in loop_ir_origins.get(node, []))) for group in groups]
        found.append(FeatureUse("combo_kernel", f"{len(groups)} independent kernels combined in one launch", kernel.id,
                                (), tuple(dict.fromkeys(n for part in parts for n in part)),
                                detail={"sub_kernels": groups, "sub_kernel_nodes": parts}))
    return found


def pad_mm_features(decisions: list[dict[str, Any]]) -> list[FeatureUse]:
    """One finding per matmul the shape-padding pass considered (see compiler._torch.pad_mm_decisions)."""
    return [FeatureUse("pad_mm", decision["reason"], None, (), tuple(decision.get("nodes", [])), (),
                       detail=dict(decision)) for decision in decisions]


def find(kernels: list[Kernel], post_grad: FxStage, wrapper: str, combos: dict[str, list[list[str]]],
         loop_ir_origins: dict[str, list[str]], pad_decisions: list[dict[str, Any]]) -> list[FeatureUse]:
    found = [use for kernel in kernels for use in kernel_features(kernel, post_grad, wrapper)]
    found += combo_features(kernels, combos, loop_ir_origins)
    found += subgraph_features(post_grad, kernels, wrapper)
    found += pad_mm_features(pad_decisions)
    return found
