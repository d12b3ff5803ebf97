"""A ``%%compile`` cell run again with new inputs reuses its compiled code, as torch.compile'd code does.

Code wrapped in torch.compile and called again reuses what it compiled while its guards hold, and
recompiles when they fail (new shapes, a changed int). A re-run cell behaves the same: when its
source and options are unchanged and the non-tensor names it reads still hold what the earlier run
saw, the earlier run's compilation is called on the new tensors (``Compilation.run``). Graphs Dynamo
recompiles join that compilation, with the guard that failed in ``c.recompiles``, and the cell says
which guard failed. Anything else (edited code, other toggles, a changed global) compiles afresh.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from compiler import Compilation
from compiler.api import tensor_specs

from . import settings
from .cell import CellFunction
from .session import Entry

_CONSTANTS = (int, float, bool, str, bytes, tuple, frozenset, type(None))


@dataclass
class CellRun:
    """A cell that compiled: its function (holding the namespace it saw) and its session entry."""

    built: CellFunction
    entry: Entry


def cell_key(source: str, config: Mapping[str, Any], dynamic: bool, device: str | None) -> tuple[str, str, bool, str]:
    return (source, settings.config_key(config), dynamic, str(device))


def _same(now: Any, then: Any) -> bool:
    return now is then or (type(now) is type(then) and isinstance(now, _CONSTANTS) and now == then)


def reusable(previous: CellRun, built: CellFunction, namespace: Mapping[str, Any]) -> bool:
    """Same tensor parameters, and every other name the cell reads is what the earlier run read."""
    if previous.built.params != built.params:
        return False
    seen = previous.built.fn.__globals__
    return all(_same(namespace[name], seen.get(name, _same)) for name in built.reads
               if name in namespace and name not in built.params)


def outcome(name: str, compilation: Compilation, recompiles_before: int, inputs: tuple[Any, ...]) -> str:
    """One line: what running the compiled cell on new inputs did."""
    shapes = ", ".join(f"{'x'.join(map(str, spec['shape'])) or 'scalar'}" for spec in tensor_specs(inputs))
    if compilation.export is not None:
        return f"{name}: ran the AOTInductor package on new inputs ({shapes}): a package never recompiles"
    new = compilation.recompiles[recompiles_before:]
    if not new:
        return f"{name}: ran the compiled cell on new inputs ({shapes}): its guards held, nothing recompiled"
    reason = next((r for r in new[0].reasons if r.strip()), "?").splitlines()[0]
    graphs = ", ".join(g for r in new for g in r.graphs)
    return (f"{name}: recompiled for the new inputs ({shapes}): {len(new)} frame(s), new graphs {graphs}; "
            f"the guard that failed: {reason}")
