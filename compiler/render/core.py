"""One rendering function per stage class, for terminals (rich) and notebooks (HTML).

HTML uses pygments with inline styles (no stylesheet), so it renders the same in JupyterLab, VS Code
and nbconvert; every trace string is escaped.
"""

from __future__ import annotations

import html
import json
from typing import Any, Iterable, Sequence

from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import CppLexer, PythonLexer, TextLexer
from rich.console import Group
from rich.panel import Panel
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text
from rich.tree import Tree

from ..model import slots
from ..model.compilation import Compilation
from ..model.formatting import where
from ..model.kernel_facts import launch_facts, raw_meta
from ..model.provenance import ProvenanceReport
from ..model.slots import html_of, rich_of
from ..model.stages import FusedGroup, FxNode, FxStage, GraphCapture, Kernel, LoopIRNode, Wrapper

_LEXERS = {"cpp": ("cpp", CppLexer), "triton": ("python", PythonLexer), "template": ("python", PythonLexer),
           "extern": ("python", PythonLexer), "python": ("python", PythonLexer), "text": ("text", TextLexer)}
_MAX_ROWS = 60


def _kernel_lines(kernel: Kernel) -> str:
    libraries = kernel.graph.library_files if kernel.graph is not None else {}
    return ", ".join(where(u, libraries) for u in kernel.user_lines)


# ------------------------------------------------------------------------------------------ rich


@rich_of.register
def _(obj: object) -> Any:
    return Text(repr(obj))


@rich_of.register
def _(node: FxNode) -> Any:
    text = Text(f"{node.name}", style="bold")
    text.append(f" = {node.target}{node.args}", style="cyan")
    if node.shape is not None:
        text.append(f"  {node.dtype} {list(node.shape)}", style="dim")
    if node.user_line:
        text.append(f"  @ {where(node.user_line)}", style="green")
    return text


@rich_of.register
def _(stage: FxStage) -> Any:
    table = Table(title=f"{stage.stage} graph ({len(stage.nodes)} nodes)", show_lines=False)
    for column in ("node", "op", "target", "shape", "user line", "links"):
        table.add_column(column)
    for node in stage.nodes[:_MAX_ROWS]:
        links = node.fx if stage.stage == "post_grad" else node.post_grad
        table.add_row(node.name, node.op, node.target, f"{node.dtype or ''} {node.shape or ''}".strip(),
                      where(node.user_line), ", ".join(links + node.kernels))
    if len(stage.nodes) > _MAX_ROWS:
        table.caption = f"... {len(stage.nodes) - _MAX_ROWS} more nodes"
    return table


@rich_of.register
def _(node: LoopIRNode) -> Any:
    head = Text(f"{node.name} ", style="bold")
    head.append(node.kind, style="magenta")
    head.append(f"  ranges {dict((str(k), str(v)) for k, v in node.ranges.items())}", style="dim")
    head.append(f"  -> {'eliminated' if node.eliminated else node.group}", style="yellow")
    lines = [head, Text(f"  from {', '.join(node.origins)}; reads {', '.join(node.reads)}", style="dim")]
    lines += [Text(f"  {name} = {expr}") for name, expr in node.indexing.items()]
    return Group(*lines)


@rich_of.register
def _(group: FusedGroup) -> Any:
    return Text(f"{group.name} [{group.kind}] nodes={group.nodes} -> kernels={group.kernels}")


@rich_of.register
def _(kernel: Kernel) -> Any:
    lexer = _LEXERS.get(kernel.language, _LEXERS["text"])[0]
    marked = set(kernel.line_nodes)
    syntax = Syntax(kernel.source, lexer, line_numbers=True, highlight_lines=marked, word_wrap=False)
    prov = Table.grid(padding=(0, 1))
    prov.add_row("group", str(kernel.group))
    prov.add_row("post-grad nodes", ", ".join(kernel.post_grad_nodes))
    prov.add_row("fx nodes", ", ".join(kernel.fx_nodes))
    prov.add_row("user lines", _kernel_lines(kernel))
    if kernel.provenance_note:
        prov.add_row("provenance note", kernel.provenance_note)
    if kernel.ir is not None:
        prov.add_row("Triton IR", repr(kernel.ir))
    facts = launch_facts(kernel.meta)
    launch = Table("launch", "", box=None, padding=(0, 1), show_header=False)
    for label, value in facts:
        launch.add_row(Text(label, style="dim"), value)
    parts = [prov, launch, syntax] if facts else [prov, syntax]
    return Panel(Group(*parts), title=f"{kernel.id} ({kernel.language})", expand=False)


@rich_of.register
def _(wrapper: Wrapper) -> Any:
    return Syntax(wrapper.source, "python", line_numbers=True)


