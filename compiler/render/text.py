"""``str()`` of a report: its terminal rendering as plain text, as wide as the terminal (``print(w)``).

The model's ``__str__`` calls the ``slots.plain_text`` slot, filled here, so that printing a report shows
what the terminal would, not its one-line repr, without the model importing rich.
"""

from __future__ import annotations

import io
import shutil
from typing import Any

from rich.console import Console

from ..model import slots


@slots.plain_text.fill
def plain_text(obj: Any) -> str:
    """``obj``'s rich rendering written out without colours, at the terminal's width (100 when unknown)."""
    console = Console(file=io.StringIO(), width=shutil.get_terminal_size((100, 24)).columns, color_system=None,
                      force_terminal=False)
    console.print(slots.rich_of(obj))
    return console.file.getvalue().rstrip("\n")  # type: ignore[attr-defined]
