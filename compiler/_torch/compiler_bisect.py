"""torch's ``CompilerBisector`` driven in this process, its state put back whatever happens (``explorer.bisect``).

``CompilerBisector.do_bisect(fn)`` calls ``fn()`` (True: the program is good) again and again while it moves
through ``BACKENDS`` (eager, aot_eager, aot_eager_decomp_partition, ..., inductor), then through the failing
backend's subsystems: a ``BisectSubsystem`` (pre/joint/post-grad passes, decompositions, lowerings,
cudagraphs) is first disabled whole, then bisected to the n-th application that breaks the program; a
``ConfigChange`` (fallback_random, emulate_precision_casts, ...) is tried once. While it runs,
``torch.compile`` swaps any backend for the one being tried and applies the config change being tried.

Its state is class attributes, module globals and files under a temporary directory; it prints its progress.
``bisected`` keeps every piece and puts it back on exit, also when ``fn`` raises: ``bisection_enabled``,
``in_process_cache`` (its directory removed), the ``BACKENDS`` lists (``do_bisect`` inserts ``pre_grad_graph``
under a test config), the call counters, and torch 2.11/2.12's in-memory debug info (2.13 on keeps it in a
file of that directory). What it prints is kept, not shown: its module's ``print`` is shadowed for the search,
never ``sys.stdout``, which a terminal's progress bar may be swapping at the same time (rich's live display
puts back the stream it found when it started, so a redirection of ``sys.stdout`` that it found would stay the
process's stdout once the bar ends). ``only_backends`` narrows the search to some
backends for its length (a slowdown is bisected inside Inductor: the eager backends are slower by nature).

A trial may run in another process (a sweep worker): ``state_files`` is the bisector's state as text files
(plus 2.11/2.12's in-memory debug info), ``following`` replays it there with the bisector on, and hands back
what the trial wrote (the counted applications, a lowered node's name), which ``take_back`` writes into the
driving process's state. Feature-probed: ``available()`` says whether the
installed torch has every member used here (torch 2.11 to 2.14 do; their differences are internal: debug info
in a dict or a file, a module-level or a class ``reset_counters``).
"""

from __future__ import annotations

import builtins
import contextlib
import io
import os
import shutil
import tempfile
from pathlib import Path
from dataclasses import dataclass
from typing import Any, Callable, Iterator

_NEEDED = ("do_bisect", "get_backend", "get_subsystem", "get_run_state", "get_bisect_range", "bisection_enabled",
           "in_process_cache")
# environment variables that make the bisector ignore its own state (read once per process by torch)
_ENV = ("TORCH_BISECT_BACKEND", "TORCH_BISECT_SUBSYSTEM", "TORCH_BISECT_MAX")


def _module() -> Any:
    try:
        from torch._inductor import compiler_bisector
    except ImportError:
        return None
    return compiler_bisector


def available() -> str | None:
    """None when the installed torch's bisector can be driven here, else why not."""
    module = _module()
    bisector = getattr(module, "CompilerBisector", None)
    if bisector is None or not isinstance(getattr(module, "BACKENDS", None), dict):
        return "the installed torch has no torch._inductor.compiler_bisector.CompilerBisector"
    missing = [name for name in _NEEDED if not hasattr(bisector, name)]
    if missing:
        return f"the installed torch's CompilerBisector lacks {', '.join(missing)}"
    set_env = [name for name in _ENV if os.environ.get(name)]
    if set_env:
        return (f"{', '.join(set_env)} is set in the environment: torch's bisector then follows it instead of its "
                "own search; unset it to bisect")
    return None


@dataclass(frozen=True)
class Subsystem:
    """One subsystem of a backend as torch's bisector lists it."""

    backend: str
    name: str
    kind: str  # "bisect" (applied many times, bisected to the n-th), "config" (one config change) or "binary"
    config: tuple[str, str, Any] | None = None  # a config change: (config module name, field, value tried)


