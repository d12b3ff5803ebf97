"""Fields a live capture leaves unbuilt, built by their pending builder the first time one is read.

A capture only copies what torch hands it (Triton's IR texts, the wrapper's plan); building the views of
them (SASS, line maps, the wrapper as FX) costs more than the compile and most are never opened. A class
that mixes in ``LazyFields`` names those fields and the field holding the builder; reading any of them
first runs the builder once, then the object is an ordinary dataclass again. Other attributes never
trigger it, so a repr or a save that asks whether something is pending stays cheap.
"""

from __future__ import annotations

from typing import Any, ClassVar, Self


class LazyFields:
    """Mixin: reading a field in ``_lazy_fields`` while ``_pending_field`` holds a builder runs it first.

    A subclass sets both class attributes and ``_fill`` (what to do with the builder's result); the
    builder is cleared only once ``_fill`` returned, so a builder that raises is tried again on the next
    read."""

    __slots__ = ()
    _lazy_fields: ClassVar[frozenset[str]] = frozenset()
    _pending_field: ClassVar[str] = "pending"

    def __getattribute__(self, name: str) -> Any:
        cls = type(self)
        if name in cls._lazy_fields and object.__getattribute__(self, cls._pending_field) is not None:
            object.__getattribute__(self, "complete")()
        return object.__getattribute__(self, name)

    def complete(self) -> Self:
        """Build the lazy fields now if they are still pending (what first reading one of them does)."""
        pending_field = type(self)._pending_field
        pending = object.__getattribute__(self, pending_field)
        if pending is not None:
            object.__getattribute__(self, "_fill")(pending())
            object.__setattr__(self, pending_field, None)
        return self

    def _fill(self, built: Any) -> None:
        """Store what the builder returned; write with ``object.__setattr__`` and read nothing lazy."""
        raise NotImplementedError(f"{type(self).__name__} names lazy fields but does not say how to fill them")
