"""Sweeps: one function compiled at many points (toggles x input sets), each in its own worker process,
gathered into one table (``Sweep``) that opens every point again. Above every other room: it captures,
runs and saves."""

from . import render  # noqa: F401 - registers the Sweep's rich and HTML renderings
from .local import close_sweep_workers, start_sweep_workers
from .points import SweepError
from .result import Sweep, SweepRow, from_json
from .run import sweep

__all__ = ["sweep", "Sweep", "SweepRow", "SweepError", "from_json", "close_sweep_workers",
           "start_sweep_workers"]
