"""Which Dynamo compile is running: its compile id (``0/1``), as torch's logs and metrics spell it."""

from __future__ import annotations

from torch import _guards


def current() -> str | None:
    """The compile id of the frame Dynamo is compiling now (None outside a compile)."""
    context = getattr(_guards, "CompileContext", None)
    getter = getattr(context, "current_compile_id", None)
    if getter is None:
        return None
    try:
        compile_id = getter()
    except Exception:
        return None
    return str(compile_id) if compile_id is not None else None
