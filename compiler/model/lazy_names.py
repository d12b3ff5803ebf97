"""A package's public names imported from their modules on first use (PEP 562), written once for the three
faces that do it: ``compiler``, ``compiler.api`` and ``explorer``. Importing them must not import torch
(``python -m explorer --help``, ``show`` of a saved trace); a name that needs torch pays for it when used.
"""

from __future__ import annotations

import importlib
from typing import Any, Callable, Iterable, Mapping


def lazy_names(package: str, names: Mapping[str, tuple[str, str]], namespace: dict[str, Any],
               public: Iterable[str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package``: ``names`` maps each public name to (the module
    that defines it, its name there); a name is imported on first use and kept in ``namespace`` (the
    package's globals), so later reads are plain attribute reads."""

    def __getattr__(name: str) -> Any:
        if name not in names:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, attribute = names[name]
        value = getattr(importlib.import_module(module), attribute)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(public))

    return __getattr__, __dir__
