"""What a capture records about its inputs and the user's source lines, read from live objects."""

from __future__ import annotations

import linecache
from typing import Any, Mapping

import torch

from ..model.stages import GraphCapture


def flat_tensors(values: Any) -> list[torch.Tensor]:
    """Every tensor in a (nested) tuple/list/dict of values, in order."""
    out: list[torch.Tensor] = []

    def visit(value: Any) -> None:
        if isinstance(value, torch.Tensor):
            out.append(value)
        elif isinstance(value, Mapping):
            for item in value.values():
                visit(item)
        elif isinstance(value, (list, tuple)):
            for item in value:
                visit(item)

    visit(values)
    return out


def tensor_specs(values: Any) -> list[dict[str, Any]]:
    """Shape/dtype/device of every tensor in a (nested) tuple/list/dict of values, in order."""
    return [{"shape": [int(s) if isinstance(s, int) else str(s) for s in value.shape], "dtype": str(value.dtype),
             "device": str(value.device), "requires_grad": bool(value.requires_grad)} for value in flat_tensors(values)]


def user_sources(graphs: list[GraphCapture]) -> dict[str, dict[int, str]]:
    """The text of every user source line any node or kernel points at (kept so loaded traces show it)."""
    wanted: dict[str, set[int]] = {}
    for graph in graphs:
        for stage in (graph.fx, graph.post_grad):
            for node in stage.nodes:
                for file, line, _ in node.stack:
                    wanted.setdefault(file, set()).add(line)
        for kernel in graph.kernels:
            for file, line in kernel.user_lines:
                wanted.setdefault(file, set()).add(line)
    sources: dict[str, dict[int, str]] = {}
    for file, lines in wanted.items():
        texts = {line: linecache.getline(file, line).rstrip("\n") for line in sorted(lines)}
        sources[file] = {line: text for line, text in texts.items() if text}
    return sources
