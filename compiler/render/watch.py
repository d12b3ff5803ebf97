"""Terminal (rich) and notebook (HTML) renderings of a watched run: the summary line, then recompiles,
graph breaks, frames and the slowest steps, each a table (rows any view can reuse: ``watch_tables``)."""

from __future__ import annotations

import html
from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text

from ..model.formatting import shorten, where
from ..model.slots import html_of, rich_of
from ..model.watch import BreakCount, CompileEvent, FrameStats, LiveView, Step, WatchReport
from ..model.watch_cudagraphs import CudaGraphStepEvent
from .core import table_html

_STEPS_SHOWN = 5  # the slowest steps
_REASON_WIDTH = 90


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.2f}"


def _where(file: str | None, line: int | None) -> str:
    return where((file, line)) if file and line else ""


def _compile_row(event: CompileEvent) -> list[str]:
    return ["" if event.step is None else str(event.step), event.compile_id, event.function,
            shorten(event.reason, _REASON_WIDTH, squash=True) if event.is_recompile else "(first compile)",
            _where(event.file, event.line), event.value or "", f"{event.seconds:.2f}",
            ", ".join(f"{k} {v}" for k, v in sorted(event.cache.items()))]


def _break_row(entry: BreakCount) -> list[str]:
    return [shorten(entry.reason, _REASON_WIDTH, squash=True), _where(entry.filename, entry.line), entry.function,
            str(entry.count)]


def _frame_row(frame: FrameStats) -> list[str]:
    return [frame.frame_id, frame.function, _where(frame.filename, frame.line), str(frame.calls),
            _ms(frame.seconds) if frame.timed_calls else "-", f"{frame.mean_seconds * 1e6:.1f}" if frame.timed_calls else "-",
            str(len(frame.compile_ids)), str(frame.recompiles), str(frame.graph_breaks)]


def _step_row(step: Step) -> list[str]:
    return [str(step.index), _ms(step.seconds), ", ".join(f"{c} x{n}" for c, n in step.calls.items()) or "-",
            ", ".join(step.compiles)]


COMPILE_COLUMNS = ["step", "compile", "function", "reason", "line", "value", "compile s", "cache"]
BREAK_COLUMNS = ["graph break", "line", "function", "fired"]
FRAME_COLUMNS = ["frame", "function", "defined", "calls", "est. ms", "mean us", "compiles", "recompiles", "breaks"]
STEP_COLUMNS = ["step", "ms", "compiled graphs run", "compiles"]
CUDAGRAPH_COLUMNS = ["step", "compile", "function", "CUDA graph tree", "times", "reason"]


def _cudagraph_row(event: CudaGraphStepEvent) -> list[str]:
    return [str(event.step), event.compile_id, event.function, event.kind.value, str(event.count),
            shorten(event.reason, _REASON_WIDTH, squash=True)]


def watch_tables(report: WatchReport) -> list[tuple[str, list[str], list[list[str]]]]:
    """(title, columns, rows) of each table the report shows, empty ones left out."""
    slowest = sorted(report.steps, key=lambda s: -s.seconds)[:_STEPS_SHOWN]
    tables = [
        ("Compiles and recompiles", COMPILE_COLUMNS, [_compile_row(c) for c in report.compiles]),
        ("Graph breaks", BREAK_COLUMNS, [_break_row(b) for b in report.graph_breaks]),
        ("Compiled frames (time sampled: one call in %d)" % report.sample_every, FRAME_COLUMNS,
         [_frame_row(f) for f in report.frames]),
        (f"Slowest steps (of {len(report.steps)})", STEP_COLUMNS, [_step_row(s) for s in sorted(slowest, key=lambda s: s.index)]),
        ("CUDA graphs (replays counted per step)", CUDAGRAPH_COLUMNS,
         [_cudagraph_row(e) for e in report.cudagraph_events]),
    ]
    return [(title, columns, rows) for title, columns, rows in tables if rows]


