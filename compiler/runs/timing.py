"""Kernel timing with warm-up and medians (Triton's do_bench: CUDA events, L2 flushed between runs)."""

from __future__ import annotations

from typing import Callable


def median_ms(fn: Callable[[], object], warmup_ms: int = 25, rep_ms: int = 100) -> float:
    from triton.testing import do_bench

    return float(do_bench(fn, warmup=warmup_ms, rep=rep_ms, return_mode="median"))
