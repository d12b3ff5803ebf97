"""The compact terminal view of a compilation: the answer on one screen, 80 columns wide.

What a newcomer asks first: what was compiled, how each graph went from FX nodes to kernels, which
loop-IR nodes Inductor fused, and for each kernel its kind, its time (when the compilation holds a
profile) and the line of the user's code it came from; under CUDA graphs (``mode="reduce-overhead"``) how
each graph runs in them and why not, on whose line. The full tree (guards, every kernel's source, the
wrapper) stays ``rich.print(c)`` / ``--full`` away.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.console import Console, ConsoleOptions, Group, RenderResult
from rich.text import Text

from ..model.compilation import Compilation
from ..model.formatting import shorten, where
from ..model.stages import GraphCapture, Kernel
from . import call_tree, cudagraphs
from .fit import Column, Fitted

KERNELS_SHOWN = 12  # rows of the kernels table before "... N more"
FUSIONS_SHOWN = 6


def compact_view(c: Compilation, kernels_shown: int = KERNELS_SHOWN) -> Group:
    """The compilation in a few lines: a head line, per graph its stages' sizes, its fusions and its
    kernels (slowest first when ``c`` holds a profile), each with the user line it came from;
    ``kernels_shown=0`` leaves the kernels out (a caller printing its own kernels table)."""
    total = c.timings.get("total")
    served = sum(1 for g in c.graphs if g.cache == "served")
    head = _Head(Text(f"{c.function}", style="bold") + Text(f" on {c.device_name}"),
                 [f"torch {c.torch}"] + ([f"compiled in {total:.1f} s"] if total else [])
                 + ([f"{served} of {len(c.graphs)} graphs served warm"] if served else []))
    parts: list[Any] = [head]
    if c.export is not None:  # an AOTInductor package (explorer.export)
        ranges = ", ".join(f"{s} in [{lo}, {hi}]" for s, (lo, hi) in c.export.range_constraints.items())
        parts.append(Text(f"torch.export + AOTInductor ({ranges or 'static shapes'}): {c.export.package_path}"))
    dynamo = c.dynamo
    if dynamo.graph_breaks:
        first = dynamo.graph_breaks[0]
        parts.append(Text(f"{_counted(len(dynamo.graph_breaks), 'graph break')}; first: {first.reason} at "
                          f"{where(first.user_line) or '?'}", style="yellow"))
    for frame in dynamo.skipped_frames:
        parts.append(Text(f"{frame.function} ran eagerly (Dynamo gave up on it): {frame.skipped}", style="yellow"))
    parts += _notes(c)
    if not c.graphs:
        parts.append(Text("nothing was compiled", style="yellow"))
    profile = c.profiles[-1] if c.profiles else None
    for graph in c.graphs:
        parts.append(Text(f"\n{graph.id} {graph.kind}: ", style="bold") + Text(_sizes(graph)))
        parts += _fusions(graph)
        if graph.cudagraphs is not None:
            parts += cudagraphs.graph_lines(graph.cudagraphs)
        if kernels_shown:
            parts.append(_kernels(c, graph, profile, kernels_shown))
    times = cudagraphs.time_text(c.cudagraphs) if any(g.cudagraphs is not None for g in c.graphs) else None
    if times:
        parts.append(Text(f"\n{times}", style="bold"))
    tree = call_tree.rendered(profile) if profile is not None and kernels_shown else None
    if tree is not None:
        parts += [Text(""), tree]
    return Group(*parts)


@dataclass
class _Head:
    """The head line: what was compiled, then its phrases joined by " · "; on a narrow terminal it breaks
    between phrases only, so no figure is parted from its label."""

    lead: Text
    phrases: list[str]

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        line = self.lead.copy()
        for phrase in self.phrases:
            if line.cell_len + len(f" · {phrase}") > options.max_width:
                yield line
                line = Text(f"  {phrase}")
            else:
                line.append(f" · {phrase}")
        yield line


def _notes(c: Compilation) -> list[Text]:
    """A failed capture hook, each on its line (a stage may lack what that hook records); torch's own
    warnings, kept off stderr during the compile, as one line that says where they are."""
    failed = [note for note in c.notes if note.kind == "hook failed"]
    said = len(c.notes) - len(failed)
    lines = [Text(f"{note} (the compile went on without it)", style="yellow") for note in failed]
    if said:
        lines.append(Text(f"torch said {_counted(said, 'thing')} during the compile: c.notes", style="dim"))
    return lines


def _counted(n: int, noun: str) -> str:
    """``1 kernel``, ``2 kernels``."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _sizes(graph: GraphCapture) -> str:
    return (f"{len(graph.fx.nodes)} FX -> {len(graph.post_grad.nodes)} post-grad -> {len(graph.loop_ir)} loop-IR "
            f"-> {len(graph.fused)} fused -> {_counted(len(graph.kernels), 'kernel')}")


