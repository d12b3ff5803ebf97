"""``%%compile``: compile a notebook cell as one torch.compile region and show every stage.

    %load_ext explorer

    %%compile --deterministic --name mm
    y = torch.relu(x @ w + b).sum(-1)

The cell becomes a function (explorer/cell.py): tensors it reads are its inputs, names it assigns
are written back to the notebook after the compiled call succeeded. The compilation is recorded in
the process's Session (``explorer.Session.default()``), so the toggle panel of the view it shows can
switch configurations, served from the session when one was compiled before.

``--sweep native_matmul,max_autotune`` compiles the cell at every on/off combination of those toggles
(the other flags fixed), each point in its own worker process (``explorer.sweep``), and shows the
table; ``--name`` keeps the Sweep.

``--export`` exports the cell with torch.export and compiles it with AOTInductor into a ``.pt2``
package (``explorer.export``): the view shows the exported program's stages, the C++ wrapper and the
package's kernels; ``--dynamic`` makes dim 0 of every tensor input dynamic.

``--mode reduce-overhead`` compiles with torch.compile's mode (there: CUDA graphs, each graph's partitions,
skips and tree events in the view; docs/cudagraphs.md); flags and ``--config`` win over a mode's settings.

``%%watch [name]`` runs the cell as ordinary Python inside ``explorer.watch()`` (bound to ``name``, default
``w``, so the cell marks its steps) and shows what torch.compile did over them (docs/watch.md).

``--trace`` runs the cell as ordinary Python instead and captures every torch.compile'd call it
makes (models that are already wrapped in torch.compile, or wrapped inside the cell).

Errors stay short: option misuse is IPython's UsageError; a syntax error, an undefined name or a
failed compile is a one-paragraph message naming the stage; the namespace and earlier
compilations are left as they were.
"""

from __future__ import annotations

import itertools
import re
import time
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, line_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring
from IPython.display import display

from compiler import TOGGLES, CompileError, ToggleError, capture, capture_export
from compiler.api import Cancelled, did_you_mean, mode_settings, toggle_names_for

from . import cell as cells
from . import rerun, settings
from .cell_status import CellCancelled, CellFailed, StatusLine, error_summary, quiet_capture_warnings
from .session import Session

# Flag spellings people type; every other toggle is its name with dashes.
_FLAG_NAMES = {
    "loop_ordering_after_fusion": "loop-ordering",
    "use_block_ptr": "block-ptr",
    "coordinate_descent_tuning": "coordinate-descent",
}


def toggle_flags() -> dict[str, tuple[str, bool]]:
    """--flag -> (toggle name, value it sets). A toggle on by default gets a --no-... flag."""
    flags: dict[str, tuple[str, bool]] = {}
    for name in TOGGLES:
        stem = _FLAG_NAMES.get(name, name.replace("_", "-"))
        if settings.default_of(name) is True:
            flags[f"--no-{stem}"] = (name, False)
        else:
            flags[f"--{stem}"] = (name, True)
    return flags


def _parse_value(text: str) -> Any:
    lowered = text.strip().lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if lowered in ("none", "null"):
        return None
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def parse_config(args: Any) -> dict[str, Any]:
    """--mode, toggle flags and --config key=value pairs -> a config dict (UsageError when malformed or invalid);
    a flag or --config wins over the mode's value of the same toggle."""
    try:
        mode = toggle_names_for(mode_settings(getattr(args, "mode", None)))
    except ToggleError as error:
        raise UsageError(f"--mode: {error}") from None
    config: dict[str, Any] = {}
    for flag, (name, value) in toggle_flags().items():
        if getattr(args, _dest(flag)):
            config[name] = value
    for pair in args.config or []:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--config takes key=value (for example --config triton.cudagraphs=false), got {pair!r}")
        config[key.strip()] = _parse_value(value)
    given = set(config) | {TOGGLES[name].key for name in config if name in TOGGLES}
    config = {**{name: value for name, value in mode.items()
                 if name not in given and (name not in TOGGLES or TOGGLES[name].key not in given)}, **config}
    try:
        settings.normalize(config)
    except ToggleError as error:
        raise UsageError(str(error)) from None
    return config


def _dest(flag: str) -> str:
    return flag.lstrip("-").replace("-", "_")


