"""Terminal (rich) and notebook (HTML) renderings of hardware counters: a report's kernel table (what
bounds each kernel, its speed-of-light bars, the device kernels an extern call launched) with its
hottest user lines, and one kernel's figures with its hottest source lines and their stall reasons."""

from __future__ import annotations

import html
from collections import Counter
from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text

from ..model.counters import STALL_REASONS, CountersReport, KernelCounters
from ..model.formatting import fmt_bytes, where
from ..model.slots import html_of, rich_of
from .core import table_html

_TOP = 10
_KERNEL_HEAD = ["kernel", "launched", "us", "bound by", "memory SOL", "compute SOL", "DRAM", "L2", "occupancy", "regs",
                "top stall"]
_LINE_HEAD = ["line", "samples", "share", "not issued", "instructions", "top reasons", "text"]


def _bar(percent: float, width: int = 10) -> str:
    filled = max(0, min(width, round(percent / 100 * width)))
    return "█" * filled + "·" * (width - filled)


def _rate(bytes_per_s: float) -> str:
    return f"{fmt_bytes(int(bytes_per_s))}/s"


def _top_stall(k: KernelCounters) -> str:
    stalls = [(reason, n) for reason, n in k.stalls.items() if reason not in ("selected", "not_selected")]
    if not stalls or not k.samples:
        return "–"
    reason, n = stalls[0]
    return f"{reason} {n / k.samples:.0%}"


def _launched(k: KernelCounters, width: int = 60) -> str:
    """An extern kernel's device kernels, each once, with how many times it launched ("" for a Triton
    kernel: it is its own launch)."""
    if k.language != "extern":
        return ""
    launches = Counter(k.device_kernels)
    return ", ".join((name if len(name) <= width else name[:width - 1] + "…") + (f" x{n}" if n > 1 else "")
                     for name, n in launches.items())


def _kernel_row(k: KernelCounters) -> list[str]:
    return [k.kernel, _launched(k), f"{k.duration_ns / 1e3:.2f}", k.bound_by,
            f"{_bar(k.memory_sol)} {k.memory_sol:.0f}%",
            f"{_bar(k.compute_sol)} {k.compute_sol:.0f}%", _rate(k.dram_bandwidth), _rate(k.l2_bandwidth),
            f"{k.achieved_occupancy:.0f}% of {k.theoretical_occupancy:.0f}%", str(k.registers), _top_stall(k)]


def _reasons(stalls: dict[str, int], total: int, n: int = 3) -> str:
    top = sorted(stalls.items(), key=lambda kv: -kv[1])[:n]
    return ", ".join(f"{reason} {count / total:.0%}" for reason, count in top) if total else ""


def _line_rows(k: KernelCounters) -> list[list[str]]:
    return [[line.where, str(line.samples), f"{line.samples / k.samples:.1%}" if k.samples else "–",
             str(line.not_issued), f"{line.instructions:,}", _reasons(line.stalls, line.samples), line.text[:60]]
            for line in k.top_lines(_TOP) if line.samples]


def _user_rows(r: CountersReport) -> list[list[str]]:
    total = sum(r.line_samples.values())
    return [[where(line), f"{samples:.0f}", f"{samples / total:.1%}" if total else "–"]
            for line, samples in r.top_lines(_TOP)]


def _head(r: CountersReport) -> str:
    return f"{len(r.kernels)} kernels on {r.device or '?'} ({r.tool}, {r.wall_s:.1f} s)"


_RULE = ("bound by: the larger of memory and compute SOL binds at >= 60% of peak; below that on both, "
         "latency (see the stall reasons)")


@rich_of.register
def _(r: CountersReport) -> Any:
    kernels = Table(title="hardware counters")
    for column in _KERNEL_HEAD:
        kernels.add_column(column, justify="right" if column in ("us", "regs") else "left")
    for k in r.kernels:
        kernels.add_row(*_kernel_row(k))
    users = Table(title="your lines by warp stall samples")
    for column in ("line", "samples", "share"):
        users.add_column(column)
    for row in _user_rows(r):
        users.add_row(*row)
    parts: list[Any] = [Text(_head(r), style="bold"), kernels, users, Text(_RULE, style="dim")]
    parts += [Text(f"{kernel}: no counters ({why})", style="red") for kernel, why in r.failed.items()]
    return Group(*parts)


@html_of.register
def _(r: CountersReport) -> str:
    failed = "".join(f"<p style='color:#b71c1c'>{html.escape(kernel)}: no counters ({html.escape(why)})</p>"
                     for kernel, why in r.failed.items())
    return (f"<div><b>{html.escape(_head(r))}</b>" + table_html(_KERNEL_HEAD, [_kernel_row(k) for k in r.kernels])
            + table_html(["your line", "samples", "share"], _user_rows(r))
            + f"<small>{html.escape(_RULE)}</small>{failed}</div>")


def _kernel_text(k: KernelCounters) -> str:
    count = len(k.device_kernels)
    launched = (f" ({count} launch{'es' if count != 1 else ''}: {', '.join(k.device_kernels)}; figures combined, "
                "launch resources of the longest)") if k.language == "extern" else ""
    return (f"{k.kernel}{launched}: {k.duration_ns / 1e3:.2f} us, {k.bound_by}-bound (memory {k.memory_sol:.1f}%, "
            f"compute {k.compute_sol:.1f}% of peak); DRAM {fmt_bytes(int(k.dram_bytes))} at {_rate(k.dram_bandwidth)}, "
            f"L2 {_rate(k.l2_bandwidth)}, "
            f"L1 {_rate(k.l1_bandwidth)}; occupancy {k.achieved_occupancy:.1f}% of {k.theoretical_occupancy:.1f}%; "
            f"{k.registers} registers, {fmt_bytes(k.shared_memory)} shared per block; grid {k.grid} x {k.block} "
            f"threads; {k.samples} stall samples")


def _reason_rows(k: KernelCounters) -> list[list[str]]:
    return [[reason, str(n), f"{n / k.samples:.1%}" if k.samples else "–", STALL_REASONS.get(reason, "")]
            for reason, n in list(k.stalls.items())[:8]]


@rich_of.register
def _(k: KernelCounters) -> Any:
    lines = Table(title="hottest lines")
    for column in _LINE_HEAD:
        lines.add_column(column)
    for row in _line_rows(k):
        lines.add_row(*row)
    reasons = Table(title="stall reasons")
    for column in ("reason", "samples", "share", "meaning"):
        reasons.add_column(column)
    for row in _reason_rows(k):
        reasons.add_row(*row)
    if k.language == "extern":
        return Group(Text(_kernel_text(k), style="bold"), Text(_NO_LINES, style="dim"))
    return Group(Text(_kernel_text(k), style="bold"), lines, reasons)


_NO_LINES = ("no line figures: a library kernel's code is not a source the explorer links to nodes; its samples "
             "go whole to the kernel's nodes and your lines")


@html_of.register
def _(k: KernelCounters) -> str:
    if k.language == "extern":
        return f"<div><b>{html.escape(_kernel_text(k))}</b><p><small>{html.escape(_NO_LINES)}</small></p></div>"
    return (f"<div><b>{html.escape(_kernel_text(k))}</b>" + table_html(_LINE_HEAD, _line_rows(k))
            + table_html(["reason", "samples", "share", "meaning"], _reason_rows(k)) + "</div>")
