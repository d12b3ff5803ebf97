"""What every stage recorder of one live capture shares: its settings, whether its hooks still listen, the
compile stage running now, the inner compiles recorded so far and the notes.

One object, handed to each recorder of this folder, so that a hook of one stage sees the inner compile
another stage opened (``current``) and a recompile after the capture is recorded into the same lists.
"""

from __future__ import annotations

from typing import Any

from ...model import progress
from ...model.compilation import Note
from ..assemble import InnerRecord
from ..capture_store import CaptureStore


class CaptureState:
    """The state of one capture that no single stage owns."""

    def __init__(self, settings: dict[str, Any], device: str, store: CaptureStore | None) -> None:
        self.settings = settings
        self.device = device
        self.store = store  # a warm capture's: graphs captured before are served from it
        # False once the capture returned: later runs of the compiled function are not this capture's,
        # until a rerun (a recompile kept in the compilation) listens again
        self.active = True
        self.stage = "tracing"  # the compile stage running now, named in errors
        self.inner: list[InnerRecord] = []  # one per inner compile (inference, forward or backward), in order
        self.current: InnerRecord | None = None  # the inner compile running now
        # what torch warned and what the hooks swallowed; the compilation holds this list, so a recompile's
        # notes join it
        self.notes: list[Note] = []

    def enter(self, stage: str) -> None:
        """Move on to ``stage`` and report it as progress (going back to an outer stage is not reported:
        the bar would run backwards)."""
        self.stage = stage
        progress.step(stage, detail=f"graph {len(self.inner)}" if self.inner else "")

    def note(self, note: Note) -> None:
        """Each note once: a failing hook fails for every node it sees, a warning may repeat each recompile."""
        if note not in self.notes:
            self.notes.append(note)