def _check_device(device: str | None) -> None:
    if device is None:
        return
    import torch

    try:
        parsed = torch.device(device)
    except RuntimeError as error:
        raise UsageError(f"--device {device!r} is not a device: {error}") from None
    if parsed.type == "cuda" and not torch.cuda.is_available():
        raise UsageError(f"--device {device}: CUDA is not available on this machine (torch {torch.__version__})")


# Modes that each run the cell their own way: --export (torch.export + AOTInductor, one package),
# --sweep (a JIT torch.compile per point, in worker processes), --trace (the cell as plain Python).
# There is no export sweep and no traced sweep, and a sweep's points are static-shape captures.
_EXCLUSIVE_MODES = {
    "export": "--export compiles the cell once with torch.export and AOTInductor",
    "sweep": "--sweep compiles the cell with torch.compile once per point, in worker processes",
    "trace": "--trace runs the cell as plain Python and captures the torch.compile'd calls it makes",
}


def _refuse_combinations(args: Any) -> None:
    """UsageError for options that cannot run together. Checked before any mode starts, so that no mode
    runs in place of another with the rest of the line dropped (an ``--export --sweep`` cell must not
    turn into a JIT sweep)."""
    chosen = [mode for mode in _EXCLUSIVE_MODES if getattr(args, mode) not in (None, False)]
    if len(chosen) > 1:
        reasons = "; ".join(_EXCLUSIVE_MODES[mode] for mode in chosen)
        flags = " and ".join(f"--{mode}" for mode in chosen)
        raise UsageError(f"{flags} do not combine: {reasons}. Pick one per cell.")
    if args.sweep is not None and args.dynamic:
        raise UsageError("--sweep does not combine with --dynamic: each point of a sweep compiles with static shapes")


def _batch_dims(inputs: tuple[Any, ...]) -> tuple[Any, ...]:
    """``--export --dynamic``: dim 0 of every tensor input dynamic (torch.export infers its range)."""
    import torch

    return tuple({0: torch.export.Dim.AUTO} if isinstance(t, torch.Tensor) and t.dim() else None for t in inputs)


def _compile_args(fn: Any) -> Any:
    decorators = [
        argument("--device", default=None, help="Move the cell's tensor inputs to this device (cpu, cuda, cuda:1)."),
        argument("--config", action="append", metavar="KEY=VALUE",
                 help="Any toggle or raw Inductor key, e.g. --config triton.cudagraphs=false (repeatable)."),
        argument("--dynamic", action="store_true", help="Compile with dynamic shapes."),
        argument("--mode", default=None, metavar="MODE",
                 help="torch.compile's mode: reduce-overhead (CUDA graphs), max-autotune, ... (its Inductor "
                      "settings; the toggle flags and --config win over them)."),
        argument("--export", action="store_true",
                 help="torch.export the cell and compile it with AOTInductor into a .pt2 package (explorer.export)."),
        argument("--name", default=None, help="Also keep the Compilation in the notebook under NAME."),
        argument("--trace", action="store_true",
                 help="Run the cell as ordinary Python and capture every torch.compile'd call it makes."),
        argument("--quiet", action="store_true", help="Do not display the explorer view."),
        argument("--no-cache", action="store_true",
                 help="Capture cold: bypass every cache and store nothing (explorer.compile(cache=False)); "
                      "by default a cell captured before is served from the caches."),
        argument("--sweep", default=None, metavar="TOGGLE,TOGGLE",
                 help="Sweep these boolean toggles (every on/off combination, the other flags fixed), each point "
                      "in its own worker process, and show the sweep's table (explorer.sweep)."),
    ]
    for flag, (name, value) in toggle_flags().items():
        decorators.append(argument(flag, action="store_true", help=f"{name}={value}: {TOGGLES[name].description}"))
    for decorate in reversed(decorators):
        fn = decorate(fn)
    return magic_arguments()(fn)


