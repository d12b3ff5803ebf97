"""The graphs a live watch keeps (``keep_graphs=True``), so that ``w.compiles[i].compilation()`` can capture
one in full when asked: the GraphModule Dynamo compiled and the layout of its first call's inputs (shapes,
strides, dtypes, devices; not their data). Nothing is captured until someone asks.
"""

from __future__ import annotations

from typing import Any, Callable


class KeptGraphs:
    """compile id -> (the graph Dynamo compiled, its first inputs' layout), filled at each graph's first call."""

    def __init__(self) -> None:
        self.graphs: dict[str, tuple[Any, list[Any]]] = {}

    def keep(self, compile_id: str, graph_module: Any, args: tuple[Any, ...]) -> None:
        """watch_hooks.Sink.on_first_call: keep the graph and what its inputs looked like."""
        if compile_id not in self.graphs and graph_module is not None:
            self.graphs[compile_id] = (graph_module, [_spec_of(a) for a in args])

    def capture_of(self, compile_id: str) -> Callable[[], Any] | None:
        """A call that captures ``compile_id``'s graph in full on inputs laid out like its first call's;
        None when nothing was kept for it."""
        if compile_id not in self.graphs:
            return None
        return lambda: self._capture(compile_id)

    def _capture(self, compile_id: str) -> Any:
        from .capture import capture

        graph_module, specs = self.graphs[compile_id]
        return capture(graph_module, *[_made(s) for s in specs])


def _spec_of(value: Any) -> Any:
    """What a graph input looked like (a tensor's layout, not its data), to make one like it later."""
    import torch

    if isinstance(value, torch.Tensor):
        return ("tensor", tuple(value.shape), tuple(value.stride()), value.dtype, str(value.device),
                value.requires_grad)
    return ("value", value)


def _made(spec: Any) -> Any:
    """A fresh input laid out as ``spec`` says: random values of its dtype (a non-tensor input as it was)."""
    import torch

    if spec[0] != "tensor":
        return spec[1]
    _, shape, stride, dtype, device, grad = spec
    tensor = torch.empty_strided(shape, stride, dtype=dtype, device=device)
    if dtype.is_floating_point or dtype.is_complex:
        tensor.normal_()
    elif dtype == torch.bool:
        tensor.random_(0, 2)
    else:
        tensor.random_(0, 8)
    return tensor.requires_grad_(grad) if grad and (dtype.is_floating_point or dtype.is_complex) else tensor
