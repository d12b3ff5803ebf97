"""Terminal (rich) and notebook (HTML) renderings of g.memory, g.wrapper.fx and k.ir.

Registered on the model's ``rich_of`` / ``html_of``, so these objects print the same way as the stages.
Long IR stages show their head (``SHOWN_LINES``); the full text stays in ``k.ir.stages``.
"""

from __future__ import annotations

import html
from typing import Any

from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import LlvmLexer, TextLexer
from rich.console import Group
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from ..model.formatting import fmt_bytes
from ..model.kernel_ir import KernelIR
from ..model.memory import MemoryTimeline
from ..model.slots import html_of, rich_of
from ..model.wrapper_fx import WrapperFx
from .core import code_html, table_html

SHOWN_LINES = 300
_BAR = 30  # characters of the widest bar in the terminal


def _summary(m: MemoryTimeline) -> list[str]:
    lines = [f"peak {fmt_bytes(m.peak_bytes)} at step {m.peak_step} ({', '.join(m.at_peak)}); "
             f"outputs {fmt_bytes(m.output_bytes)}; inputs (held by the caller) {fmt_bytes(m.input_bytes)}"]
    if m.estimate:
        lines.append(f"Inductor's estimate (memory.py: no reuse, freeable inputs counted): "
                     f"{fmt_bytes(m.estimate.get('peak_bytes'))}")
    if m.measured is not None:
        lines.append(f"measured on {m.measured.device}: {fmt_bytes(m.measured.peak_bytes)}"
                     + (f" ({m.measured.ratio:.3f}x the plan)" if m.measured.ratio else ""))
    return lines + [f"note: {n}" for n in m.notes] + [f"mismatch: {n}" for n in m.mismatches]


def _step_rows(m: MemoryTimeline) -> list[list[str]]:
    return [[str(s.index), s.kernel or s.call, ", ".join(s.allocated), ", ".join(s.freed), fmt_bytes(s.peak_bytes),
             fmt_bytes(s.live_bytes)] for s in m.steps]


_STEP_HEADERS = ["step", "call", "allocated", "freed", "peak", "live after"]


@rich_of.register
def _(m: MemoryTimeline) -> Any:
    table = Table(title=repr(m))
    for column in [*_STEP_HEADERS, ""]:
        table.add_column(column)
    top = max((s.peak_bytes for s in m.steps), default=0) or 1
    for row, step in zip(_step_rows(m), m.steps):
        bar = "█" * max(1, round(_BAR * step.peak_bytes / top)) if step.peak_bytes else ""
        table.add_row(*row, Text(bar, style="red" if step.index == m.peak_step else "cyan"))
    return Group(*[Text(line) for line in _summary(m)], table)


@html_of.register
def _(m: MemoryTimeline) -> str:
    top = max((s.peak_bytes for s in m.steps), default=0) or 1
    rows = []
    for row, step in zip(_step_rows(m), m.steps):
        color = "#d62728" if step.index == m.peak_step else "#1f77b4"
        width = round(200 * step.peak_bytes / top)
        cells = "".join(f"<td>{html.escape(c)}</td>" for c in row)
        rows.append(f"<tr>{cells}<td><div style='background:{color};height:10px;width:{width}px'></div></td></tr>")
    head = "".join(f"<th style='text-align:left'>{h}</th>" for h in [*_STEP_HEADERS, ""])
    summary = "".join(f"<div>{html.escape(line)}</div>" for line in _summary(m))
    return (f"<div><b>{html.escape(repr(m))}</b>{summary}<table><thead><tr>{head}</tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table></div>")


def _fx_rows(fx: WrapperFx) -> list[list[str]]:
    return [[n.name, n.kind, n.target, n.kernel or "", n.buffer or "", ", ".join(n.frees)] for n in fx.nodes]


_FX_HEADERS = ["node", "kind", "target", "kernel", "buffer", "wrapper frees after it"]


@rich_of.register
def _(fx: WrapperFx) -> Any:
    if not fx.built:
        return Text(repr(fx), style="yellow")
    table = Table(title=repr(fx))
    for column in _FX_HEADERS:
        table.add_column(column)
    for row in _fx_rows(fx):
        table.add_row(*row)
    return Group(table, Syntax(fx.code, "python", line_numbers=True))


@html_of.register
def _(fx: WrapperFx) -> str:
    if not fx.built:
        return f"<div><b>{html.escape(repr(fx))}</b></div>"
    return (f"<div><b>{html.escape(repr(fx))}</b>" + table_html(_FX_HEADERS, _fx_rows(fx))
            + code_html(fx.code, "python") + "</div>")


def _head(text: str) -> tuple[str, int]:
    lines = text.splitlines()
    return "\n".join(lines[:SHOWN_LINES]), max(0, len(lines) - SHOWN_LINES)


def _meta_rows(ir: KernelIR) -> list[list[str]]:
    keys = ("registers", "spills", "shared_memory", "num_warps", "num_stages", "target")
    return [[key, str(ir.meta.get(key))] for key in keys if ir.meta.get(key) is not None]


@rich_of.register
def _(ir: KernelIR) -> Any:
    meta = Table.grid(padding=(0, 1))
    for key, value in _meta_rows(ir):
        meta.add_row(key, value)
    parts: list[Any] = [Text(repr(ir), style="bold"), meta, *[Text(f"note: {n}", style="yellow") for n in ir.notes]]
    for stage, text in ir.stages.items():
        shown, more = _head(text)
        shown_note = f", first {SHOWN_LINES} shown" if more else ""
        parts.append(Text(f"{stage} ({len(text.splitlines())} lines{shown_note})", style="bold"))
        parts.append(Syntax(shown, "llvm" if stage == "llir" else "text", line_numbers=True))
    return Group(*parts)


@html_of.register
def _(ir: KernelIR) -> str:
    notes = "".join(f"<div>note: {html.escape(n)}</div>" for n in ir.notes)
    stages = []
    for stage, text in ir.stages.items():
        shown, more = _head(text)
        lexer = LlvmLexer if stage == "llir" else TextLexer
        code = highlight(shown, lexer(), HtmlFormatter(noclasses=True, linenos="inline"))
        tail = f"<div>... {more} more lines (k.ir.stages[{stage!r}])</div>" if more else ""
        stages.append(f"<details><summary>{stage} ({len(text.splitlines())} lines)</summary>{code}{tail}</details>")
    return (f"<div><b>{html.escape(repr(ir))}</b>" + table_html(["resource", "value"], _meta_rows(ir)) + notes
            + "".join(stages) + "</div>")
