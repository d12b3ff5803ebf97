"""Per-stage compile times from Dynamo's own timers (``dynamo_timed`` -> compilation_time_metrics)."""

from __future__ import annotations

from torch._dynamo import utils as _dynamo_utils

# A phase of compiler/model/phases.py -> the timer keys Inductor/Dynamo record for it, as c.timings and each
# graph's timings report it (summed; missing keys count 0). The names are the phases' own, so a capture,
# a loaded log and the compile-time report speak of the same phases.
STAGE_TIMERS: dict[str, tuple[str, ...]] = {
    "dynamo": ("bytecode_tracing",),
    "pre_grad": ("_recursive_pre_grad_passes",),
    "joint_graph": ("_recursive_joint_graph_passes",),
    "post_grad": ("_recursive_post_grad_passes",),
    "lowering": ("GraphLowering.run",),
    "scheduling": ("Scheduler.__init__",),
    "codegen": ("Scheduler.codegen", "PythonWrapperCodegen.generate"),
    "kernel_compile": ("PyCodeCache.load_by_key_path", "async_compile.wait"),
    # max-autotune names its timers per op ("mm_template_autotuning"): "*suffix" matches those
    "autotune": ("*_template_autotuning", "*_template_precompiling", "CachingAutotuner.benchmark_all_configs"),
}


def _metrics() -> dict[str, list[float]]:
    return getattr(_dynamo_utils, "compilation_time_metrics", {})


def mark() -> dict[str, int]:
    """How many samples each timer holds now."""
    return {key: len(values) for key, values in _metrics().items()}


def since(start: dict[str, int]) -> dict[str, float]:
    """Seconds per timer key recorded after ``start``."""
    out: dict[str, float] = {}
    for key, values in _metrics().items():
        new = values[start.get(key, 0):]
        if new:
            out[key] = float(sum(new))
    return out


def _matches(key: str, pattern: str) -> bool:
    return key.endswith(pattern[1:]) if pattern.startswith("*") else key == pattern


def stages(raw: dict[str, float]) -> dict[str, float]:
    return {stage: round(sum(v for k, v in raw.items() if any(_matches(k, p) for p in patterns)), 6)
            for stage, patterns in STAGE_TIMERS.items()}
