"""What a graph's stages say, as plain values two captures of one program can be compared by (a warm
capture against the cold one it was served from)."""

from __future__ import annotations

from typing import Any


def stage_summary(graph: Any) -> dict[str, Any]:
    return {
        "kind": graph.kind,
        "fx": [(n.name, n.target, n.stack) for n in graph.fx.nodes],
        "post_grad": [(n.name, n.target, n.fx) for n in graph.post_grad.nodes],
        "loop_ir": [(n.name, n.origins, n.group) for n in graph.loop_ir],
        "fused": [(f.name, f.nodes) for f in graph.fused],
        "kernels": [(k.id, k.language, k.source, k.post_grad_nodes, k.fx_nodes, k.user_lines, k.line_nodes)
                    for k in graph.kernels],
        "wrapper": (graph.wrapper.source, graph.wrapper.kernel_lines),
        "memory": graph.memory is not None and [(s.call, s.kernel, s.peak_bytes) for s in graph.memory.steps],
    }