@magics_class
class ExplorerMagics(Magics):
    """%%compile, %%watch and %explorer."""

    def __init__(self, shell: Any, session: Session | None = None) -> None:
        super().__init__(shell)
        self.session = session or Session.default()
        self._cell_numbers: dict[str, int] = {}  # cell text -> its number (see _number)
        self.views: list[Any] = []  # SessionViews shown by this shell (kept so their handlers stay alive)
        self.panel: Any = None
        self.cell_runs: dict[tuple[str, str, bool, str], rerun.CellRun] = {}  # cells that compiled, by code+options

    @cell_magic("compile")
    def compile_cell(self, line: str, cell: str) -> None:
        args = _parsed(self.compile_cell, line)
        _refuse_combinations(args)
        config = parse_config(args)
        _check_device(args.device)
        if args.name is not None and not args.name.isidentifier():
            raise UsageError(f"--name must be a Python identifier, got {args.name!r}")
        number = self._number(cell)
        name = args.name or f"cell{number}"
        if args.sweep is not None:
            self._sweep(cell, name, config, args, number)
            return
        if args.trace:
            from .trace import run_traced

            entries = run_traced(self, cell, name, config, args)
            if args.name is not None and entries:
                self.shell.user_ns[args.name] = entries[-1].compilation
            return
        self._compile(cell, name, config, args, number)

    def _number(self, cell: str) -> int:
        """The cell's number, which names it (``cell3``) and its synthetic file: the same text keeps its number
        when run again, so its Dynamo graph has the same names and lines and a warm capture serves it (a
        number that grew with each run made every re-run a new program to the store)."""
        return self._cell_numbers.setdefault(cell, len(self._cell_numbers) + 1)

    @cell_magic("watch")
    def watch_cell(self, line: str, cell: str) -> None:
        """``%%watch [name]``: run the cell as ordinary Python inside ``explorer.watch()``, the watch bound to
        ``name`` (default ``w``) so that the cell marks its steps (``for b in w.steps_of(loader)`` or
        ``w.step()``); its summary is shown after the cell, also when the cell raises (docs/watch.md)."""
        from compiler import watch

        name = line.strip() or "w"
        if not name.isidentifier():
            raise UsageError(f"%%watch takes one Python identifier to bind the watch to, got {name!r}")
        w = watch()
        self.shell.user_ns[name] = w
        try:
            with w:
                self.shell.ex(cell)
        finally:
            display(w)

    def _compile(self, source: str, name: str, config: dict[str, Any], args: Any, number: int) -> None:
        ns = self.shell.user_ns
        filename = f"<%%compile {name}-{number}>"
        try:
            built = cells.build(source, ns, name, filename)
        except cells.CellError as error:
            raise CellFailed(error.stage, str(error)) from None
        inputs = built.inputs(ns)
        if args.device is not None:
            inputs = tuple(t.to(args.device) for t in inputs)
        dynamic = True if args.dynamic else False
        code = f"# %%compile --export\n{source}" if args.export else source  # AOT and JIT runs are kept apart
        key = rerun.cell_key(code, config, dynamic, args.device)
        previous = self.cell_runs.get(key)
        if previous is not None and rerun.reusable(previous, built, ns):
            self._run_again(previous, inputs, args)
            return
        shown = ", ".join(f"{k}={v}" for k, v in config.items())
        progress = StatusLine(f"compiling {name} ({', '.join(built.params) or 'no tensor inputs'})"
                             f"{' with ' + shown if shown else ''}…", args.quiet)

        def recompile(new_config: dict[str, Any], shown: Any = False) -> Any:
            with quiet_capture_warnings():
                if args.export:
                    return capture_export(built.fn, inputs, dynamic_shapes=_batch_dims(inputs) if dynamic else None,
                                          config=new_config, progress_display=shown)
                return capture(built.fn, *inputs, config=new_config, dynamic=dynamic, progress_display=shown,
                               cache=not args.no_cache)

        started = time.perf_counter()
        try:
            compilation = recompile(config, progress)
        except Cancelled as error:
            progress.update(f"{name}: cancelled")
            raise CellCancelled(str(error)) from None
        except CompileError as error:
            progress.update(f"{name}: compilation failed during {error.stage}")
            raise CellFailed(error.stage, error_summary(error)) from None
        except ToggleError as error:
            progress.update(f"{name}: {error}")
            raise UsageError(str(error)) from None
        seconds = time.perf_counter() - started
        outputs = compilation.outputs if isinstance(compilation.outputs, dict) else {}
        ns.update({k: v for k, v in outputs.items() if k in built.assigned})
        entry = self.session.add(compilation, code=code, config=config, dynamic=dynamic, recompile=recompile,
                                 name=name, origin="cell", seconds=seconds)
        self.cell_runs[key] = rerun.CellRun(built, entry)
        if args.name is not None:
            ns[args.name] = compilation
        if not args.quiet:
            view = self.session.view(entry.index)
            self.views.append(view)
            progress.done(view.widget)

    def _sweep(self, source: str, name: str, config: dict[str, Any], args: Any, number: int) -> None:
        """``--sweep a,b``: the cell at every on/off combination of toggles a and b, as one Sweep."""
        from compiler import SweepError, sweep

        names = [n.strip() for n in args.sweep.split(",") if n.strip()]
        for toggle in names:
            if toggle not in TOGGLES or TOGGLES[toggle].value_type is not bool:
                raise UsageError(f"--sweep takes boolean toggle names separated by commas, got {toggle!r}; "
                                 f"boolean toggles: {', '.join(n for n, t in TOGGLES.items() if t.value_type is bool)}")
        if not names:
            raise UsageError("--sweep needs at least one toggle name, e.g. --sweep native_matmul,max_autotune")
        ns = self.shell.user_ns
        try:
            built = cells.build(source, ns, name, f"<%%compile {name}-{number}>")
        except cells.CellError as error:
            raise CellFailed(error.stage, str(error)) from None
        inputs = built.inputs(ns)
        if args.device is not None:
            inputs = tuple(t.to(args.device) for t in inputs)
        combos = itertools.product([False, True], repeat=len(names))
        configs = [{**config, **dict(zip(names, values))} for values in combos]
        try:
            result = sweep(built.fn, *inputs, configs=configs)
        except SweepError as error:
            raise CellFailed("sweep", str(error)) from None
        result.function = name
        if args.name is not None:
            ns[args.name] = result
        if not args.quiet:
            display(result)

    def _run_again(self, previous: rerun.CellRun, inputs: tuple[Any, ...], args: Any) -> None:
        """The cell's earlier compilation on new inputs: Dynamo reuses it or recompiles into it."""
        ns, entry = self.shell.user_ns, previous.entry
        compilation, before = entry.compilation, len(entry.compilation.recompiles)
        progress = StatusLine(f"running {entry.name} again on new inputs…", args.quiet)
        try:
            with quiet_capture_warnings():  # a package never recompiles: it runs any shape it was exported for
                outputs = compilation.run(*inputs) if compilation.export is not None else compilation.recompile(*inputs)
        except CompileError as error:
            progress.update(f"{entry.name}: recompilation failed during {error.stage}")
            raise CellFailed(error.stage, error_summary(error)) from None
        ns.update({k: v for k, v in (outputs or {}).items() if k in previous.built.assigned})
        if args.name is not None:
            ns[args.name] = compilation
        progress.update(rerun.outcome(entry.name, compilation, before, inputs))
        if not args.quiet:
            view = self.session.view(entry.index)
            new_graphs = [g for r in compilation.recompiles[before:] for g in r.graphs]
            if new_graphs:
                view.widget.graph = new_graphs[0]  # open the view on what was recompiled
            self.views.append(view)
            display(view.widget)

    @line_magic("explorer")
    def explorer_line(self, line: str) -> Any:
        """%explorer panel | session | clear: the side panel, the session's history, forget the session."""
        command = line.strip() or "session"
        if command == "panel":
            from .panel import open_panel

            self.panel = open_panel(self.session)
            return None
        if command == "session":
            return self.session
        if command == "clear":
            self.session.clear()
            return None
        raise UsageError(f"%explorer takes one of: panel, session, clear (got {command!r}"
                         f"{did_you_mean(command, ['panel', 'session', 'clear'])})")


ExplorerMagics.compile_cell = _compile_args(ExplorerMagics.compile_cell)  # type: ignore[method-assign]


def _options_of(magic: Any) -> list[str]:
    """Every ``--option`` the magic's own parser accepts, so suggestions follow the parser."""
    return [flag for action in magic.parser._actions for flag in action.option_strings if flag.startswith("--")]


def _parsed(magic: Any, line: str) -> Any:
    """The magic's arguments; an unknown option is named once, with the nearest valid ones beside it."""
    try:
        return parse_argstring(magic, line)
    except UsageError as error:
        message = str(error)
        head, marker, unknown = message.partition("unrecognized arguments:")
        if not marker:
            raise
        options = _options_of(magic)
        hinted = re.sub(r"--?[\w-]+", lambda flag: flag[0] + did_you_mean(flag[0], options), unknown)
        raise UsageError(f"{head}{marker}{hinted}") from None


def load_ipython_extension(ipython: Any) -> None:
    ipython.register_magics(ExplorerMagics(ipython))

