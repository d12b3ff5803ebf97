"""The points of a sweep: every configuration crossed with every input set, checked before anything runs.

A grid ``{"max_autotune": [False, True], "native_matmul": [False, True]}`` is the cross product of its
values (4 configurations); ``configs=[{...}, {...}]`` lists them as they are. Input sets come from
``input_sets=[(x1,), (x2,)]`` or from ``shapes=[(8, 64), (16, 64)]``: one new random tensor per shape
for each of the example inputs, with its dtype and device (for a function of one tensor, a shape per
point; for several tensors, a tuple of shapes per point). Only the names are checked here (a typo
fails the sweep at once); whether a configuration compiles is each point's own result.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import torch

from ..pipeline import toggles
from .._torch import inductor_config


class SweepError(ValueError):
    """A sweep asked for in a way that cannot run; nothing was started."""


@dataclass
class Point:
    index: int
    config: dict[str, Any]  # toggle names / raw Inductor keys -> value, as the user gave them
    input_set: int  # which input set (0 when there is one)
    shapes: list[list[int]] = field(default_factory=list)  # tensor input shapes of that set, for the table

    @property
    def label(self) -> str:
        settings = ", ".join(f"{k}={v}" for k, v in self.config.items()) or "defaults"
        shape = " × ".join("x".join(map(str, s)) for s in self.shapes)
        return f"#{self.index} {settings}" + (f" @ {shape}" if shape else "")


def configs_of(grid: Mapping[str, Sequence[Any]] | None, configs: Sequence[Mapping[str, Any]] | None) -> list[dict[str, Any]]:
    """The configurations of ``grid`` (cross product) or ``configs`` (as listed); one empty one when neither."""
    if grid is not None and configs is not None:
        raise SweepError("give either grid={toggle: [values]} or configs=[{...}, ...], not both")
    if grid is not None:
        if not isinstance(grid, Mapping) or not grid:
            raise SweepError(f"grid must be a non-empty dict of toggle name -> list of values, got {grid!r}")
        for name, values in grid.items():
            if isinstance(values, (str, bytes)) or not isinstance(values, Sequence) or not values:
                raise SweepError(f"grid[{name!r}] must be a non-empty list of values, got {values!r}")
        names = list(grid)
        found = [dict(zip(names, combo)) for combo in itertools.product(*(grid[n] for n in names))]
    elif configs is not None:
        if isinstance(configs, Mapping) or not all(isinstance(c, Mapping) for c in configs) or not configs:
            raise SweepError("configs must be a non-empty list of dicts (toggle name -> value)")
        found = [dict(c) for c in configs]
    else:
        found = [{}]
    for config in found:
        for name in config:
            if not isinstance(name, str) or (name not in toggles.TOGGLES and not inductor_config.has_key(name)):
                raise SweepError(f"{toggles.unknown_name(str(name))} in the sweep; {toggles.valid_names()}")
    return found


def _tensor_positions(inputs: Sequence[Any]) -> list[int]:
    return [i for i, value in enumerate(inputs) if isinstance(value, torch.Tensor)]


def input_sets_of(inputs: Sequence[Any], shapes: Sequence[Any] | None,
                  input_sets: Sequence[Sequence[Any]] | None) -> list[tuple[Any, ...]]:
    """The argument tuples the sweep runs on: ``inputs`` alone, each of ``input_sets``, or ``inputs``
    with fresh random tensors of each of ``shapes``."""
    if shapes is not None and input_sets is not None:
        raise SweepError("give either shapes=[...] or input_sets=[...], not both")
    if input_sets is not None:
        if not input_sets or not all(isinstance(s, (list, tuple)) for s in input_sets):
            raise SweepError("input_sets must be a non-empty list of argument tuples, e.g. [(x1,), (x2,)]")
        return [tuple(s) for s in input_sets]
    if shapes is None:
        return [tuple(inputs)]
    positions = _tensor_positions(inputs)
    if not positions:
        raise SweepError("shapes=[...] makes new tensors like the example inputs, and none of them is a tensor; "
                         "give input_sets=[(...), ...] instead")
    if not shapes:
        raise SweepError("shapes must be a non-empty list")
    sets = []
    for shape in shapes:
        per_tensor = [shape] if len(positions) == 1 else list(shape)
        if len(positions) == 1 and per_tensor and not all(isinstance(s, int) for s in per_tensor[0]):
            raise SweepError(f"shapes[...] should be a tuple of ints for the one tensor input, got {shape!r}")
        if len(per_tensor) != len(positions):
            raise SweepError(f"shape {shape!r} gives {len(per_tensor)} shapes for {len(positions)} tensor inputs; "
                             "give one shape per tensor input, e.g. ((8, 64), (64, 32))")
        args = list(inputs)
        for position, size in zip(positions, per_tensor):
            like = inputs[position]
            fresh = torch.randn(tuple(size), dtype=like.dtype, device=like.device) if like.is_floating_point() \
                else torch.randint(0, 2, tuple(size), dtype=like.dtype, device=like.device)
            args[position] = fresh.requires_grad_(like.requires_grad)
        sets.append(tuple(args))
    return sets


def points_of(configs: list[dict[str, Any]], sets: list[tuple[Any, ...]]) -> list[Point]:
    """Every configuration on every input set, input sets inner (a configuration's shapes are neighbours)."""
    shapes = [[list(t.shape) for t in s if isinstance(t, torch.Tensor)] for s in sets]
    return [Point(i, config, j, shapes[j] if len(sets) > 1 else [])
            for i, (config, j) in enumerate((c, j) for c in configs for j in range(len(sets)))]
