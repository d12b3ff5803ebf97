"""A command run under a pseudo-terminal of a given width, as a user's terminal runs it: stdout and stderr are
a tty (rich draws its live displays and colours), and everything the command wrote comes back as text.

``run`` starts the command in a fresh process; ``this_process`` puts this process's own ``sys.stdout`` and
``sys.stderr`` on a pseudo-terminal for the length of a block, for code called in-process (a command's
``main``), which then finds a terminal as it would in a user's shell but starts nothing anew.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
import threading
import time
from dataclasses import dataclass, field
from typing import Iterator, TextIO

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


@dataclass
class Terminal:
    """This process's streams on a pseudo-terminal: ``out`` and ``err`` are what ``sys.stdout`` and
    ``sys.stderr`` were set to; ``output`` is filled when the block ends."""
    out: TextIO
    err: TextIO
    output: str = ""
    _chunks: list[bytes] = field(default_factory=list, repr=False)

    @property
    def text(self) -> str:
        """The output without escape sequences and carriage returns."""
        return _ESCAPES.sub("", self.output).replace("\r", "")


@contextlib.contextmanager
def this_process(columns: int = 100, rows: int = 40) -> Iterator[Terminal]:
    """``sys.stdout`` and ``sys.stderr`` of this process on one pseudo-terminal ``columns`` wide for the
    block (two text streams on it, as a shell gives a process), and the terminal's environment (``COLUMNS``,
    ``LINES``, ``TERM``; no ``NO_COLOR``); all of it is put back afterwards, and what was written to the
    terminal is in ``Terminal.output``. A thread drains the terminal meanwhile, so long output never blocks."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
    terminal = Terminal(open(follower, "w", encoding="utf-8", buffering=1, closefd=False),
                        open(os.dup(follower), "w", encoding="utf-8", buffering=1))

    def drain() -> None:
        while True:
            try:
                data = os.read(leader, 65536)
            except OSError:  # every follower descriptor closed
                return
            if not data:
                return
            terminal._chunks.append(data)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    environment = {name: os.environ.get(name) for name in ("COLUMNS", "LINES", "TERM", "NO_COLOR")}
    os.environ.update(COLUMNS=str(columns), LINES=str(rows), TERM="xterm-256color")
    os.environ.pop("NO_COLOR", None)
    streams = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = terminal.out, terminal.err
    try:
        yield terminal
    finally:
        sys.stdout, sys.stderr = streams
        for name, value in environment.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        terminal.out.close()
        terminal.err.close()
        os.close(follower)
        reader.join(timeout=30)
        os.close(leader)
        terminal.output = b"".join(terminal._chunks).decode("utf-8", errors="replace")
