"""FX GraphModules -> FxStage records (names, ops, shapes, the user's lines)."""

from __future__ import annotations

import torch.fx

from ._torch import fx_meta
from .stages import FxNode, FxStage

_ARGS_LIMIT = 240


def graph_code(gm: torch.fx.GraphModule) -> str:
    """The graph as readable Python, with shapes annotated where the installed torch can."""
    try:
        return gm.print_readable(print_output=False)
    except Exception:
        return gm.code


def _short(text: str) -> str:
    return text if len(text) <= _ARGS_LIMIT else text[: _ARGS_LIMIT - 3] + "..."


def fx_stage(stage: str, gm: torch.fx.GraphModule | None) -> FxStage:
    if gm is None:
        return FxStage(stage=stage, code="", nodes=[])
    nodes: list[FxNode] = []
    for node in gm.graph.nodes:
        shape, dtype = fx_meta.value_info(node)
        frames = fx_meta.user_frames(node)
        nodes.append(
            FxNode(
                name=node.name,
                op=node.op,
                target=fx_meta.target_name(node),
                args=_short(str(tuple(node.args)) if node.op != "output" else str(node.args[0])),
                shape=shape,
                dtype=dtype,
                inputs=[n.name for n in node.all_input_nodes],
                users=[n.name for n in node.users],
                user_line=(frames[-1][0], frames[-1][1]) if frames else None,
                stack=frames,
                module=fx_meta.module_path(node),
            )
        )
    return FxStage(stage=stage, code=graph_code(gm), nodes=nodes, module=gm)


def link_post_grad_to_fx(post_grad: FxStage, fx: FxStage, post_gm: torch.fx.GraphModule | None) -> None:
    """Fill ``post_grad_node.fx`` and ``fx_node.post_grad`` from the ``from_node`` provenance in meta."""
    if post_gm is None:
        return
    fx_names = {n.name: n for n in fx.nodes if n.op not in ("placeholder", "output", "get_attr")}
    by_name = {n.name: n for n in post_grad.nodes}
    for node in post_gm.graph.nodes:
        record = by_name.get(node.name)
        if record is None or node.op in ("placeholder", "output"):
            continue
        origins = [name for name in fx_meta.origin_names(node) if name in fx_names]
        if not origins and node.name in fx_names and record.user_line == fx_names[node.name].user_line:
            origins = [node.name]
        if not origins and record.user_line is not None:
            # No recorded ancestry (common in backward graphs): fall back to the FX nodes on the same user line.
            origins = [n.name for n in fx_names.values() if n.user_line == record.user_line]
        record.fx = origins
        if record.module is None and origins:
            record.module = fx_names[origins[0]].module
        for name in origins:
            if node.name not in fx_names[name].post_grad:
                fx_names[name].post_grad.append(node.name)
