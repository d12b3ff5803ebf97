"""CUDA graphs in a terminal and a notebook: ``g.cudagraphs``, ``c.cudagraphs`` and their lines in ``c.show()``.

One sentence per graph says how it runs (captured, partly, skipped, no GPU) and, when not all of it is
captured, why, on whose line: the partition's reason with its op, or the skip's kind with its node and
kernel. The tree's events are counted by kind; the time of a call with and without the graphs, when
measured, closes the section.
"""

from __future__ import annotations

import html
from typing import Any

from rich.console import Group
from rich.text import Text

from ..model.cudagraph_what_if import CudaGraphWhatIf
from ..model.cudagraphs import CudaGraphReport, CudaGraphState, CudaGraphTime, GraphCudaGraphs
from ..model.formatting import where
from ..model.slots import html_of, rich_of
from .core import rich_table, table_html

_STYLE = {CudaGraphState.CAPTURED: "green", CudaGraphState.PARTIAL: "yellow", CudaGraphState.SKIPPED: "red",
          CudaGraphState.NO_GPU: "dim"}


def _at(line: tuple[str, int] | None) -> str:
    return f" at {where(line)}" if line else ""


def why_not(state: GraphCudaGraphs) -> list[str]:
    """One phrase per cause keeping part of the graph out of CUDA graphs: the skip, then each partition's
    reasons (the op, its post-grad node and kernel, your line)."""
    if state.state == CudaGraphState.NO_GPU:
        return []  # every partition of a CPU graph is "cpu ops": the headline says it once
    out = []
    skip = state.skip
    if skip is not None:
        part = "" if skip.partition is None else f"partition_{skip.partition} "
        node = f" ({skip.node}{', ' + ', '.join(skip.kernels) if skip.kernels else ''})" if skip.node else ""
        out.append(f"{part}skipped: {skip.kind.value}{node}{_at(skip.line)}: {skip.message}")
    for partition in state.partitions:
        if partition.captured:
            continue
        for reason in partition.reasons:
            op = f"{reason.op} ({reason.post_grad})" if reason.op else reason.node
            kernels = f" -> {', '.join(reason.kernels)}" if reason.kernels else ""
            out.append(f"partition {partition.index} not captured: {reason.reason}: {op}{kernels}{_at(reason.line)}")
    return out


def headline(state: GraphCudaGraphs) -> str:
    captured = sum(state.replays(p) for p in state.partitions)
    kernels = len(state.captured_kernels())
    if state.state == CudaGraphState.NO_GPU:
        return f"CUDA graphs: none on {state.device} (they need a GPU)"
    counts = ", ".join(f"{n} {kind}" for kind, n in state.counts().items())
    pool = f", pool {state.pool_bytes / 2**20:.1f} MiB" if state.pool_bytes else ""
    return (f"CUDA graphs: {state.state.value}, {captured} of {len(state.partitions)} partitions, {kernels} kernels"
            + (f"; tree: {counts}{pool}" if counts else ""))


def graph_lines(state: GraphCudaGraphs) -> list[Text]:
    """The lines ``c.show()`` prints under a graph compiled with CUDA graphs."""
    lines = [Text(f"  {headline(state)}", style=_STYLE[state.state])]
    lines += [Text(f"    {phrase}", style="yellow") for phrase in why_not(state)[:6]]
    return lines


def time_text(report: CudaGraphReport) -> str | None:
    parts = []
    if report.time is not None:
        t = report.time
        parts.append(f"a call takes {t.with_ms:.4f} ms with CUDA graphs, {t.without_ms:.4f} ms without "
                     f"({t.saved_ms:.4f} ms of launches saved)")
    share = report.captured_share
    if share is not None:
        parts.append(f"{share:.0%} of the profiled kernel time is in captured partitions")
    return "CUDA graphs: " + "; ".join(parts) if parts else None


def _partition_rows(state: GraphCudaGraphs) -> list[list[str]]:
    return [[str(p.index), p.function or "(inline)", "yes" if state.replays(p) else "no", str(len(p.kernels)),
             ", ".join(p.kernels[:4]) + (" ..." if len(p.kernels) > 4 else ""),
             "" if state.replays(p) else (p.reason or (state.skip.kind.value if state.skip else ""))]
            for p in state.partitions]


_PARTITION_HEAD = ["partition", "function", "captured", "kernels", "which", "why not"]


@rich_of.register
def _(state: GraphCudaGraphs) -> Any:
    table = rich_table("partitions", _PARTITION_HEAD, _partition_rows(state))
    return Group(Text(headline(state), style=_STYLE[state.state]), table,
                 *(Text(phrase, style="yellow") for phrase in why_not(state)),
                 *(Text(f"note: {n}", style="dim") for n in state.notes))


@html_of.register
def _(state: GraphCudaGraphs) -> str:
    return (f"<div><b>{html.escape(headline(state))}</b>" + table_html(_PARTITION_HEAD, _partition_rows(state))
            + "".join(f"<p>{html.escape(p)}</p>" for p in why_not(state)) + "</div>")


@rich_of.register
def _(report: CudaGraphReport) -> Any:
    parts: list[Any] = []
    for graph in report.graphs:
        parts.append(Text(f"{graph.id} {graph.kind}: {headline(graph.cudagraphs)}",
                          style=_STYLE[graph.cudagraphs.state]))
        parts += [Text(f"  {phrase}", style="yellow") for phrase in why_not(graph.cudagraphs)]
    time = time_text(report)
    if time:
        parts.append(Text(time, style="bold"))
    return Group(*(parts or [Text("compiled without CUDA graphs")]))


@html_of.register
def _(report: CudaGraphReport) -> str:
    rows = [[g.id, g.kind, headline(g.cudagraphs), "; ".join(why_not(g.cudagraphs))] for g in report.graphs]
    time = time_text(report)
    return ("<div>" + table_html(["graph", "kind", "CUDA graphs", "why not"], rows)
            + (f"<p><b>{html.escape(time)}</b></p>" if time else "") + "</div>")


@rich_of.register
def _(t: CudaGraphTime) -> Any:
    return Text(repr(t))


@html_of.register
def _(t: CudaGraphTime) -> str:
    return f"<p>{html.escape(repr(t))}</p>"


def _what_if_rows(w: CudaGraphWhatIf) -> list[list[str]]:
    rows = [[graph, before, after] for graph, before, after in w.states()]
    if w.before_time is not None and w.after_time is not None:
        rows.append(["ms per call", f"{w.before_time.with_ms:.4f}", f"{w.after_time.with_ms:.4f}"])
    return rows


@rich_of.register
def _(w: CudaGraphWhatIf) -> Any:
    table = rich_table(f"what if: {w.change}", ["graph", "before", "after"], _what_if_rows(w))
    saved = w.saved_ms
    tail = [Text(f"{saved:.4f} ms saved per call", style="bold")] if saved is not None else []
    return Group(table, *tail, *(Text(f"note: {n}", style="dim") for n in w.notes))


@html_of.register
def _(w: CudaGraphWhatIf) -> str:
    return (f"<div><b>what if: {html.escape(w.change)}</b>" + table_html(["graph", "before", "after"], _what_if_rows(w))
            + "</div>")
