"""Nsight Compute's CSV exports -> KernelCounters.

Three exports of one report are read (compiler/runs/counters.py makes them):

- the raw page, ``ncu -i REP --page raw --csv --print-units base``: a header row of metric names, a
  row of units, then one row per profiled kernel launch, values with thousands separators;
- the same page with ``--print-nvtx-rename kernel``: each launch's ``Kernel Name`` is then the name of
  the innermost NVTX push/pop range it was launched in, which says which job item launched it
  (``range_items``);
- the source page of one launch, ``ncu -i REP --page source --csv --print-source cuda,sass
  --launch-skip I --launch-count 1``: per source file a block (``"File Path"``, ``"Function Name"``,
  a header row), then each source line's row (its figures summed over its instructions) followed by
  the rows of its SASS instructions (empty ``Line No``). Only source-line rows are kept.

Metric names are ncu's stable ones (the raw page), so the figures do not depend on the details
page's section layout or on its display units.
"""

from __future__ import annotations

import csv
import io
import re
from typing import Any

from ..model.counters import KernelCounters, LineCounters

# KernelCounters field -> raw-page metric
RAW_METRICS = {
    "duration_ns": "gpu__time_duration.sum",
    "memory_sol": "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    "compute_sol": "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "dram_percent": "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
    "l2_percent": "lts__throughput.avg.pct_of_peak_sustained_elapsed",
    "l1_percent": "l1tex__throughput.avg.pct_of_peak_sustained_active",
    "dram_bandwidth": "dram__bytes.sum.per_second",
    "l1_bandwidth": "derived__l1tex__lsu_writeback_bytes_mem_lgds.sum.per_second",
    "achieved_occupancy": "sm__warps_active.avg.pct_of_peak_sustained_active",
    "theoretical_occupancy": "sm__maximum_warps_per_active_cycle_pct",
    "registers": "launch__registers_per_thread",
    "grid": "launch__grid_size",
    "block": "launch__block_size",
    "samples": "smsp__pcsamp_sample_count",
    "instructions": "inst_executed",
}
L2_SECTORS_PER_SECOND = "lts__t_sectors.sum.per_second"
DRAM_BYTES = ("dram__bytes_read.sum", "dram__bytes_write.sum")
SECTOR_BYTES = 32
SHARED_MEMORY = ("launch__shared_mem_per_block_static", "launch__shared_mem_per_block_dynamic",
                 "launch__shared_mem_per_block_driver")
_SCALE = {"ns": 1.0, "nsecond": 1.0, "us": 1e3, "usecond": 1e3, "ms": 1e6, "msecond": 1e6, "s": 1e9, "second": 1e9,
          "byte/s": 1.0, "Kbyte/s": 1e3, "Mbyte/s": 1e6, "Gbyte/s": 1e9, "Tbyte/s": 1e12}
_INTEGER = {"registers", "grid", "block", "samples", "instructions"}


class NcuExportError(ValueError):
    """An export that is not what ``ncu --csv`` writes for the page asked for."""


def number(text: str) -> float:
    """ncu's figure text as a number: thousands separators dropped; ``-``, ``n/a`` and blanks are 0."""
    cleaned = text.replace(",", "").strip()
    try:
        return float(cleaned)
    except ValueError:
        return 0.0


def raw_rows(text: str) -> list[dict[str, tuple[str, str]]]:
    """The raw page: one dict per kernel launch, metric name -> (value text, unit)."""
    rows = [row for row in csv.reader(io.StringIO(text)) if row]
    if len(rows) < 2 or "Kernel Name" not in rows[0]:
        raise NcuExportError("not ncu's raw page: expected a header row with 'Kernel Name' and a units row "
                             "(ncu -i REPORT --page raw --csv --print-units base)")
    names, units = rows[0], rows[1]
    return [{name: (value, units[i] if i < len(units) else "") for i, (name, value) in enumerate(zip(names, row))}
            for row in rows[2:]]


def _value(row: dict[str, tuple[str, str]], metric: str) -> float:
    value, unit = row.get(metric, ("", ""))
    return number(value) * _SCALE.get(unit, 1.0)


