"""``c.timings``: torch's own compile timers, named by the phases of compiler/model/phases.py.

Torch's timers nest (the backend compile holds AOTAutograd and Inductor; on a CPU codegen's timer holds the
C++ kernel builds), so these figures overlap: on a 30 s compile they can add up to twice that. ``CompileTimings`` keeps them as
torch measured them (a plain mapping, saved as it is) and says so: its repr shows the nesting and points
to the flat breakdown, ``c.compile_time.categories()``, where every second is in exactly one phase.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from .phases import PHASES, canonical, find

_ORDER = {phase.name: index for index, phase in enumerate(PHASES)}

FLAT_BREAKDOWN = "c.compile_time.categories()"


class CompileTimings(dict[str, float]):
    """Seconds per phase from torch's nested timers, plus ``total`` (the call's wall time).

    Keys are phase names (``dynamo``, ``kernel_compile``, ...); the older words a saved trace may hold
    (``tracing``, ``compile``, ``autotuning``) are renamed on the way in and still work as keys.
    """

    def __init__(self, values: Mapping[str, float] | Iterable[tuple[str, float]] = ()) -> None:
        items = values.items() if isinstance(values, Mapping) else values
        super().__init__((canonical(key), value) for key, value in items)

    def __getitem__(self, key: str) -> float:
        return super().__getitem__(canonical(key))

    def __contains__(self, key: object) -> bool:
        return super().__contains__(canonical(key) if isinstance(key, str) else key)

    def get(self, key: str, default: Any = None) -> Any:
        return super().get(canonical(key), default)

    @property
    def nesting(self) -> dict[str, str | None]:
        """Each key -> the key whose torch timer holds it (None at the top): the overlaps, spelled out."""
        return {key: self._holder(key, self) for key in self}

    @staticmethod
    def _holder(key: str, keys: Iterable[str]) -> str | None:
        """The nearest phase around ``key`` (phases.CompilePhase.inside) that is one of ``keys``."""
        present = set(keys)
        phase = find(key)
        inside = phase.inside if phase is not None else "total"
        while inside is not None and inside not in present:
            holder = find(inside)
            inside = holder.inside if holder is not None else None
        return inside if inside != key else None

    def _tree(self, key: str | None, children: dict[str | None, list[str]]) -> str:
        parts = []
        for child in children.get(key, []):
            inner = self._tree(child, children)
            parts.append(f"{child} {self[child]:.2f} s" + (f" {{{inner}}}" if inner else ""))
        return ", ".join(parts)

    def __repr__(self) -> str:
        shown = sorted((key for key in self if key != "total" and self[key]), key=lambda k: _ORDER.get(k, len(_ORDER)))
        children: dict[str | None, list[str]] = {}
        for key in shown:
            children.setdefault(self._holder(key, shown), []).append(key)
        total = f"total {self['total']:.2f} s; " if "total" in self else ""
        return (f"CompileTimings({total}torch's own timers, nested, so they overlap and do not add up: "
                f"{self._tree(None, children)}; the flat breakdown is {FLAT_BREAKDOWN})")
