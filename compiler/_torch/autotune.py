"""Autotuning results: max-autotune choices and Triton kernel configs, with the times Inductor measured.

- Template / extern choices (``select_algorithm``): Inductor's feedback-saver hook is called with every
  choice's time after each autotuning; ours is added for the capture and removed after.
- Pointwise / reduction configs (``CachingAutotuner.benchmark_all_configs``, run at a kernel's first
  launch): wrapped for the capture to read the timings dict it returns.
"""

from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator

from . import guard, method_patch

Record = Callable[[str, str, float, bool, str], None]  # kernel, choice, time_ms, chosen, source


def _choice_text(choice: Any) -> str:
    for attr in ("description", "name"):
        value = getattr(choice, attr, None)
        if value:
            name = getattr(choice, "name", "")
            return f"{name} {value}".strip() if attr == "description" and name and name not in str(value) else str(value)
    return str(choice)


@contextlib.contextmanager
def _select_algorithm_feedback(record: Record) -> Iterator[None]:
    try:
        from torch._inductor import select_algorithm
    except Exception:
        yield
        return
    getter = getattr(select_algorithm, "get_algorithm_selector_cache", None)
    if getter is None:
        yield
        return
    cache = getter()
    savers = getattr(cache, "feedback_saver_fns", None)
    if savers is None:
        yield
        return

    def saver(timings: dict[Any, float], name: str, *rest: Any) -> None:
        if not timings:
            return
        with guard.never_breaking(__name__):
            best = min(timings, key=lambda c: timings[c])
            for choice, ms in timings.items():
                record(name, _choice_text(choice), float(ms), choice is best, "select_algorithm")

    savers.append(saver)
    try:
        yield
    finally:
        if saver in cache.feedback_saver_fns:
            cache.feedback_saver_fns.remove(saver)


@contextlib.contextmanager
def _triton_config_benchmarks(record: Record) -> Iterator[None]:
    try:
        from torch._inductor.runtime.triton_heuristics import CachingAutotuner
    except Exception:  # no Triton: nothing is benchmarked at run time
        yield
        return
    original = CachingAutotuner.benchmark_all_configs

    def benchmark_all_configs(self: Any, *args: Any, **kwargs: Any) -> Any:
        timings = original(self, *args, **kwargs)
        with guard.never_breaking(__name__):
            name = (getattr(self, "inductor_meta", {}) or {}).get("kernel_name") or ""
            if not name or name.startswith("Placeholder."):  # a name Inductor had not filled in yet
                name = self.fn.__name__
            best = min(timings, key=lambda launcher: timings[launcher]) if timings else None
            for launcher, ms in timings.items():
                record(name, str(getattr(launcher, "config", launcher)), float(ms), launcher is best,
                       "triton_heuristics")
        return timings

    with method_patch.replaced(CachingAutotuner, "benchmark_all_configs", benchmark_all_configs):
        yield


@contextlib.contextmanager
def on_autotune(record: Record) -> Iterator[None]:
    with _select_algorithm_feedback(record), _triton_config_benchmarks(record):
        yield