def subsystems() -> list[Subsystem]:
    """Every backend's subsystems, in the order the bisector tries them."""
    module = _module()
    out = []
    for backend, items in getattr(module, "BACKENDS", {}).items():
        for item in items:
            if isinstance(item, module.ConfigChange):
                out.append(Subsystem(backend, item.name, "config",
                                     (item.config_name, item.config_field, item.config_value)))
            elif isinstance(item, module.BisectSubsystem):
                out.append(Subsystem(backend, item.name, "bisect"))
            else:
                out.append(Subsystem(backend, item.name, "binary"))
    return out


def backends() -> list[str]:
    return list(getattr(_module(), "BACKENDS", {}))


@dataclass(frozen=True)
class Step:
    """What the bisector is trying in the trial being run."""

    backend: str | None
    subsystem: str | None
    run_state: str | None  # test_disable | find_max_bounds | bisect | None (trying the backend whole)
    low: int | None = None
    high: int | None = None


def current_step() -> Step:
    """The bisector's state, read while ``do_bisect`` runs a trial."""
    bisector = _module().CompilerBisector
    backend, subsystem = bisector.get_backend(), bisector.get_subsystem()
    state, low, high = None, None, None
    if backend and subsystem:
        state = bisector.get_run_state(backend, subsystem)
        if state == "bisect":
            with contextlib.suppress(Exception):
                low, high = bisector.get_bisect_range(backend, subsystem)
    return Step(backend, subsystem, state, low, high)


@dataclass(frozen=True)
class Outcome:
    """What ``do_bisect`` returned: torch's ``BisectionResult`` as plain values (None: nothing failed)."""

    backend: str
    subsystem: str | None
    bisect_number: int | None
    debug_info: str | None


@contextlib.contextmanager
def _state_kept(module: Any) -> Iterator[None]:
    bisector = module.CompilerBisector
    enabled, cache = bisector.bisection_enabled, bisector.in_process_cache
    objects = dict(module.BACKENDS)  # the list objects, which torch's modules may hold
    lists = {backend: list(items) for backend, items in module.BACKENDS.items()}
    counter = dict(getattr(module, "subsystem_call_counter", {}))
    debug = getattr(module, "call_counter_debug_info", None)  # torch 2.11 / 2.12
    debug_saved = dict(debug) if isinstance(debug, dict) else None
    directory = tempfile.mkdtemp(prefix="explorer-bisect-")
    bisector.in_process_cache = directory  # do_bisect keeps a directory set here instead of making one
    try:
        yield
    finally:
        bisector.bisection_enabled, bisector.in_process_cache = enabled, cache
        module.BACKENDS.clear()  # every backend again, in its order, also those ``only_backends`` left out
        for backend, items in lists.items():
            objects[backend][:] = items
            module.BACKENDS[backend] = objects[backend]
        calls = getattr(module, "subsystem_call_counter", None)
        if calls is not None:
            calls.clear()
            calls.update(counter)
        if debug_saved is not None:
            debug.clear()
            debug.update(debug_saved)
        shutil.rmtree(directory, ignore_errors=True)


_MISSING = object()


@contextlib.contextmanager
def _prints_kept(module: Any, printed: io.StringIO) -> Iterator[None]:
    """What the bisector's module prints goes to ``printed``: a ``print`` of its own in its globals, which
    name lookups find before the builtin; ``print(..., file=f)`` still writes to ``f``."""

    def kept(*values: Any, sep: str | None = " ", end: str | None = "\n", file: Any = None, flush: bool = False) -> None:
        builtins.print(*values, sep=sep, end=end, file=printed if file is None else file, flush=flush)

    before = module.__dict__.get("print", _MISSING)
    module.print = kept
    try:
        yield
    finally:
        if before is _MISSING:
            del module.print
        else:
            module.print = before