@rich_of.register
def _(graph: GraphCapture) -> Any:
    return _graph_tree(graph, Tree(Text(repr(graph), style="bold")), full=True)


def _graph_tree(graph: GraphCapture, tree: Tree, full: bool) -> Tree:
    tree.add(rich_of(graph.fx) if full else Text(repr(graph.fx)))
    tree.add(rich_of(graph.post_grad) if full else Text(repr(graph.post_grad)))
    ir = tree.add(Text(f"loop IR ({len(graph.loop_ir)} nodes)"))
    for node in graph.loop_ir:
        ir.add(rich_of(node))
    fused = tree.add(Text(f"fused ({len(graph.fused)} groups)"))
    for group in graph.fused:
        fused.add(rich_of(group))
    for reason in graph.not_fused[:10]:
        fused.add(Text(f"not fused: {reason.node1} + {reason.node2}: {reason.reason}", style="dim"))
    kernels = tree.add(Text(f"kernels ({len(graph.kernels)})"))
    for kernel in graph.kernels:
        kernels.add(rich_of(kernel))
    tree.add(Text(f"wrapper: {repr(graph.wrapper)}"))
    if graph.features:
        systems = tree.add(Text(f"Inductor systems ({len(graph.features)} findings)"))
        for use in graph.features:
            systems.add(Text(repr(use)))
    if graph.wrapper.fx is not None:
        tree.add(Text(f"wrapper as FX: {repr(graph.wrapper.fx)}"))
    if graph.memory is not None:
        tree.add(rich_of(graph.memory) if full else Text(f"memory: {repr(graph.memory)}"))
    tune = tree.add(Text(f"autotune ({len(graph.autotune)} records)"))
    for rec in graph.autotune[:20]:
        tune.add(Text(f"{'*' if rec.chosen else ' '} {rec.kernel}: {rec.choice} {rec.time_ms:.4f} ms"))
    return tree


@rich_of.register
def _(c: Compilation) -> Any:
    tree = Tree(Text(repr(c), style="bold"))
    info = tree.add(Text("settings"))
    info.add(f"torch {c.torch}, triton {c.triton}, {c.device_name}")
    info.add(f"toggles: {c.toggles or 'none'}; inductor overrides: {c.inductor_overrides or 'none'}")
    info.add("timings (torch's own timers, nested, so they overlap; the flat breakdown: c.compile_time): "
             + ", ".join(f"{k} {v:.3f}s" for k, v in c.timings.items() if v))
    if c.dynamo:
        tree.add(rich_of(c.dynamo))
    for graph in c.graphs:
        _graph_tree(graph, tree.add(Text(repr(graph), style="bold")), full=False)
    return tree


def _provenance_rows(report: ProvenanceReport) -> list[list[str]]:
    return [[k.graph, k.kernel, k.status, ", ".join(k.gaps), k.note or ""] for k in report.kernels
            if k.status != "linked"]


_PROVENANCE_HEADERS = ["graph", "kernel", "status", "lacks", "note"]
_SHARED_HEADERS = ["graph", "post-grad node", "kernels", "why several kernels list it"]


def _shared_rows(report: ProvenanceReport) -> list[list[str]]:
    return [[s.graph, s.node, ", ".join(s.kernels), s.explanation] for s in report.shared]


@rich_of.register
def _(report: ProvenanceReport) -> Any:
    table = Table(title=repr(report), show_lines=False)
    for column in _PROVENANCE_HEADERS:
        table.add_column(column)
    for row in _provenance_rows(report):
        table.add_row(*row)
    if not report.shared:
        return table
    shared = Table(title="nodes listed by several kernels", show_lines=False)
    for column in _SHARED_HEADERS:
        shared.add_column(column)
    for row in _shared_rows(report):
        shared.add_row(*row)
    return Group(table, shared)


# ------------------------------------------------------------------------------------------ HTML


def code_html(source: str, language: str) -> str:
    lexer = _LEXERS.get(language, _LEXERS["text"])[1]()
    formatter = HtmlFormatter(noclasses=True, linenos="inline", style="default", nobackground=False)
    return highlight(source, lexer, formatter)


def rich_table(title: str | None, columns: Sequence[str], rows: Iterable[Sequence[str]]) -> Table:
    """A plain rich table: its columns, then its rows (the terminal twin of ``table_html``)."""
    table = Table(title=title)
    for column in columns:
        table.add_column(column)
    for row in rows:
        table.add_row(*row)
    return table


