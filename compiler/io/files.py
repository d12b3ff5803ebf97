"""Opening a saved file whatever it holds: a Compilation or a TraceSet."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..model.errors import TraceFormatError
from . import trace, traceset


def load(path: str | Path) -> Any:
    """A saved Compilation (``Compilation.save``), or a saved TraceSet (``TraceSet.save``)."""
    path = Path(path)
    with trace.collector_paused():
        try:
            data = json.loads(path.read_text())
        except json.JSONDecodeError as exc:
            raise TraceFormatError(f"{path} is not a JSON trace ({exc.msg} at line {exc.lineno}); "
                                   "save traces with Compilation.save(path)") from exc
        if isinstance(data, dict) and data.get("schema") == traceset.SCHEMA:
            return traceset.from_json(data, origin=str(path))
        return trace.from_json(data, origin=str(path))
