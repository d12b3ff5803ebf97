"""Session: every compilation a notebook made, in order, and a cache to switch back without recompiling.

Each entry keeps what is needed to compile the same code again on the same inputs with other toggles
(a ``recompile`` closure over the function and its live inputs). Entries are cached by
(code, input specs, normalized toggles, dynamic): switching a toggle back to a configuration this
session already compiled returns that entry, so the view updates in milliseconds instead of seconds.
"""

from __future__ import annotations

import html
import json
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Mapping

from compiler import Compilation, capture
from compiler.api import did_you_mean, tensor_specs

from . import settings


@dataclass(repr=False)
class Entry:
    index: int
    name: str
    compilation: Compilation
    code: str  # cell source, or a description of the function compiled
    config: dict[str, Any]  # normalized toggles (defaults dropped)
    dynamic: bool | None
    key: tuple[str, str, str, str]
    recompile: Callable[[dict[str, Any]], Compilation] | None = None
    origin: str = "compile"  # compile | cell | toggle | trace
    parent: int | None = None  # the entry a toggle change started from
    seconds: float = 0.0  # wall time of the compile that made it

    @property
    def label(self) -> str:
        toggles = ", ".join(f"{k}={v}" for k, v in self.config.items()) or "defaults"
        return f"#{self.index} {self.name} [{toggles}]"

    def __repr__(self) -> str:
        return f"Entry({self.label}, {self.origin}, {self.compilation!r})"


def cache_key(code: str, inputs: list[dict[str, Any]], config: Mapping[str, Any], dynamic: bool | None) -> tuple[str, str, str, str]:
    return (code, json.dumps(inputs, sort_keys=True), settings.config_key(config), repr(dynamic))


def _code_of(target: Any) -> str:
    """A cache identity for a Python callable: its module, qualified name and bytecode."""
    fn = getattr(target, "__func__", target)
    code = getattr(fn, "__code__", None)
    name = getattr(fn, "__qualname__", type(target).__qualname__)
    body = code.co_code.hex() if code is not None else f"object at {id(target):#x}"
    return f"{getattr(fn, '__module__', '?')}.{name}:{body}"