def table_html(headers: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    head = "".join(f"<th style='text-align:left'>{html.escape(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


@html_of.register
def _(node: FxNode) -> str:
    return f"<code>{html.escape(str(rich_of(node)))}</code>"


@html_of.register
def _(stage: FxStage) -> str:
    rows = [[n.name, n.op, n.target, f"{n.dtype or ''} {n.shape if n.shape is not None else ''}".strip(),
             where(n.user_line), ", ".join(n.kernels)] for n in stage.nodes]
    return (f"<details open><summary>{html.escape(repr(stage))}</summary>"
            + table_html(["node", "op", "target", "shape", "user line", "kernels"], rows) + "</details>")


@html_of.register
def _(node: LoopIRNode) -> str:
    rows = [[k, str(v)] for k, v in node.indexing.items()]
    return (f"<div><b>{html.escape(repr(node))}</b>" + table_html(["index", "expression"], rows)
            + code_html(node.body, "text") + "</div>")


@html_of.register
def _(group: FusedGroup) -> str:
    return f"<code>{html.escape(repr(group))}</code>"


@html_of.register
def _(kernel: Kernel) -> str:
    lexer = _LEXERS.get(kernel.language, _LEXERS["text"])[0]
    prov = table_html(["group", "post-grad nodes", "fx nodes", "user lines", "provenance note"],
                  [[str(kernel.group), ", ".join(kernel.post_grad_nodes), ", ".join(kernel.fx_nodes),
                    _kernel_lines(kernel), kernel.provenance_note or ""]])
    ir = f"<details><summary>Triton IR</summary>{html_of(kernel.ir)}</details>" if kernel.ir is not None else ""
    facts = launch_facts(kernel.meta)
    launch = table_html(["launch", "value"], [list(row) for row in facts]) if facts else ""
    rest = raw_meta(kernel.meta)
    raw = (f"<details><summary>raw meta</summary><pre>{html.escape(json.dumps(rest, indent=1, default=str))}</pre>"
           "</details>") if rest else ""
    return (f"<div><b>{html.escape(kernel.id)}</b> ({html.escape(kernel.language)})" + prov + launch + raw
            + code_html(kernel.source, lexer) + ir + "</div>")


@html_of.register
def _(wrapper: Wrapper) -> str:
    return code_html(wrapper.source, "python")


@html_of.register
def _(graph: GraphCapture) -> str:
    parts = [f"<h4>{html.escape(repr(graph))}</h4>", html_of(graph.fx), html_of(graph.post_grad),
             "<details><summary>loop IR</summary>" + "".join(html_of(n) for n in graph.loop_ir) + "</details>",
             "<details><summary>fused groups</summary>" + "".join(html_of(g) + "<br>" for g in graph.fused) + "</details>",
             "<details open><summary>kernels</summary>" + "".join(html_of(k) for k in graph.kernels) + "</details>",
             "<details><summary>wrapper</summary>" + html_of(graph.wrapper) + "</details>"]
    if graph.features:
        parts.append(table_html(["system", "kernel", "what it did", "nodes"],
                            [[f.system, f.kernel or "", f.summary, ", ".join(f.nodes)] for f in graph.features]))
    if graph.wrapper.fx is not None:
        parts.append("<details><summary>wrapper as FX</summary>" + html_of(graph.wrapper.fx) + "</details>")
    if graph.memory is not None:
        parts.append("<details><summary>memory</summary>" + html_of(graph.memory) + "</details>")
    if graph.autotune:
        parts.append(table_html(["kernel", "choice", "ms", "chosen"],
                            [[a.kernel, a.choice, f"{a.time_ms:.4f}", "*" if a.chosen else ""] for a in graph.autotune]))
    return "<div>" + "".join(parts) + "</div>"


@html_of.register
def _(report: ProvenanceReport) -> str:
    shared = table_html(_SHARED_HEADERS, _shared_rows(report)) if report.shared else ""
    return (f"<div><b>{html.escape(repr(report))}</b>" + table_html(_PROVENANCE_HEADERS, _provenance_rows(report))
            + shared + "</div>")


@slots.html_summary.fill
def html_summary(c: Compilation) -> str:
    """One table of what was compiled and how big each graph came out: cheap for any model size."""
    head = table_html(["function", "device", "torch", "toggles", "total time"],
                  [[c.function, c.device_name, c.torch, str(c.toggles or "none"), f"{c.timings.get('total', 0):.2f}s"]])
    graphs = table_html(["graph", "kind", "FX nodes", "post-grad nodes", "loop-IR nodes", "fused groups", "kernels"],
                    [[g.id, g.kind, *(n[stage] for stage in ("fx", "post_grad", "loop_ir", "fused", "kernels"))]
                     for g, n in ((g, g.counts()) for g in c.graphs)])
    return head + graphs


@html_of.register
def _(c: Compilation) -> str:
    dynamo = f"<details><summary>Dynamo</summary>{html_of(c.dynamo)}</details>" if c.dynamo else ""
    return "<div>" + html_summary(c) + dynamo + "".join(html_of(g) for g in c.graphs) + "</div>"
