"""One helper for each formatting job shared by the model, the renderings and explorer/."""

from __future__ import annotations

import difflib
from typing import Any, Iterable


def where(user_line: Any, libraries: dict[str, str] | None = None, full_path: bool = False) -> str:
    """``file.py:12`` for a (file, line) pair; ``conv.py:548 (torch)`` for a line in an installed
    library; ``""`` for none. ``full_path`` keeps the directories."""
    if not user_line:
        return ""
    file, line = str(user_line[0]), user_line[1]
    library = (libraries or {}).get(file)
    shown = file if full_path else file.rsplit("/", 1)[-1]
    return f"{shown}:{line}{f' ({library})' if library else ''}"


def shorten(text: str, width: int, squash: bool = False) -> str:
    """``text`` cut to ``width`` characters with ``...``; ``squash`` first joins its whitespace."""
    if squash:
        text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 3] + "..."


def fmt_bytes(n: int | float | None) -> str:
    """``512 B``, ``1.5 KiB`` ... ``2.0 GiB``; ``?`` when unknown."""
    if n is None:
        return "?"
    if abs(n) < 1024:
        return f"{n:.0f} B"
    for unit in ("KiB", "MiB", "GiB"):
        n /= 1024
        if abs(n) < 1024 or unit == "GiB":
            break
    return f"{n:.1f} {unit}"


def did_you_mean(name: object, choices: Iterable[object]) -> str:
    """`` (did you mean 'native_matmul'?)`` for the choices closest to a misspelled ``name``; ``""`` if none is close."""
    options = {str(c): c for c in choices}
    close = difflib.get_close_matches(str(name), list(options), n=3, cutoff=0.6)
    return f" (did you mean {' or '.join(repr(options[c]) for c in close)}?)" if close else ""
