"""``python -m explorer bisect SCRIPT``: ``explorer.bisect`` on a program a script defines, printed with rich.

The script is run as ``python SCRIPT`` would run it (its folder first on the import path, under a name that is
not ``__main__``, so an ``if __name__ == "__main__":`` block does not run) and must leave at module level:

- ``fn``: the function or nn.Module to bisect (``--fn NAME`` for another name);
- ``inputs``: its positional inputs, a tuple or list (one tensor is one input), or a function of no
  arguments that returns them (``--inputs NAME``); optionally ``kwargs``, a dict;
- with ``--check NAME``: a function ``NAME(compiled_output, eager_output) -> bool``.

Exit status: 0 when a culprit is found, 1 when none is (the program matches, or nothing was blamed), 2 on bad
input (no such script, a missing name, a check that raised, a bad option), with a one-line message. torch is
imported only when the command runs.
"""

from __future__ import annotations

import argparse
import json
import runpy
import sys
from pathlib import Path
from typing import Any


def _plain(text: str) -> str:
    """A docstring as a terminal prints it: without reStructuredText's literal marks."""
    return text.replace("``", "")


def add_parser(sub: Any) -> None:
    """The ``bisect`` subcommand, on the subparsers of ``python -m explorer``."""
    lines = _plain(__doc__).splitlines()
    bisect = sub.add_parser("bisect", help="what made a script's compiled function differ from eager (or slower)",
                            description=lines[0], epilog="\n".join(lines[2:]),
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    bisect.add_argument("script", help="a Python file defining fn and inputs at module level")
    bisect.add_argument("--fn", default="fn", metavar="NAME", help="the script's function or module (default: fn)")
    bisect.add_argument("--inputs", default="inputs", metavar="NAME",
                        help="the script's inputs, or a function returning them (default: inputs)")
    bisect.add_argument("--check", default="eager", metavar="CHECK",
                        help="eager (default: every output within tolerance of eager), slower (with --slower-than), "
                             "or the name of the script's check(compiled, eager) -> bool")
    bisect.add_argument("--slower-than", metavar="BASELINE",
                        help="the baseline of --check slower: a JSON config ('{\"cpp.simdlen\": null}') or a saved trace")
    bisect.add_argument("--threshold", type=float, default=1.2, help="--check slower: how many times the baseline's "
                                                                      "time is slower (default 1.2)")
    bisect.add_argument("--rtol", type=float, help="relative tolerance for every output (default: per dtype)")
    bisect.add_argument("--atol", type=float, help="absolute tolerance for every output (default: per dtype)")
    bisect.add_argument("--seed", type=int, default=0, help="torch.manual_seed of eager and of every trial")
    bisect.add_argument("--no-fusion", action="store_true", help="stop after torch's bisector and the config")
    bisect.add_argument("--workers", type=int, metavar="N", help="run each trial in one of N worker processes "
                                                                  "(default: in this process)")
    bisect.add_argument("--timeout", type=float, metavar="S", help="with --workers: seconds a trial may take")
    bisect.set_defaults(run=run)


def _script(path: str) -> dict[str, Any]:
    script = Path(path)
    if not script.is_file():
        raise ValueError(f"no such script: {path}")
    sys.path.insert(0, str(script.resolve().parent))
    try:
        return runpy.run_path(str(script), run_name="__explorer_bisect__")
    except (Exception, SystemExit) as error:  # the user's script: its failure is bad input, said in one line
        raise ValueError(f"{path} raised {type(error).__name__} when run: {error}") from None


def _named(namespace: dict[str, Any], name: str, path: str, what: str) -> Any:
    if name not in namespace:
        raise ValueError(f"{path} defines no {name!r} at module level ({what})")
    return namespace[name]


def _slower_than(text: str | None) -> Any:
    if text is None or Path(text).is_file():
        return text
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        raise ValueError(f"--slower-than {text!r} is neither a saved trace nor a JSON config") from None


def run(args: argparse.Namespace) -> int:
    from rich.console import Console

    namespace = _script(args.script)
    fn = _named(namespace, args.fn, args.script, "the function to bisect")
    if not callable(fn):
        raise ValueError(f"{args.fn} in {args.script} is a {type(fn).__name__}, not a function or module")
    inputs = _named(namespace, args.inputs, args.script, "its inputs")
    inputs = inputs() if callable(inputs) else inputs
    inputs = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
    kwargs = namespace.get("kwargs") or {}
    check: Any = None
    if args.check == "slower":
        check = "slower"
    elif args.check != "eager":
        check = _named(namespace, args.check, args.script, "the check")

    import explorer

    result = explorer.bisect(fn, *inputs, kwargs=kwargs, check=check, rtol=args.rtol, atol=args.atol, seed=args.seed,
                             fusion=not args.no_fusion, slower_than=_slower_than(args.slower_than),
                             threshold=args.threshold, workers=args.workers, timeout=args.timeout)
    Console().print(result)
    if result.status in ("check raised", "unavailable"):
        raise ValueError(result.message.splitlines()[0])
    return 0 if result.found else 1
