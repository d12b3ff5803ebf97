"""``python -m explorer demo``: compile the built-in example and print every stage in the terminal."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rich.console import Console


def _demo(args: argparse.Namespace) -> int:
    import torch

    import explorer
    from explorer.demo import example

    console = Console()
    model, x = example()
    with console.status("compiling the demo block with torch.compile + Inductor (CPU compiles take ~20 s)..."):
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


def _show(args: argparse.Namespace) -> int:
    """A saved trace or TraceSet (JSON), or a TORCH_TRACE directory or log (read as a TraceSet)."""
    import explorer

    path = Path(args.trace)
    shown = explorer.load_trace(path) if path.is_dir() or path.suffix == ".log" else explorer.load(path)
    Console().print(shown)
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m explorer", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="compile the built-in example and print every stage")
    demo.add_argument("--save", metavar="PATH", help="also save the trace as JSON")
    demo.add_argument("--html", metavar="PATH", default="out/demo.html", help="write the explorer view as HTML")
    demo.set_defaults(run=_demo)
    show = sub.add_parser("show", help="print a saved trace or TraceSet, or a TORCH_TRACE directory")
    show.add_argument("trace")
    show.set_defaults(run=_show)
    trace = sub.add_parser("trace", help="print a TORCH_TRACE directory (one log per rank): ranks, divergence, stages")
    trace.add_argument("path", help="the directory TORCH_TRACE pointed at, or one log in it")
    trace.add_argument("--rank", help="only this rank")
    trace.add_argument("--compile", metavar="ID", help="print this compile id's stages (e.g. 0/1)")
    trace.set_defaults(run=_trace)
    args = parser.parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
