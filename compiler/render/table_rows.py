"""The kernels and autotune tables as rows: what the terminal view sorts, filters and prints.

Rows are plain data so the same questions get the same answers wherever they are shown: which kernel
costs the time (from the latest profile), which one diverged (from the latest numerics report), and
for each autotuned kernel how every choice compares with the best one, its config laid out by key.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, Iterable

from ..model.stages import AutotuneRecord, GraphCapture

KERNEL_SORTS = ("id", "language", "lines", "nodes", "time", "error")
# config keys shown first, in this order; others follow as they come
CONFIG_ORDER = ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M", "XBLOCK", "YBLOCK", "ZBLOCK", "R0_BLOCK", "R1_BLOCK",
                "num_warps", "num_stages", "num_ctas")
_CONFIG_ITEM = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*[=:]\s*('[^']*'|\"[^\"]*\"|[^,\s]+)")


@dataclass
class KernelRow:
    graph: str
    id: str
    language: str
    lines: int
    nodes: int  # post-grad nodes the kernel computes
    user_lines: list[tuple[str, int]]
    ms: float | None = None  # mean per run in the latest profile (None: not profiled)
    share: float | None = None  # of the profile's total
    max_rel: float | None = None  # worst relative error in the latest numerics report
    ok: bool | None = None  # None: not checked
    divergence: str | None = None  # which error leaves tolerance: "local" (its own) or "propagated"
    first_divergent: bool = False


@dataclass
class AutotuneChoice:
    name: str  # the choice without its config ("triton_mm_3", "mm"); "" for Triton kernel configs
    config: dict[str, str]
    time_ms: float
    ratio: float  # time / best time (inf for a choice that failed to run)
    chosen: bool


@dataclass
class AutotuneGroup:
    kernel: str
    source: str  # select_algorithm | triton_heuristics
    choices: list[AutotuneChoice] = field(default_factory=list)

    @property
    def config_keys(self) -> list[str]:
        """Keys whose value differs between the choices that have a config: the columns worth comparing."""
        configs = [choice.config for choice in self.choices if choice.config]
        keys = {key for config in configs for key in config}
        varying = {k for k in keys if len({config.get(k) for config in configs}) > 1}
        return [k for k in CONFIG_ORDER if k in varying] + sorted(varying - set(CONFIG_ORDER))

    @property
    def shared_config(self) -> dict[str, str]:
        """Keys every choice with a config sets to the same value (said once, not as a column)."""
        configs = [choice.config for choice in self.choices if choice.config]
        first = configs[0] if configs else {}
        return {k: v for k, v in first.items() if all(c.get(k) == v for c in configs)}


def parse_choice(choice: str) -> tuple[str, dict[str, str]]:
    """``"triton_mm_3 BLOCK_M=64, num_warps=4"`` -> ("triton_mm_3", {...}); Triton configs
    (``"XBLOCK: 512, num_warps: 4"``) have no name. Unparsed text stays as the name."""
    first = _CONFIG_ITEM.search(choice)
    if first is None:
        return choice.strip(), {}
    config = {key: value.strip("'\"") for key, value in _CONFIG_ITEM.findall(choice[first.start():])}
    return choice[:first.start()].strip(), config


def autotune_groups(records: Iterable[AutotuneRecord]) -> list[AutotuneGroup]:
    """Records grouped by (kernel, source) in the order they came, each choice's time against the best."""
    by_kernel: dict[tuple[str, str], list[AutotuneRecord]] = {}
    for record in records:
        by_kernel.setdefault((record.kernel, record.source), []).append(record)
    groups = []
    for (kernel, source), mine in by_kernel.items():
        best = min((r.time_ms for r in mine if math.isfinite(r.time_ms) and r.time_ms > 0), default=None)
        group = AutotuneGroup(kernel, source)
        for record in mine:
            name, config = parse_choice(record.choice)
            ratio = record.time_ms / best if best and math.isfinite(record.time_ms) else math.inf
            group.choices.append(AutotuneChoice(name, config, record.time_ms, ratio, record.chosen))
        groups.append(group)
    return groups


def kernel_rows(graph: GraphCapture, profile: Any = None, numerics: Any = None) -> list[KernelRow]:
    """One row per kernel of ``graph``, with time and error where a profile / numerics report has them."""
    times = {(ref.graph, ref.kernel): profile.kernel_ms.get(key, 0.0) for key, ref in profile.kernels.items()} \
        if profile is not None else {}
    checks = {(row.graph, row.kernel): (key, row) for key, row in numerics.kernels.items()} if numerics is not None else {}
    rows = []
    for kernel in graph.kernels:
        row = KernelRow(graph.id, kernel.id, kernel.language, len(kernel.lines), len(kernel.post_grad_nodes),
                        [tuple(u) for u in kernel.user_lines])
        if (graph.id, kernel.id) in times:
            row.ms = times[(graph.id, kernel.id)]
            row.share = row.ms / profile.total_ms if profile.total_ms else None
        if (graph.id, kernel.id) in checks:
            key, check = checks[(graph.id, kernel.id)]
            row.max_rel, row.ok = check.max_rel, check.ok
            row.divergence = check.divergence.value if check.divergence else None
            row.first_divergent = key == numerics.first_divergent
        rows.append(row)
    return rows


def select(rows: list[KernelRow], sort: str = "id", descending: bool | None = None, contains: str = "",
           language: str | None = None) -> list[KernelRow]:
    """Filter (substring of the id or a user line's file; exact language) and sort, stably. Time and error
    sort largest first unless ``descending`` says otherwise; rows without the value go last."""
    if sort not in KERNEL_SORTS:
        raise ValueError(f"unknown sort {sort!r}: choose one of {', '.join(KERNEL_SORTS)}")
    needle = contains.lower()
    kept = [r for r in rows if (not needle or needle in r.id.lower()
                                or any(needle in f"{file}:{line}".lower() for file, line in r.user_lines))
            and (language is None or r.language == language)]
    value = {"id": lambda r: r.id, "language": lambda r: r.language, "lines": lambda r: r.lines,
             "nodes": lambda r: r.nodes, "time": lambda r: r.ms, "error": lambda r: r.max_rel}[sort]
    if descending is None:
        descending = sort in ("time", "error")
    present = [r for r in kept if value(r) is not None]
    missing = [r for r in kept if value(r) is None]
    return sorted(present, key=value, reverse=descending) + missing
