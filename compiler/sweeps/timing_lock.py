"""CPU sweep workers time alone: while one worker measures a point (``run_ms`` and the profile), no other
worker of the sweep compiles, checks or times anything, so the point gets the machine's cores as the user's
program would (with the thread count of the sweep's caller), not what a compile in the next process leaves
of them (two OpenMP threads on two cores run several times slower while a compile holds one).

One ``flock``'d file per sweep's parent process (``EXPLORER_TIMING_LOCK`` in each CPU worker's environment,
set by compiler/sweeps/local.py when it starts more than one): a worker holds it shared while it works
(compile, memory, numerics, trace) and exclusive while it times. A worker waiting to time waits for the
others' stages in progress to end, and they wait for its timing before their next stage. The kernel
releases a dead worker's hold. GPU workers time on their own device and Ray tasks on their own machines:
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
def _held(mode: int) -> Iterator[bool]:
    if not shared():
        yield False
        return
    with open(os.environ[ENV], "a") as handle:
        fcntl.flock(handle, mode)
        try:
            yield True
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def turn() -> contextlib.AbstractContextManager[bool]:
    """This worker times inside the block, alone; yields whether it took turns (False: no lock to take)."""
    return _held(fcntl.LOCK_EX if fcntl is not None else 0)


def working() -> contextlib.AbstractContextManager[bool]:
    """This worker works (untimed) inside the block, beside the others but never beside a timing one."""
    return _held(fcntl.LOCK_SH if fcntl is not None else 0)
