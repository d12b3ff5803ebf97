"""A command run under a pseudo-terminal of a given width, as a user's terminal runs it: stdout and stderr are
a tty (rich draws its live displays and colours), and everything the command wrote comes back as text."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import termios
import time
from dataclasses import dataclass

# rich's colours, cursor moves and line clears: what is left is the text a user reads
_ESCAPES = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")


@dataclass
class Run:
    returncode: int
    output: str  # stdout and stderr as written, escape sequences included

    @property
    def text(self) -> str:
        """The output without escape sequences and carriage returns."""
        return _ESCAPES.sub("", self.output).replace("\r", "")


def run(argv: list[str], columns: int = 100, rows: int = 40, timeout: float = 300,
        env: dict[str, str] | None = None, cwd: str | os.PathLike | None = None) -> Run:
    """Run ``argv`` with its stdin, stdout and stderr on one pseudo-terminal ``columns`` wide; raises
    ``subprocess.TimeoutExpired`` (the process killed) past ``timeout`` seconds."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
    environment = {**os.environ, **(env or {}), "TERM": "xterm-256color", "COLUMNS": str(columns),
                   "LINES": str(rows)}
    environment.pop("NO_COLOR", None)
    process = subprocess.Popen(argv, stdin=follower, stdout=follower, stderr=follower, env=environment, cwd=cwd,
                               close_fds=True)
    os.close(follower)
    chunks: list[bytes] = []
    deadline = time.monotonic() + timeout
    try:
        while True:
            if time.monotonic() > deadline:
                process.kill()
                process.wait()
                raise subprocess.TimeoutExpired(argv, timeout, b"".join(chunks))
            ready, _, _ = select.select([leader], [], [], 0.5)
            if not ready:
                continue
            try:
                data = os.read(leader, 65536)
            except OSError:  # the follower side closed: the process and its children are gone
                break
            if not data:
                break
            chunks.append(data)
    finally:
        os.close(leader)
    return Run(process.wait(), b"".join(chunks).decode("utf-8", errors="replace"))
