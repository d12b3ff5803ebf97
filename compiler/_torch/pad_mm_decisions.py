"""Shape padding of matmuls: which ones the pass considered, what it decided, and why.

Inductor's joint-graph pass ``pad_mm`` pads the operands of a CUDA matmul to aligned sizes when that is
faster. For each candidate it calls ``should_pad(match, mat1, mat2, op, input)``. Inside, for ``mm``,
AutoHeuristic may decide (``run_autoheuristic``: a learned model when ``autoheuristic_use`` names
``pad_mm`` and one exists for the GPU; ``None`` means "no answer, benchmark"), else both variants are
benchmarked (``is_padded_faster(key, ori_time, pad_time)``), unless an earlier benchmark of the shape
is cached on disk (``get_cached_should_pad``). These module functions are wrapped for the capture (the
pattern's checks look them up by name at call time); each ``should_pad`` call becomes one decision record. Records are plain dicts: they go into the trace as they are.
"""

from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator

from torch._inductor.fx_passes import pad_mm as _pad_mm

from . import guard

_WRAPPED = ("should_pad", "run_autoheuristic", "is_padded_faster", "get_cached_should_pad")


def _size(value: Any) -> Any:
    return int(value) if isinstance(value, int) else str(value)


def _describe(match: Any, mat1: Any, mat2: Any, op: Any) -> dict[str, Any]:
    node = match.output_node()
    batch = 1 if getattr(op, "__name__", "") == "bmm" else 0
    m, k, n = mat1.shape[batch], mat1.shape[batch + 1], mat2.shape[batch + 1]
    pad = {dim: _pad_mm.get_padded_length(size, _pad_mm.get_alignment_size(mat))
           for dim, size, mat in (("m", m, mat1), ("k", k, mat1), ("n", n, mat2))}
    return {
        "node": node.name, "graph_id": id(node.graph), "op": getattr(op, "__name__", str(op)),
        "shapes": [[_size(s) for s in mat1.shape], [_size(s) for s in mat2.shape]], "dtype": str(mat1.dtype),
        "padding": {dim: _size(v) for dim, v in pad.items()},
        "sizes": {"m": _size(m), "k": _size(k), "n": _size(n)},
    }


def _reason(decision: dict[str, Any], can_pad: bool, compute_bound: bool | None) -> str:
    padded = ", ".join(f"{dim} {decision['sizes'][dim]}->{decision['sizes'][dim] + extra}"
                       for dim, extra in decision["padding"].items() if isinstance(extra, int) and extra)
    verdict = f"padded {padded}" if decision["pad"] else "not padded"
    if not can_pad:
        return f"{verdict}: nothing to pad, not a CUDA float matmul, or shape padding is off"
    times = decision.get("benchmark_ms")
    if times:
        return (f"{verdict}: benchmarked, original {times['original']:.4f} ms vs padded {times['padded']:.4f} ms "
                f"(AutoHeuristic: {decision.get('autoheuristic', 'not consulted')})")
    if decision.get("autoheuristic") in ("pad", "orig"):
        return f"{verdict}: AutoHeuristic's learned model chose {decision['autoheuristic']!r}"
    if "cached" in decision:
        return f"{verdict}: Inductor's cached result of an earlier benchmark of this shape"
    if compute_bound is False:
        return f"{verdict}: the matmul is memory-bound, so padding would not pay off"
    return f"{verdict}: forced by config, or Inductor's cached decision for this shape"


@contextlib.contextmanager
def on_pad_mm(callback: Callable[[dict[str, Any]], None]) -> Iterator[None]:
    """``callback(decision)`` after each matmul the shape-padding pass considers."""
    originals = {name: getattr(_pad_mm, name, None) for name in _WRAPPED}
    if any(fn is None for fn in originals.values()):
        yield
        return
    in_progress: list[dict[str, Any]] = []

    def should_pad(match: Any, mat1: Any, mat2: Any, op: Any, *args: Any, **kwargs: Any) -> bool:
        decision = None
        with guard.never_breaking(__name__):
            decision = _describe(match, mat1, mat2, op)
        if decision is None:
            return originals["should_pad"](match, mat1, mat2, op, *args, **kwargs)
        in_progress.append(decision)
        try:
            result = originals["should_pad"](match, mat1, mat2, op, *args, **kwargs)
        finally:
            in_progress.pop()
        input = args[0] if args else kwargs.get("input")
        with guard.never_breaking(__name__):
            decision["pad"] = bool(result)
            can_pad = bool(_pad_mm.can_pad(mat1, mat2, op, input))
            sizes = decision["sizes"]
            compute_bound = (_pad_mm.is_mm_compute_bound(sizes["m"], sizes["k"], sizes["n"], mat1.dtype)
                             if can_pad and all(isinstance(v, int) for v in sizes.values()) else None)
            decision["reason"] = _reason(decision, can_pad, compute_bound)
            callback(decision)
        return result

    def run_autoheuristic(*args: Any, **kwargs: Any) -> Any:
        choice = originals["run_autoheuristic"](*args, **kwargs)
        if in_progress:
            in_progress[-1]["autoheuristic"] = {True: "pad", False: "orig"}.get(choice, "no learned answer")
        return choice

    def is_padded_faster(key: Any, ori_time: float, pad_time: float) -> bool:
        faster = originals["is_padded_faster"](key, ori_time, pad_time)
        if in_progress:
            in_progress[-1]["benchmark_ms"] = {"original": float(ori_time), "padded": float(pad_time)}
        return faster

    def get_cached_should_pad(key: Any) -> Any:
        cached = originals["get_cached_should_pad"](key)
        if in_progress and cached is not None:
            in_progress[-1]["cached"] = bool(cached)
        return cached

    replacements = {"should_pad": should_pad, "run_autoheuristic": run_autoheuristic,
                    "is_padded_faster": is_padded_faster, "get_cached_should_pad": get_cached_should_pad}
    for name, fn in replacements.items():
        setattr(_pad_mm, name, fn)
    try:
        yield
    finally:
        for name, fn in originals.items():
            setattr(_pad_mm, name, fn)
