"""``python -m explorer demo``: compile the built-in example and print every stage in the terminal."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rich.console import Console
from rich.text import Text

from compiler.render import table_rows as tables


def _demo(args: argparse.Namespace) -> int:
    import torch

    import explorer
    from explorer.demo import example

    console = Console()
    model, x = example()
    # the compile shows its own progress on a terminal (explorer/progress.py)
    console.print("compiling the demo block with torch.compile + Inductor (CPU compiles take ~20 s)")
    with torch.no_grad():
        c = explorer.compile(model, x)
    console.print(c)
    for graph in c.graphs:
        console.rule(f"{graph.id}: Dynamo FX graph")
        console.print(graph.fx)
        console.rule(f"{graph.id}: post-grad graph")
        console.print(graph.post_grad)
        console.rule(f"{graph.id}: wrapper")
        console.print(graph.wrapper)
    if args.save:
        path = c.save(args.save)
        console.print(f"trace saved to {path}")
    if args.html:
        try:
            path = explorer.to_html(c, args.html)
        except ImportError as error:
            console.print(f"[yellow]no HTML written: {error}[/yellow]")
        else:
            console.print(f"explorer view written to {Path(path).resolve()}")
    return 0


def _show(args: argparse.Namespace, console: Console | None = None) -> int:
    """A saved trace: its summary, then per graph the kernels table (with time and error when the trace
    holds a profile / numerics report) and each autotuned kernel's choices; paged when longer than the
    terminal. A saved TraceSet, or a TORCH_TRACE directory or log (read as a TraceSet), prints its ranks."""
    import explorer
    from compiler.render import table_rows as tables
    from compiler.render import tables as render_tables

    console = console or Console()
    path = Path(args.trace)
    c = explorer.load_trace(path) if path.is_dir() or path.suffix == ".log" else explorer.load(path)
    if isinstance(c, explorer.TraceSet):
        console.print(c)
        return 0
    profile = c.profiles[-1] if c.profiles else None
    numerics = c.numerics[-1] if c.numerics else None
    parts: list = [c]
    for graph in c.graphs:
        rows = tables.select(tables.kernel_rows(graph, profile, numerics), args.sort, contains=args.filter,
                             language=args.language)
        parts.append(render_tables.kernels_table(rows, f"{graph.id} kernels ({len(rows)} of {len(graph.kernels)})"))
        parts += [render_tables.autotune_table(group) for group in tables.autotune_groups(graph.autotune)]
    with console.capture() as captured:
        for part in parts:
            console.print(part)
    text = captured.get()
    if console.is_terminal and not args.no_pager and text.count("\n") > console.height:
        with console.pager(styles=True):
            console.out(Text.from_ansi(text), end="")
    else:
        console.out(Text.from_ansi(text), end="")
    return 0


def _trace(args: argparse.Namespace) -> int:
    """A TORCH_TRACE directory: the ranks and where they diverge; one compile's stages with --compile."""
    import explorer

    console = Console()
    traces = explorer.load_trace(args.path)
    if args.compile is None:
        console.print(traces if args.rank is None else traces[args.rank])
        return 0
    c = traces[args.rank if args.rank is not None else next(iter(traces.ranks))][args.compile]
    console.print(c)
    for graph in c.graphs:
        console.rule(f"{graph.id}: Dynamo FX graph")
        console.print(graph.fx)
        for kernel in graph.kernels:
            console.print(kernel)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m explorer", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="compile the built-in example and print every stage")
    demo.add_argument("--save", metavar="PATH", help="also save the trace as JSON")
    demo.add_argument("--html", metavar="PATH", default="out/demo.html", help="write the explorer view as HTML")
    demo.set_defaults(run=_demo)
    show = sub.add_parser("show", help="print a saved trace or TraceSet, or a TORCH_TRACE directory")
    show.add_argument("trace")
    show.add_argument("--sort", choices=tables.KERNEL_SORTS, default="id",
                      help="order of the kernels table (time and error: largest first)")
    show.add_argument("--filter", default="", metavar="TEXT", help="only kernels whose id or user line has TEXT")
    show.add_argument("--language", help="only kernels of this language (triton, cpp, extern, template)")
    show.add_argument("--no-pager", action="store_true", help="print everything even when longer than the terminal")
    show.set_defaults(run=_show)
    trace = sub.add_parser("trace", help="print a TORCH_TRACE directory (one log per rank): ranks, divergence, stages")
    trace.add_argument("path", help="the directory TORCH_TRACE pointed at, or one log in it")
    trace.add_argument("--rank", help="only this rank")
    trace.add_argument("--compile", metavar="ID", help="print this compile id's stages (e.g. 0/1)")
    trace.set_defaults(run=_trace)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
