"""Compile the built-in example or read a saved trace, and print it in the terminal.

  python -m explorer demo            compile the example; the answer on one screen (--full: every stage)
  python -m explorer show PATH       a saved trace: its summary and kernels table (--full, --html PATH)
  python -m explorer trace DIR       a TORCH_TRACE directory: its ranks and where they diverge
  python -m explorer diff A B        two saved traces of the same code: toggles, kernels paired by FX node
  python -m explorer bisect SCRIPT   what made SCRIPT's compiled fn differ from eager (or slower)
"""

# Each command imports what it needs inside it: ``--help`` imports no torch, and ``show`` of a saved
# trace no torch either (a trace is JSON; reading and printing it needs the model and rich only).
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

PROG = "python -m explorer"


def _demo(args: argparse.Namespace) -> int:
    import torch
    from rich.console import Console
    from rich.text import Text

    import explorer
    from compiler.api import compact_view
    from explorer.demo import example

    console = Console()
    model, x = example()
    # the compile shows its own progress on a terminal (explorer/progress.py)
    console.print("compiling the demo block (torch.compile + Inductor; the first CPU compile in a process takes 10-50 s)")
    with torch.no_grad():
        c = explorer.compile(model, x)
    c.profile(runs=10)
    console.print(c if args.full else compact_view(c))
    if args.full:
        for graph in c.graphs:
            for title, stage in (("Dynamo FX graph", graph.fx), ("post-grad graph", graph.post_grad),
                                 ("wrapper", graph.wrapper)):
                console.rule(f"{graph.id}: {title}")
                console.print(stage)
    hints = []
    if args.html:
        hints.append((f"open {_as_typed(explorer.to_html(c, args.html))}", "every stage, linked, in a browser"))
    if args.save:
        hints.append((f"python -m explorer show {_as_typed(c.save(args.save))}", "the saved trace, any time"))
    hints += [("python -m explorer demo --full", "every stage in this terminal"),
              ("make lab", "the notebooks of examples/, 01_tour first"),
              ("python -m explorer show --help", "read a saved trace")]
    console.print(Text("\nnext:", style="bold"))
    for command, what in hints:  # a long command (a path) gets its own line: every line fits 80 columns
        text = f"  {command.ljust(32)}  {what}" if len(command) <= 32 else f"  {command}\n  {'':32}  {what}"
        console.print(text, highlight=False, soft_wrap=True)
    return 0


def _as_typed(path: str | Path) -> str:
    """A written file's path as the user would type it here: relative to the working directory when it is
    under it (short enough for one line), else absolute."""
    resolved = Path(path).resolve()
    return str(resolved.relative_to(Path.cwd().resolve())) if resolved.is_relative_to(Path.cwd().resolve()) else str(resolved)


def _show(args: argparse.Namespace, console: Console | None = None) -> int:
    """A saved trace: its summary, then per graph the kernels table (with time and error when the trace
    holds a profile / numerics report) and each autotuned kernel's choices; with ``--full`` the whole
    tree after them; paged when longer than the terminal. A saved TraceSet, or a TORCH_TRACE directory
    or log (read as a TraceSet), prints its ranks."""
    from rich.console import Console
    from rich.text import Text

    import explorer
    from compiler.api import autotune_groups, autotune_table, compact_view, kernel_rows, kernels_table, select_rows

    console = console or Console()
    path = Path(args.trace)
    c = explorer.load_trace(path) if path.is_dir() or path.suffix == ".log" else explorer.load(path)
    if args.html:
        written = c.to_html(args.html) if isinstance(c, explorer.TraceSet) else explorer.to_html(c, args.html)
        console.print(f"explorer view written to {Path(written).resolve()}", highlight=False)
    if isinstance(c, explorer.TraceSet):
        console.print(c)
        return 0
    profile = c.profiles[-1] if c.profiles else None
    numerics = c.numerics[-1] if c.numerics else None
    parts: list = [compact_view(c, kernels_shown=0)]
    for graph in c.graphs:
        rows = select_rows(kernel_rows(graph, profile, numerics), args.sort, contains=args.filter, language=args.language)
        parts.append(kernels_table(rows, f"{graph.id} kernels ({len(rows)} of {len(graph.kernels)})", width=console.width))
        parts += [autotune_table(group) for group in autotune_groups(graph.autotune)]
    if args.full:
        parts.append(c)
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
    from rich.console import Console

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


