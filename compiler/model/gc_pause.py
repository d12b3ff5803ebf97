"""Python's cyclic garbage collector paused around work that only makes short-lived, acyclic objects.

A capture of a large model leaves about a million objects alive (a 24-block training step on an H200:
1.0 M). Saving a trace or checking numerics allocates enough dicts, lists and tensors to trigger the
collector many times, and one full collection over that heap took 0.72 s there, within a 0.28 s save:
it finds none of the work's own objects, which reference counting frees. Inside ``paused()``, the work
triggers no collection; on exit the collector is as it was (a user who had it off keeps it off), and the
allocations it counted start the next collection in the ordinary way.
"""

from __future__ import annotations

import contextlib
import gc
from typing import Iterator


@contextlib.contextmanager
def paused() -> Iterator[None]:
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
