"""Sweeps: one function compiled at many points (toggles x input sets), each in its own worker process,
gathered into one table (``Sweep``) that opens every point again. Above every other room: it captures,
runs and saves."""

from ..io.files import register_loader
from . import render  # noqa: F401 - registers the Sweep's rich and HTML renderings
from .local import close_sweep_workers, start_sweep_workers
from .points import SweepError
from .result import SCHEMA, Sweep, SweepRow, from_json
from .run import sweep

register_loader(SCHEMA, from_json)  # compiler.load / explorer.load open saved sweeps

__all__ = ["sweep", "Sweep", "SweepRow", "SweepError", "from_json", "SCHEMA", "close_sweep_workers",
           "start_sweep_workers"]
