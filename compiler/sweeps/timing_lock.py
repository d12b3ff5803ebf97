"""CPU sweep workers take turns to time: while one worker measures a point (``run_ms`` and the profile), no
other worker of the sweep runs anything timed, so the point gets the machine's cores as the user's program
would (with the thread count of the sweep's caller), not a share of them.

Compiling, the numerics and the trace, most of a point's time, still run side by side. The turn is an
exclusive ``flock`` on a file named after the sweep's parent process (``EXPLORER_TIMING_LOCK`` in each CPU
worker's environment, set by compiler/sweeps/local.py when it starts more than one): released by the kernel
when a worker dies holding it. GPU workers time on their own device, Ray tasks on their own machines:
neither takes turns.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import tempfile
from pathlib import Path
from typing import Iterator

try:
    import fcntl
except ImportError:  # not POSIX: no turns (times then share the cores, as the row says)
    fcntl = None

ENV = "EXPLORER_TIMING_LOCK"
_MADE: set[Path] = set()  # lock paths this process named, each removed at its exit


def path_for(parent_pid: int) -> str:
    """The lock file of the sweeps this process starts; removed when it exits."""
    path = Path(tempfile.gettempdir()) / f"inductor-explorer-timing-{parent_pid}.lock"
    if parent_pid == os.getpid() and path not in _MADE:
        _MADE.add(path)
        atexit.register(path.unlink, missing_ok=True)
    return str(path)


def shared() -> bool:
    """Whether this worker takes turns with others."""
    return bool(os.environ.get(ENV)) and fcntl is not None


@contextlib.contextmanager
def turn() -> Iterator[bool]:
    """Hold this sweep's timing turn inside the block; yields whether it is a turn (False: no lock to take)."""
    if not shared():
        yield False
        return
    with open(os.environ[ENV], "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield True
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
