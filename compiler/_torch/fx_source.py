"""An FX graph as Python source that runs without this package: its ``forward`` and the imports it needs.

FX generates a graph's code against a globals dict: its standard names (``torch``, ``inf``, ``device``,
...) come with an import line each in ``torch.fx.graph._custom_builtins``; any other global must be
importable by its module and qualified name.
"""

from __future__ import annotations

import importlib
import re
from typing import Any

import torch.fx


def _standard_imports() -> dict[str, str]:
    """Name -> import line of the globals FX puts in every generated graph's code."""
    builtins = getattr(torch.fx.graph, "_custom_builtins", {})
    return {name: entry.import_str for name, entry in builtins.items() if hasattr(entry, "import_str")}


def _import_line(name: str, value: Any) -> str | None:
    module, qualname = getattr(value, "__module__", None), getattr(value, "__qualname__", None)
    if isinstance(value, type(torch)):
        return f"import {value.__name__} as {name}" if value.__name__ != name else f"import {name}"
    if not module or not qualname or "." in qualname or "<" in qualname:
        return None
    try:
        if getattr(importlib.import_module(module), qualname) is not value:
            return None
    except (ImportError, AttributeError):
        return None
    return f"from {module} import {qualname}" + ("" if qualname == name else f" as {name}")


def module_source(gm: torch.fx.GraphModule) -> tuple[list[str], str]:
    """(import lines, the ``forward`` method's source) of ``gm``'s graph. ValueError naming a global the
    code uses that a script could not import."""
    code = gm.graph.python_code(root_module="self")
    standard = _standard_imports()
    imports: list[str] = []
    used = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", code.src))
    for name, value in code.globals.items():
        if name == "__builtins__" or name not in used:  # FX offers its standard names to every graph
            continue
        line = standard.get(name) or _import_line(name, value)
        if line is None:
            raise ValueError(f"the graph's code uses {name} = {value!r}, which a standalone script cannot import")
        imports.append(line)
    return sorted(set(imports)), code.src.strip("\n") + "\n"