def bisected(trial: Callable[[], bool], only_backends: tuple[str, ...] | None = None) -> tuple[Outcome | None, str]:
    """Run torch's bisector over ``trial`` (True: the program is good); its outcome and what it printed.
    ``only_backends``: the backends it goes through (in torch's order), the others left out for its length.
    What ``trial`` raises leaves through here, the bisector's state put back first (its traceback is cut
    here: ``do_bisect`` cleans up when its frame is freed, which a kept traceback would delay)."""
    module = _module()
    printed = io.StringIO()
    with _state_kept(module), _prints_kept(module, printed):
        if only_backends is not None:
            for backend in [b for b in module.BACKENDS if b not in only_backends]:
                del module.BACKENDS[backend]
        try:
            result = module.CompilerBisector.do_bisect(trial)
        except BaseException as error:
            error.__traceback__ = None
            raise error from None
        outcome = (None if result is None else
                   Outcome(result.backend, result.subsystem, result.bisect_number, result.debug_info))
        del result
    return outcome, printed.getvalue()


@contextlib.contextmanager
def inductor_config_kept() -> Iterator[None]:
    """Inductor's config as it was (``save_config``) when the block exits, whatever ran inside: the bisector
    applies its config changes through ``torch.compile``'s options, a trial through ``config.patch``."""
    from torch._inductor import config as _config

    saved = _config.save_config()
    try:
        yield
    finally:
        if _config.save_config() != saved:
            _config.load_config(saved)


_DEBUG_KEY = "<call_counter_debug_info>"  # torch 2.11 / 2.12 keep the lowered nodes' names in a module dict


def state_files() -> dict[str, Any]:
    """The bisector's state while ``do_bisect`` runs, for a trial in another process: its files (path
    relative to its directory -> text), and 2.11/2.12's debug info."""
    module = _module()
    root = Path(module.CompilerBisector.get_dir())
    files: dict[str, Any] = {str(p.relative_to(root)): p.read_text() for p in root.rglob("*") if p.is_file()}
    debug = getattr(module, "call_counter_debug_info", None)
    if isinstance(debug, dict):
        files[_DEBUG_KEY] = dict(debug)
    return files


def _write(root: Path, files: dict[str, Any]) -> None:
    for name, text in files.items():
        if name != _DEBUG_KEY:
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(text)


@contextlib.contextmanager
def following(files: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """In a trial's own process: torch's bisector on, in the state ``files`` hold (``state_files``), its
    application counters at zero as ``do_bisect`` sets them before a trial. The dict yielded is filled on
    exit with what the trial changed, for ``take_back``; the bisector's own state is as it was afterwards."""
    module = _module()
    bisector = module.CompilerBisector
    enabled, cache = bisector.bisection_enabled, bisector.in_process_cache
    counter = getattr(module, "subsystem_call_counter", None)
    counted = dict(counter) if counter is not None else {}
    debug = getattr(module, "call_counter_debug_info", None)
    debug_saved = dict(debug) if isinstance(debug, dict) else None
    directory = tempfile.mkdtemp(prefix="explorer-bisect-trial-")
    changed: dict[str, Any] = {}
    bisector.in_process_cache, bisector.bisection_enabled = directory, True
    root = Path(bisector.get_dir())
    try:
        _write(root, files)
        if counter is not None:
            counter.clear()
        if debug_saved is not None:
            debug.clear()
            debug.update(files.get(_DEBUG_KEY, {}))
        yield changed
    finally:  # also after a trial that raised: what it counted before the error is the bisector's to see
        after = {str(p.relative_to(root)): p.read_text() for p in root.rglob("*") if p.is_file()}
        changed.update({name: text for name, text in after.items() if files.get(name) != text})
        if debug_saved is not None and dict(debug) != files.get(_DEBUG_KEY, {}):
            changed[_DEBUG_KEY] = dict(debug)
        bisector.bisection_enabled, bisector.in_process_cache = enabled, cache
        if counter is not None:
            counter.clear()
            counter.update(counted)
        if debug_saved is not None:
            debug.clear()
            debug.update(debug_saved)
        shutil.rmtree(directory, ignore_errors=True)


def take_back(changed: dict[str, Any]) -> None:
    """What a trial in another process wrote into the bisector's state, written into this process's."""
    module = _module()
    _write(Path(module.CompilerBisector.get_dir()), changed)
    debug = getattr(module, "call_counter_debug_info", None)
    if isinstance(debug, dict) and _DEBUG_KEY in changed:
        debug.update(changed[_DEBUG_KEY])
