"""The half of ``compiler.diff(a, b)`` (``explorer.diff``) that needs torch: the outputs each live
compilation returned when it was captured, compared element by element (the ``compare_outputs`` slot).

The stages are paired from the trace alone, and ``diff`` itself lives in compiler/model/diff_pairing.py,
so that two saved traces compare without importing torch. A compilation loaded from a file has no
outputs, and its diff says so.
"""

from __future__ import annotations

from typing import Any

from ..model import slots
from ..model.diff import OutputComparison


@slots.compare_outputs.fill
def compare_outputs(a: Any, b: Any) -> OutputComparison:
    """Max absolute / relative difference and bitwise equality of two (nested) outputs. torch is imported
    here, not at the top: a diff of two loaded traces has no outputs and must not pay for importing torch."""
    import torch

    from .replay import flat_tensors

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
