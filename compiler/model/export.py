"""ExportStage: what torch.export produced and where AOTInductor put the package, for an AOT compilation.

An AOT compilation (``explorer.export``) holds its graphs like a JIT one; this stage is what comes
before them: the exported program (its graph as code, the signature that says which inputs are
parameters, buffers or the user's, and the value range of every dynamic dim) and the ``.pt2`` package
that the compilation's runs load.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class ExportStage:
    """The exported program of an AOT compilation (``c.export``) and the package built from it."""

    graph: str  # the exported program's graph module as Python code (print_readable)
    inputs: list[dict[str, Any]] = field(default_factory=list)  # signature: {kind, name, target} per input
    outputs: list[dict[str, Any]] = field(default_factory=list)  # signature: {kind, name, target} per output
    range_constraints: dict[str, list[Any]] = field(default_factory=dict)  # symbol -> [lower, upper]
    dynamic_shapes: str = ""  # the dynamic_shapes argument as given (its repr), "" when static
    strict: bool = False  # torch.export's strict mode (Dynamo tracing) or non-strict (Python tracing)
    package_path: str = ""  # the .pt2 AOTInductor wrote; runs load it with aoti_load_package

    @property
    def user_inputs(self) -> list[str]:
        return [spec["name"] for spec in self.inputs if spec.get("kind") == "USER_INPUT"]

    @property
    def dynamic(self) -> bool:
        return bool(self.range_constraints)

    def __repr__(self) -> str:
        ranges = ", ".join(f"{s} in [{lo}, {hi}]" for s, (lo, hi) in self.range_constraints.items()) or "static"
        return f"ExportStage({len(self.inputs)} inputs ({len(self.user_inputs)} yours), {ranges}, {self.package_path})"