def kernel_figures(row: dict[str, tuple[str, str]]) -> dict[str, Any]:
    """KernelCounters fields from one raw-page row (metrics the device lacks read 0)."""
    figures: dict[str, Any] = {}
    for name, metric in RAW_METRICS.items():
        value = _value(row, metric)
        figures[name] = int(value) if name in _INTEGER else value
    figures["l2_bandwidth"] = _value(row, L2_SECTORS_PER_SECOND) * SECTOR_BYTES
    figures["shared_memory"] = int(sum(_value(row, m) for m in SHARED_MEMORY))
    figures["dram_bytes"] = sum(_value(row, m) for m in DRAM_BYTES)
    figures["name"] = row.get("Kernel Name", ("", ""))[0]
    figures["device_kernels"] = [figures["name"]]
    figures["device"] = row.get("device__attribute_display_name", ("", ""))[0]
    return figures


def _fields(line: str) -> list[str]:
    """One CSV line of the source page. ncu quotes every field but does not escape the quotes inside
    source text (``input_precision="ieee"``), so fields are cut at ``","`` rather than read as CSV."""
    if len(line) >= 2 and line.startswith('"') and line.endswith('"'):
        return line[1:-1].split('","')
    return next(csv.reader([line]), [])


def _rejoin(row: list[str], width: int) -> list[str]:
    """A row cut into more fields than its header has: a ``","`` inside the source text (column 1 of a
    source line, column 3 of a SASS row) is put back."""
    extra = len(row) - width
    if extra <= 0:
        return row
    at = 1 if row[0] else 3
    return row[:at] + ['","'.join(row[at:at + extra + 1])] + row[at + extra + 1:]


def source_blocks(text: str) -> list[tuple[str, list[list[str]], list[str]]]:
    """The source page as (file path, source-line rows, header) blocks; SASS rows are dropped."""
    blocks: list[tuple[str, list[list[str]], list[str]]] = []
    path: str | None = None
    header: list[str] | None = None
    rows: list[list[str]] = []
    for line in text.splitlines():
        row = _fields(line)
        if not row or not any(row):
            continue
        if row[0] in ("File Path", "File Name"):
            if path is not None and header is not None:
                blocks.append((path, rows, header))
            path, header, rows = row[1], None, []
        elif row[0] == "Line No":
            header = row
        elif header is not None and row[0]:
            rows.append(_rejoin(row, len(header)))
    if path is not None and header is not None:
        blocks.append((path, rows, header))
    if not blocks:
        raise NcuExportError("not ncu's source page with figures: expected 'File Path' blocks with a 'Line No' "
                             "header (ncu -i REPORT --page source --csv --print-source cuda,sass)")
    return blocks


def _own_file(blocks: list[tuple[str, list[list[str]], list[str]]], kernel_file: str | None,
              kernel_source: str | None, lines_above: int) -> str | None:
    """Which block is the kernel's own source: the worker's file when named, else the block whose lines
    read as the kernel source's lines (``lines_above`` the source in its file)."""
    paths = [path for path, _, _ in blocks]
    if kernel_file in paths:
        return kernel_file
    if kernel_source is None:
        return None
    source = [line.strip() for line in kernel_source.splitlines()]
    best, best_score = None, 0.0
    for path, rows, _ in blocks:
        matched = sum(1 for row in rows if 0 < (at := int(number(row[0])) - lines_above) <= len(source)
                      and source[at - 1] == row[1].strip())
        score = matched / len(rows) if rows else 0.0
        if score > best_score:
            best, best_score = path, score
    return best if best_score >= 0.9 else None


_STALL = re.compile(r"^stall_(\w+)$")


