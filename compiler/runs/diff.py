"""``compiler.diff(a, b)`` (``explorer.diff``): what changed between two compilations of the same code.

The stages are paired from the trace alone (compiler/model/diff_pairing.py); this room adds what needs
torch: the outputs each live compilation returned when it was captured, compared element by element.
A compilation loaded from a file has no outputs, and its diff says so.
"""

from __future__ import annotations

from typing import Any

import torch

from ..model.compilation import Compilation
from ..model.diff import Diff, OutputComparison
from ..model.diff_pairing import diff_of
from .replay import flat_tensors


def compare_outputs(a: Any, b: Any) -> OutputComparison:
    """Max absolute / relative difference and bitwise equality of two (nested) outputs."""
    ta, tb = flat_tensors(a), flat_tensors(b)
    if not ta or len(ta) != len(tb):
        return OutputComparison(False, "no outputs to compare" if not ta else f"{len(ta)} vs {len(tb)} tensors")
    max_abs = max_rel = 0.0
    bitwise = True
    for x, y in zip(ta, tb):
        if x.shape != y.shape:
            return OutputComparison(False, f"shapes differ: {list(x.shape)} vs {list(y.shape)}")
        x, y = x.detach().cpu(), y.detach().cpu()
        bitwise = bitwise and x.dtype == y.dtype and torch.equal(x, y)
        if x.numel() == 0:
            continue
        xd, yd = x.double(), y.double()
        delta = (xd - yd).abs()
        max_abs = max(max_abs, float(delta.max()))
        scale = float(yd.abs().max())
        max_rel = max(max_rel, float(delta.max()) / scale if scale > 0 else (0.0 if float(delta.max()) == 0 else float("inf")))
    return OutputComparison(True, "", max_abs, max_rel, bitwise)


def diff(a: Compilation, b: Compilation) -> Diff:
    """What changed from ``a`` to ``b`` (toggles, stages, kernels, compile times, outputs)."""
    for name, c in (("a", a), ("b", b)):
        if not isinstance(c, Compilation):
            raise TypeError(f"explorer.diff compares two Compilations; {name} is a {type(c).__name__}")
    if a.outputs is None or b.outputs is None:
        outputs = OutputComparison(False, "a compilation loaded from a file has no outputs")
    else:
        outputs = compare_outputs(a.outputs, b.outputs)
    return diff_of(a, b, outputs)
