"""Notes on kernel times that are not the kernels' own: a profile or bench says when a kernel's time swung
between runs, or when torch runs more CPU threads than the process has cores, naming the likely cause and
the fix.

On a CPU, torch's OpenMP threads default to the machine's cores; where fewer are free (a container, a
shared machine, other processes), threads wait for each other and a 0.01 ms kernel can read 10 ms on some
runs. Nothing in the figures themselves says so; these notes do.
"""

from __future__ import annotations

import os
from typing import Mapping, Sequence

SPREAD_RATIO = 2.0  # a kernel whose slowest run is more than this times its fastest gets a note
_NAMED = 3  # kernels named in the note; the rest are counted

_CPU_CAUSE = ("on a CPU this is most often thread oversubscription: torch runs more OpenMP threads than there are "
              "free cores, and they wait for each other. Run with OMP_NUM_THREADS=1 (or torch.set_num_threads(n), "
              "n at most the free cores) and measure again")
_GPU_CAUSE = ("on a GPU this is most often other work sharing it, or its clocks changing; measure again with the "
              "GPU to yourself")


def spread_note(samples: Mapping[str, Sequence[float]], device: str) -> str | None:
    """A note naming the kernels whose per-run times (ms) varied more than SPREAD_RATIO x (fastest vs slowest
    run), the widest first, or None when every kernel's runs agree."""
    spread = []
    for key, times in samples.items():
        if len(times) < 2:
            continue
        low, high = min(times), max(times)
        if high > SPREAD_RATIO * low and high > 0:
            spread.append((high / low if low > 0 else float("inf"), key, low, high))
    if not spread:
        return None
    spread.sort(key=lambda row: -row[0])
    named = ", ".join(f"{key} {low:.3f} to {high:.3f} ms" for _, key, low, high in spread[:_NAMED])
    more = f" and {len(spread) - _NAMED} more" if len(spread) > _NAMED else ""
    cause = _CPU_CAUSE if device.startswith("cpu") else _GPU_CAUSE
    count = "1 kernel's time" if len(spread) == 1 else f"{len(spread)} kernels' times"
    return (f"{count} varied more than {SPREAD_RATIO:g}x between runs ({named}{more}): the figures are not the "
            f"kernels' own; {cause}.")


def usable_cores() -> int:
    """The cores this process may run on: its CPU affinity where the system has one (a container's or a
    ``taskset``'s limit, which ``os.cpu_count()`` ignores), else the machine's count."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def thread_note(threads: int, cores: int) -> str | None:
    """A note when torch's CPU threads outnumber the cores this process may run on, else None."""
    if cores <= 0 or threads <= cores:
        return None
    return (f"torch runs {threads} CPU threads but this process may use {cores} core{'s' if cores != 1 else ''}: "
            "threads wait for each other (oversubscription), so CPU kernel times swing between runs. Set "
            f"OMP_NUM_THREADS={cores} before starting Python, or call torch.set_num_threads({cores}), and measure "
            "again.")