class Session:
    """Every compilation of a notebook, in order, with a (code, inputs, toggles) cache.

    >>> s = Session()
    >>> c = s.compile(f, x, config={"deterministic": True})
    >>> entry, cached = s.with_config(s[-1], {"deterministic": False})
    """

    _default: "Session | None" = None

    def __init__(self, *, cache: bool = True) -> None:
        self.entries: list[Entry] = []
        self.cache_enabled = cache
        self._cache: dict[tuple[str, str, str, str], Entry] = {}
        self._listeners: list[Callable[[Entry], None]] = []

    @classmethod
    def default(cls) -> "Session":
        """The session of this process (the one %%compile records into)."""
        if cls._default is None:
            cls._default = cls()
        return cls._default

    # --- recording -------------------------------------------------------------------------
    def add(self, compilation: Compilation, *, code: str, config: Mapping[str, Any] | None = None,
            dynamic: bool | None = False, recompile: Callable[[dict[str, Any]], Compilation] | None = None,
            name: str | None = None, origin: str = "compile", parent: int | None = None,
            seconds: float = 0.0) -> Entry:
        normalized = settings.normalize(config)
        entry = Entry(index=len(self.entries), name=name or compilation.function, compilation=compilation,
                      code=code, config=normalized, dynamic=dynamic,
                      key=cache_key(code, compilation.inputs, normalized, dynamic), recompile=recompile,
                      origin=origin, parent=parent, seconds=seconds)
        self.entries.append(entry)
        if self.cache_enabled and compilation.live:
            self._cache[entry.key] = entry
        for listener in list(self._listeners):
            listener(entry)
        return entry

    def compile(self, target: Any, *inputs: Any, config: Mapping[str, Any] | None = None,
                dynamic: bool | None = False, name: str | None = None, code: str | None = None) -> Compilation:
        """explorer.compile through the session: recorded, and served from the cache when already compiled."""
        code = code or _code_of(target)
        hit = self.lookup(cache_key(code, tensor_specs(inputs), config or {}, dynamic))
        if hit is not None:
            return hit.compilation

        def recompile(new_config: dict[str, Any]) -> Compilation:
            return capture(target, *inputs, config=new_config, dynamic=dynamic)

        started = time.perf_counter()
        compilation = recompile(dict(config or {}))
        self.add(compilation, code=code, config=config, dynamic=dynamic, recompile=recompile, name=name,
                 seconds=time.perf_counter() - started)
        return compilation

    def lookup(self, key: tuple[str, str, str, str]) -> Entry | None:
        return self._cache.get(key) if self.cache_enabled else None

    def with_config(self, entry: Entry | int, config: Mapping[str, Any]) -> tuple[Entry, bool]:
        """The same code and inputs as ``entry`` under ``config``: (entry, served_from_cache).

        Compiles (and records a new entry) only when this configuration was not compiled before.
        Raises ToggleError for an invalid config and CompileError when the compile fails; the
        session is unchanged in both cases.
        """
        base = self.entries[entry] if isinstance(entry, int) else entry
        normalized = settings.normalize(config)
        key = (base.key[0], base.key[1], settings.config_key(normalized), base.key[3])
        if key == base.key and base.compilation.live:
            return base, True
        hit = self.lookup(key)
        if hit is not None:
            return hit, True
        if base.recompile is None:
            raise RuntimeError(f"{base.label} cannot be recompiled: it has no live function and inputs "
                               "(loaded from a file?)")
        started = time.perf_counter()
        compilation = base.recompile(normalized)
        new = self.add(compilation, code=base.code, config=normalized, dynamic=base.dynamic, recompile=base.recompile,
                       name=base.name, origin="toggle", parent=base.index, seconds=time.perf_counter() - started)
        return new, False

    def on_new_entry(self, callback: Callable[[Entry], None], remove: bool = False) -> None:
        """Call ``callback(entry)`` for every entry added from now on (the side panel follows cells this way)."""
        if remove:
            if callback in self._listeners:
                self._listeners.remove(callback)
        else:
            self._listeners.append(callback)

    # --- access ----------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.entries)

    def __iter__(self) -> Iterator[Entry]:
        return iter(self.entries)

    def __getitem__(self, key: int | str) -> Entry:
        if isinstance(key, int):
            return self.entries[key]
        for entry in reversed(self.entries):
            if entry.name == key:
                return entry
        names = sorted({e.name for e in self.entries})
        raise KeyError(f"no compilation named {key!r} in this session{did_you_mean(key, names)}; names: {names}")

    def entry_of(self, compilation: Compilation) -> Entry | None:
        return next((e for e in self.entries if e.compilation is compilation), None)

    def view(self, index: int = -1, *, follow: bool = False) -> Any:
        """The explorer widget of one entry with the toggle panel and the session's history."""
        from .view import SessionView

        return SessionView(self, self.entries[index] if self.entries else None, follow=follow)

    def clear(self) -> None:
        self.entries.clear()
        self._cache.clear()

    def __repr__(self) -> str:
        return f"Session({len(self.entries)} compilations, {len(self._cache)} cached)"

    def __rich__(self) -> Any:
        from rich.table import Table

        table = Table(title=repr(self))
        for column in ("#", "name", "toggles", "origin", "graphs", "kernels", "seconds"):
            table.add_column(column)
        for e in self.entries:
            c = e.compilation
            table.add_row(str(e.index), e.name, ", ".join(f"{k}={v}" for k, v in e.config.items()) or "defaults",
                          e.origin, str(len(c.graphs)), str(len(c.kernels)), f"{e.seconds:.2f}")
        return table

    def _repr_html_(self) -> str:
        rows = "".join(
            f"<tr><td>{e.index}</td><td>{html.escape(e.name)}</td><td>{html.escape(e.label)}</td>"
            f"<td>{e.origin}</td><td>{len(e.compilation.kernels)}</td><td>{e.seconds:.2f}</td></tr>" for e in self.entries)
        return (f"<table><caption>{html.escape(repr(self))}</caption><tr><th>#</th><th>name</th><th>configuration</th>"
                f"<th>origin</th><th>kernels</th><th>seconds</th></tr>{rows}</table>")