def source_lines(text: str, kernel_file: str | None = None, kernel_source: str | None = None,
                 lines_above: int = 0) -> list[LineCounters]:
    """Per source line: stall samples (all, not issued, by reason) and instructions executed. Lines of
    the kernel's own file get ``file=None`` and the kernel source's line numbers (the file's less
    ``lines_above``, the lines it has above the source); inlined library lines keep their path and number."""
    blocks = source_blocks(text)
    own = _own_file(blocks, kernel_file, kernel_source, lines_above)
    lines: list[LineCounters] = []
    for path, rows, header in blocks:
        col = {name: i for i, name in enumerate(header)}
        for needed in ("Warp Stall Sampling (All Samples)", "Instructions Executed"):
            if needed not in col:
                raise NcuExportError(f"the source page has no '{needed}' column: record with --set full "
                                     "(SourceCounters and WarpStateStats sections)")
        reasons = {match.group(1): i for name, i in col.items() if (match := _STALL.match(name))}
        for row in rows:
            def at(i: int) -> int:
                return int(number(row[i])) if i < len(row) else 0

            stalls = {reason: at(i) for reason, i in reasons.items() if at(i)}
            lines.append(LineCounters(
                line=int(number(row[0])) - (lines_above if path == own else 0), file=None if path == own else path,
                samples=at(col["Warp Stall Sampling (All Samples)"]),
                not_issued=at(col.get("Warp Stall Sampling (Not-issued Samples)", len(row))),
                instructions=at(col["Instructions Executed"]), stalls=stalls, text=row[1].strip()))
    return lines


def kernel_counters(raw_row: dict[str, tuple[str, str]], source_text: str | None, kernel: str,
                    graph: str | None = None, kernel_file: str | None = None,
                    kernel_source: str | None = None, language: str = "triton", lines_above: int = 0) -> KernelCounters:
    """KernelCounters of one launch from its raw-page row and its source page (None: no line figures)."""
    lines = source_lines(source_text, kernel_file, kernel_source, lines_above) if source_text else []
    return KernelCounters(kernel=kernel, graph=graph, lines=lines, language=language, **kernel_figures(raw_row))


def range_items(renamed_rows: list[dict[str, tuple[str, str]]], prefix: str) -> list[int | None]:
    """Per launch of the raw page exported with ``--print-nvtx-rename kernel``, the job item whose NVTX
    range ``<prefix><index>`` it was launched in (None: named by another range, or by none)."""
    pattern = re.compile(re.escape(prefix) + r"(\d+)")
    items: list[int | None] = []
    for row in renamed_rows:
        match = pattern.search(row.get("Kernel Name", ("", ""))[0])
        items.append(int(match.group(1)) if match else None)
    return items


def launches_by_item(named: list[int | None], count: int, may_be_unnamed: set[int]) -> list[list[int]]:
    """Each job item's launch positions, from ``range_items``.

    The items ran one after the other, each launch inside its item's range (the NVTX filter profiled
    nothing else). A launch named by no item lies among its item's launches, renamed after a range a
    library pushed inside ours (CUB and Thrust annotate their algorithms): it belongs to the item named
    on both sides of it or, between two items, to the only item there that may launch unnamed ones
    (``may_be_unnamed``: extern calls; a Triton launch is always named by our range). ``ValueError``
    when that leaves more than one item."""
    by_item: list[list[int]] = [[] for _ in range(count)]
    start = 0
    while start < len(named):
        item = named[start]
        if item is not None:
            by_item[item].append(start)
            start += 1
            continue
        end = start
        while end < len(named) and named[end] is None:
            end += 1
        before = named[start - 1] if start else None
        after = named[end] if end < len(named) else None
        if before is not None and before == after:
            owners = [before]
        else:
            low, high = (before if before is not None else 0), (after if after is not None else count - 1)
            owners = [i for i in range(low, high + 1) if i in may_be_unnamed]
        if len(owners) != 1:
            raise ValueError(f"launches {start} to {end - 1} are named by no range of the job, and items {owners} "
                             "could each have launched them")
        by_item[owners[0]] += range(start, end)
        start = end
    return by_item


def tool_version(text: str) -> str:
    """``ncu --version`` output -> "Nsight Compute 2025.3.1.0" ("Nsight Compute" when unrecognised)."""
    match = re.search(r"Version\s+([\d.]+)", text)
    return f"Nsight Compute {match.group(1)}" if match else "Nsight Compute"
