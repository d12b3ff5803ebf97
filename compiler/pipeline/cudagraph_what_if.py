"""``c.cudagraphs.what_if()``: the program compiled again with what keeps a region out of CUDA graphs removed
(compiler/model/cudagraph_what_if.py says which fixes there are and what each changes).

The fix is chosen from what the compilation recorded: a skip for a mutated input names the placeholder it
writes into, and ``g.cudagraphs.user_inputs`` which input of yours that is; a partition left out for a CPU
op reads placeholders that are CPU tensors you passed. The fixed program is captured on copies of your
inputs with the same toggles, then both are timed (``c.cudagraphs.measure()``).

Separate from ``c.what_if`` (one fusion decision changed inside Inductor): this edit changes the program's
inputs or its entry, not the compiler.
"""

from __future__ import annotations

from typing import Any, Iterator

import torch

from .._torch import cudagraph_compile
from ..model import slots
from ..model.cudagraph_what_if import FIXES, CudaGraphFixError, CudaGraphWhatIf
from ..model.cudagraphs import SkipKind
from ..model.formatting import did_you_mean
from .specs import flat_tensors

_FITS = {"mutated": ("static", "clone"), "cpu": ("device",)}  # cause -> the fixes that remove it, default first


def offered(c: Any) -> Iterator[tuple[str, int, str]]:
    """(cause, input position, where it shows) for each region a fix could bring into CUDA graphs."""
    cpu_inputs = {i for i, spec in enumerate(c.inputs) if str(spec.get("device", "")).startswith("cpu")}
    for graph in c.graphs:
        state = graph.cudagraphs
        if state is None:
            continue
        skip = state.skip
        if skip is not None and skip.kind == SkipKind.MUTATED_INPUT:
            for name in skip.inputs:
                if name in state.user_inputs:
                    yield "mutated", state.user_inputs[name], f"{graph.id} writes into input {name}"
        if skip is not None and skip.kind == SkipKind.CPU_TENSOR and skip.node in state.user_inputs:
            yield "cpu", state.user_inputs[skip.node], f"{graph.id} reads CPU tensor {skip.node}"
        nodes = {n.name: n for n in graph.post_grad.nodes}
        for partition in state.partitions:
            if partition.captured or not partition.reasons:
                continue
            for node in partition.post_grad_nodes:
                for name in nodes[node].inputs if node in nodes else []:
                    if state.user_inputs.get(name) in cpu_inputs:
                        yield "cpu", state.user_inputs[name], (f"{graph.id} partition {partition.index} computes "
                                                               f"{node} from CPU tensor {name}")


def resolve(c: Any, fix: str | None, position: int | None) -> tuple[str, int]:
    """The fix and input to apply, or CudaGraphFixError saying why none fits."""
    if fix is not None and fix not in FIXES:
        raise CudaGraphFixError(f"unknown fix {fix!r}{did_you_mean(fix, FIXES)}; fixes: {', '.join(FIXES)}")
    found = list(offered(c))
    if position is not None:
        if not isinstance(position, int) or not 0 <= position < len(c.inputs):
            raise CudaGraphFixError(f"input={position!r}: {c.function} was given {len(c.inputs)} tensors "
                                    f"(positions 0 to {len(c.inputs) - 1})")
        found = [f for f in found if f[1] == position] or [
            ("cpu" if str(c.inputs[position].get("device", "")).startswith("cpu") else "mutated", position, "")]
    for cause, where, _ in found:
        fits = _FITS[cause]
        if fix is None or fix in fits:
            return fix or fits[0], where
    said = "; ".join(f"{text} ({' or '.join(_FITS[cause])})" for cause, _, text in offered(c))
    if fix is not None and said:
        raise CudaGraphFixError(f"fix={fix!r} removes none of the causes here: {said}")
    causes = said or "no skip for a mutated input or a CPU tensor, no partition left out for one"
    raise CudaGraphFixError(f"nothing here that a fix Inductor offers would bring into CUDA graphs ({causes}); "
                            "c.cudagraphs says why each region runs without them")


def _top_level(inputs: tuple[Any, ...], position: int) -> int:
    """The argument that is flattened input ``position`` (CudaGraphFixError when it sits inside a container)."""
    seen = 0
    for index, value in enumerate(inputs):
        count = len(flat_tensors(value))
        if position < seen + count:
            if not isinstance(value, torch.Tensor):
                raise CudaGraphFixError(f"input {position} sits inside argument {index} (a "
                                        f"{type(value).__name__}); pass that tensor as an argument of its own")
            return index
        seen += count
    raise CudaGraphFixError(f"input {position}: the call was given {seen} tensors")


def _copy(value: Any) -> Any:
    return value.detach().clone().requires_grad_(value.requires_grad) if isinstance(value, torch.Tensor) else value


def _cloning(target: Any, index: int) -> Any:
    """``target`` called with argument ``index`` cloned first."""
    def cloned_input(*args: Any, **kwargs: Any) -> Any:
        args = args[:index] + (args[index].clone(),) + args[index + 1:]
        return target(*args, **kwargs)

    name = getattr(target, "__qualname__", None) or type(target).__name__
    cloned_input.__qualname__ = cloned_input.__name__ = f"{name}_input{index}_cloned"
    return cloned_input


def variant(c: Any, fix: str, position: int) -> tuple[Any, tuple[Any, ...]]:
    """The target and inputs of the fixed program (copies: the user's inputs are left as they were)."""
    inputs = tuple(_copy(v) for v in c.live.example_inputs)
    index = _top_level(inputs, position)
    target = c.live.target
    if fix == "static":
        cudagraph_compile.mark_static(inputs[index])
    elif fix == "clone":
        target = _cloning(target, index)
    else:
        inputs = inputs[:index] + (inputs[index].to(c.device),) + inputs[index + 1:]
    return target, inputs


@slots.cudagraph_what_if.fill
def what_if(c: Any, *, fix: str | None = None, input: int | None = None, measure: bool = True) -> CudaGraphWhatIf:
    from .capture import capture

    if not c.live or c.live.example_inputs is None:
        raise CudaGraphFixError("c.cudagraphs.what_if() compiles the program again: it needs the live compilation "
                                "and its inputs (compile it with explorer.compile(...))")
    if not c.device.startswith("cuda"):
        raise CudaGraphFixError(f"CUDA graphs need a GPU: {c.function} runs on {c.device}")
    chosen, position = resolve(c, fix, input)
    target, inputs = variant(c, chosen, position)
    with torch.set_grad_enabled(bool(c.live.grad_enabled)):
        after = capture(target, *inputs, config={**c.toggles, "cudagraphs": True}, backward=c.backward,
                        kwargs=c.live.call_kwargs)
    result = CudaGraphWhatIf(fix=chosen, input=position, change=FIXES[chosen].format(input=position), before=c,
                             after=after)
    if measure:
        result.before_time, result.after_time = c.cudagraphs.measure(), after.cudagraphs.measure()
    return result