def _cache_text(report: WatchReport) -> str:
    parts = [f"{cache}: " + ", ".join(f"{n} {state}" for state, n in sorted(counts.items()))
             for cache, counts in sorted(report.cache.items())]
    return "; ".join(parts)


def _table(title: str, columns: list[str], rows: list[list[str]]) -> Table:
    table = Table(title=title, title_justify="left", show_lines=False)
    for column in columns:
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(*row)
    return table


def headline(report: WatchReport) -> str:
    """``watch of a loop: 10 steps, ...`` (``still running`` while the loop runs)."""
    running = " (still running)" if report.active else ""
    return f"watch of {report.source}{running}: {report.summary()}"


def _note_line(note: str) -> str:
    """A note's first line: torch's warnings run to a dozen lines, all of them kept in ``w.notes``."""
    lines = note.strip().splitlines() or [""]
    return lines[0] + (f" ({len(lines) - 1} more lines in w.notes)" if len(lines) > 1 else "")


@rich_of.register
def _(report: WatchReport) -> Any:
    parts: list[Any] = [Text(headline(report), style="bold")]
    if report.steps_made_by:
        parts.append(Text(f"steps: {report.steps_made_by}"))
    if report.error:
        parts.append(Text(f"the loop raised {report.error}; everything before it is shown", style="red"))
    if report.cache:
        parts.append(Text(f"caches: {_cache_text(report)}"))
    for title, columns, rows in watch_tables(report):
        parts.append(_table(title, columns, rows))
    for note in report.notes:
        parts.append(Text(f"note: {_note_line(note)}", style="dim"))
    return Group(*parts)


@html_of.register
def _(report: WatchReport) -> str:
    out = [f"<div class='ie-watch'><p><b>{html.escape(headline(report))}</b></p>"]
    if report.steps_made_by:
        out.append(f"<p>steps: {html.escape(report.steps_made_by)}</p>")
    if report.error:
        out.append(f"<p style='color:#b00'>the loop raised {html.escape(report.error)}; everything before it is shown</p>")
    if report.cache:
        out.append(f"<p>caches: {html.escape(_cache_text(report))}</p>")
    for title, columns, rows in watch_tables(report):
        out.append(f"<h4>{html.escape(title)}</h4>{table_html(columns, rows)}")
    out += [f"<p><i>note: {html.escape(_note_line(n))}</i></p>" for n in report.notes]
    out.append("</div>")
    return "".join(out)


@rich_of.register
def _(view: LiveView) -> Any:
    """A few rows of each table: the newest compiles, the breaks that fired most, the busiest frames."""
    report, rows = view.report, view.rows
    parts: list[Any] = [Text(f"watching: {report.summary()}", style="bold")]
    compiles = report.compiles[-rows:]
    if compiles:
        title = "Compiles and recompiles" + (f" (last {rows} of {len(report.compiles)})"
                                             if len(report.compiles) > rows else "")
        parts.append(_table(title, COMPILE_COLUMNS[:5], [_compile_row(c)[:5] for c in compiles]))
    breaks = sorted(report.graph_breaks, key=lambda b: -b.count)[:rows]
    if breaks:
        parts.append(_table("Graph breaks", BREAK_COLUMNS, [_break_row(b) for b in breaks]))
    frames = sorted(report.frames, key=lambda f: -f.calls)[:rows]
    if frames:
        frame_rows = [_frame_row(f) for f in frames]  # without the sampled times: they settle only over the run
        parts.append(_table("Compiled frames", FRAME_COLUMNS[:4] + FRAME_COLUMNS[6:], [r[:4] + r[6:] for r in frame_rows]))
    for note in report.notes:
        parts.append(Text(f"note: {_note_line(note)}", style="dim"))
    return Group(*parts)


for _kind in (CompileEvent, BreakCount, FrameStats, Step):  # one line each: their repr
    rich_of.register(_kind, lambda item: Text(repr(item)))
    html_of.register(_kind, lambda item: f"<code>{html.escape(repr(item))}</code>")