def _diff(args: argparse.Namespace) -> int:
    """Two saved traces of the same code (two toggles, two torch versions, a JIT and an AOT compile), as
    ``explorer.diff(a, b)`` prints them: the toggles that differ, stage counts, kernels paired by the FX
    nodes they compute and each changed pair's source diff (``--summary``: the first line only). Reading
    and pairing need no torch: a saved trace holds no outputs to compare."""
    from rich.console import Console

    import explorer

    for path in (args.a, args.b):
        if Path(path).is_dir():
            raise ValueError(f"{path} is a directory: diff compares two traces saved by c.save(path); "
                             f"`{PROG} trace {path}` prints a TORCH_TRACE directory")
    a, b = explorer.load(args.a), explorer.load(args.b)
    for path, c in ((args.a, a), (args.b, b)):
        if not isinstance(c, explorer.Compilation):
            raise ValueError(f"{path} is a {type(c).__name__}, not one compilation: diff compares two saved "
                             "compilations (c.save(path))")
    d = explorer.diff(a, b)
    Console().print(d.summary if args.summary else d, highlight=False)
    return 0


def build_parser() -> argparse.ArgumentParser:
    from compiler.api import KERNEL_SORTS  # the kernels table's sorts: no torch, the render room only

    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="\n".join(__doc__.splitlines()[2:]))
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="compile the built-in example and print the answer on one screen")
    demo.add_argument("--full", action="store_true", help="print every stage (graphs, kernels' source, wrapper)")
    demo.add_argument("--save", metavar="PATH", help="also save the trace as JSON")
    demo.add_argument("--html", metavar="PATH", default="out/demo.html",
                      help="write the explorer view as one HTML file (default: out/demo.html)")
    demo.set_defaults(run=_demo)
    show = sub.add_parser("show", help="print a saved trace or TraceSet, or a TORCH_TRACE directory")
    show.add_argument("trace", help="a file saved by c.save(), or a TORCH_TRACE directory or log")
    show.add_argument("--sort", choices=KERNEL_SORTS, default="id",
                      help="order of the kernels table (time and error: largest first)")
    show.add_argument("--filter", default="", metavar="TEXT", help="only kernels whose id or user line has TEXT")
    show.add_argument("--language", help="only kernels of this language (triton, cpp, extern, template)")
    show.add_argument("--full", action="store_true", help="also print every stage: guards, graphs, kernel sources")
    show.add_argument("--html", metavar="PATH", help="also write the explorer view as one HTML file")
    show.add_argument("--no-pager", action="store_true", help="print everything even when longer than the terminal")
    show.set_defaults(run=_show)
    trace = sub.add_parser("trace", help="print a TORCH_TRACE directory (one log per rank): ranks, divergence, stages")
    trace.add_argument("path", help="the directory TORCH_TRACE pointed at, or one log in it")
    trace.add_argument("--rank", help="only this rank")
    trace.add_argument("--compile", metavar="ID", help="print this compile id's stages (e.g. 0/1)")
    trace.set_defaults(run=_trace)
    diff = sub.add_parser("diff", help="what changed between two saved traces of the same code")
    diff.add_argument("a", help="the first trace (saved by c.save())")
    diff.add_argument("b", help="the second trace")
    diff.add_argument("--summary", action="store_true", help="only the first line: toggles and counts that changed")
    diff.set_defaults(run=_diff)
    from explorer.bisect_cli import add_parser as add_bisect  # no torch: it imports torch when it runs

    add_bisect(sub)
    return parser


# What a user can get wrong (a path, a file that is no trace, a rank or compile id): one line, exit 2.
USER_ERRORS = (OSError, ValueError, KeyError)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except USER_ERRORS as error:
        message = error.args[0] if isinstance(error, KeyError) and error.args else error
        if isinstance(error, FileNotFoundError):
            message = f"no such file or directory: {error.filename}"
        print(f"{PROG} {args.command}: {message}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
