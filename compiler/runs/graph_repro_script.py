"""The body every graph reproducer shares: rebuild the module, run it eagerly and compiled, compare.

compiler/runs/graph_repro.py copies these functions as source into each script it writes (with
``repro_script.check``, the kernel reproducer's comparison), after the graph's module class and the
constants they take as arguments. Each function is self-contained: the script imports argparse and
torch, nothing else at its top.
"""

from __future__ import annotations

import argparse
from typing import Any

import torch

from .repro_script import check  # main calls it; the script holds a copy of it


def flat(value: Any) -> list[Any]:
    """The tensors of a graph's output (a tuple or list, possibly nested), in order, detached."""
    if isinstance(value, torch.Tensor):
        return [value.detach()]
    if isinstance(value, (list, tuple)):
        return [t for item in value for t in flat(item)]
    return []


def fresh(saved: dict[str, Any]) -> list[Any]:
    """Copies of the saved inputs, each requiring grad as in the captured run: every call gets its own,
    since a graph may update its inputs in place."""
    return [x.clone().requires_grad_(grad) if isinstance(x, torch.Tensor) else x
            for x, grad in zip(saved["inputs"], saved["requires_grad"])]


def build(module_class: Any, attributes: dict[str, Any]) -> Any:
    """The graph's module with the tensors its ``get_attr`` nodes read (dotted names make submodules)."""
    module = module_class()
    for name, value in attributes.items():
        *path, leaf = name.split(".")
        owner = module
        for part in path:
            if not hasattr(owner, part):
                owner.add_module(part, torch.nn.Module())
            owner = getattr(owner, part)
        setattr(owner, leaf, value)
    return module


def main(module_class: Any, tensors: Any, config: dict[str, Any], grad: bool,
         tolerances: dict[str, tuple[float, float]]) -> int:
    parser = argparse.ArgumentParser(description="Run the graph eagerly and compiled by Inductor and compare the "
                                     "compiled outputs with the saved ones: exit 0 when they match, 1 when not.")
    parser.parse_args()
    saved = torch.load(tensors, weights_only=True)
    module = build(module_class, saved["attributes"])
    with torch.set_grad_enabled(grad):
        eager = flat(module(*fresh(saved)))
        with torch._inductor.config.patch(config):
            compiled = flat(torch.compile(module, backend="inductor")(*fresh(saved)))
    expected = dict(enumerate(saved["outputs"]))
    drift = max((float((e.double() - s.to(e.device).double()).abs().nan_to_num(nan=float("inf")).max())
                 for e, s in zip(eager, saved["outputs"]) if e.numel()), default=0.0)
    print(f"eager here: max abs difference {drift:.6g} from the saved eager outputs")
    if len(compiled) != len(expected):
        print(f"MISMATCH: the compiled graph returned {len(compiled)} tensors, the saved outputs are {len(expected)}")
        return 1
    return check(compiled, expected, {i: f"output {i}" for i in expected}, tolerances)
