"""A kernel's launch and tuning facts out of ``k.meta``: what a reader of the kernel wants first (grid,
warps, stages, block sizes, heuristic, size hints, registers), in a fixed order; the rest of the meta
(stack traces, argument lists, Inductor's and Triton's meta dicts) stays raw, for a folded section.
The widget's kernel pane (widgets/js/kernels.js) shows the same keys in the same order."""

from __future__ import annotations

from typing import Any

FACT_KEYS = ("grid", "num_warps", "num_stages", "num_ctas", "config", "heuristic", "size_hints", "reduction_hint",
             "registers", "spills", "shared_memory", "configs_tried")


def _text(value: Any) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{k} {v}" for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return " x ".join(str(v) for v in value)
    return str(value)


def launch_facts(meta: dict[str, Any]) -> list[tuple[str, str]]:
    """(label, value) rows: each block size of the chosen config gets its own row."""
    rows: list[tuple[str, str]] = []
    for key in FACT_KEYS:
        value = meta.get(key)
        if value is None or value == {} or value == []:
            continue
        if key == "config" and isinstance(value, dict):
            rows += [(str(name), str(size)) for name, size in value.items()]
        else:
            rows.append((key, _text(value)))
    return rows


def raw_meta(meta: dict[str, Any]) -> dict[str, Any]:
    """Everything ``launch_facts`` does not show."""
    return {k: v for k, v in meta.items() if k not in FACT_KEYS}