@dataclass
class _Fusion:
    """One fused group on one line: its node list is cut to fit the terminal, its kernel ids never (people
    copy them into ``g.kernel(...)``)."""

    nodes: str
    kernels: str

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        room = options.max_width - len(f"  fused  -> {self.kernels}")
        yield Text(f"  fused {self.nodes if len(self.nodes) <= room else shorten(self.nodes, max(room, 4))} "
                   f"-> {self.kernels}")


def _fusions(graph: GraphCapture) -> list[Any]:
    """The groups where Inductor fused several loop-IR nodes into one kernel."""
    fused = [g for g in graph.fused if len(g.nodes) > 1]
    lines: list[Any] = [_Fusion("+".join(g.nodes), ", ".join(g.kernels) or "(no kernel)")
                        for g in fused[:FUSIONS_SHOWN]]
    if len(fused) > FUSIONS_SHOWN:
        more = _counted(len(fused) - FUSIONS_SHOWN, "more fused group")
        lines.append(Text(f"  ... {more} (g.fused)", style="dim"))
    return lines


def _kernels(c: Compilation, graph: GraphCapture, profile: Any, shown: int) -> Fitted:
    """Kernel, kind, time, whether a CUDA graph holds it (a graph under CUDA graphs on a GPU) and the user's line
    on one line each where the terminal allows: the line's source text is cut first, then an id too long for
    what is left goes on to a second line (never cut)."""
    timed = profile is not None
    rows = list(graph.kernels)
    if timed:
        rows.sort(key=lambda k: -profile.ms(k))
    rows = rows[:shown]
    columns = [Column("kernel", [k.id for k in rows], least=24, cut_from=1, cut="id"),
               Column("kind", [k.language for k in rows])]
    if timed:
        columns.append(Column("ms", [f"{profile.ms(k):.3f}" for k in rows], "right"))
    if graph.cudagraphs is not None and graph.cudagraphs.device.startswith("cuda"):
        held = [graph.cudagraphs.kernel_state(k.id)[0] for k in rows]
        columns.append(Column("CUDA graph", ["yes" if h else "no" for h in held]))
    columns.append(Column("your line", [_line(c, k) for k in rows], least=16))
    more = len(graph.kernels) - len(rows)
    caption = f"... {_counted(more, 'more kernel')} ({graph.id}.kernels)" if more > 0 else None
    return Fitted(columns, caption=caption, show_edge=False)


def _line(c: Compilation, kernel: Kernel) -> str:
    """``file.py:12  source text`` of the kernel's first line that is neither torch's nor the standard library's:
    your line, or a library model's own (else its first line)."""
    own = [u for u in kernel.user_lines if c.library_files.get(u[0]) not in ("torch", "python")] or kernel.user_lines[:1]
    if not own:
        return kernel.provenance_note or "-"
    file, line = own[0]
    text = (c.sources.get(file) or {}).get(line, "").strip()
    return f"{where((file, line))}  {text}".rstrip()
