"""A worker process of this package, a sweep's or a bisect's: started with this process's import path (so
it imports the same compiler and the user's modules) and its slot's environment, its stderr kept in a file
whose end explains a crash, and stopped by asking, then by killing."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from . import channel

_ROOT = str(Path(__file__).resolve().parents[2])  # the folder holding compiler/ (and explorer/)


def import_paths() -> list[str]:
    """This process's import path, the package's folder first: what a worker or a Ray task imports from."""
    return list(dict.fromkeys([_ROOT] + [os.getcwd() if p == "" else p for p in sys.path]))


class WorkerProcess:
    """``python -m module`` with pipes for ``channel`` messages; ``label`` names its stderr file."""

    TAIL_LINES = 6  # of its stderr, in the note of how it ended

    def __init__(self, module: str, label: str, env: dict[str, str]) -> None:
        self.log = tempfile.NamedTemporaryFile(prefix=f"{label}-", suffix=".log", delete=False)
        environment = {**os.environ, "PYTHONPATH": os.pathsep.join(import_paths()), "PYTHONUNBUFFERED": "1", **env}
        self.process = subprocess.Popen([sys.executable, "-m", module], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=self.log, env=environment, cwd=os.getcwd())

    def send(self, message: Any) -> bool:
        """False when the process no longer reads (it ended)."""
        try:
            channel.send(self.process.stdin, message)
            return True
        except OSError:
            return False

    def exit_note(self) -> str:
        """How the process ended, with the end of its stderr (waits for it to end)."""
        code = self.process.wait()
        self.log.flush()
        tail = Path(self.log.name).read_text(errors="replace").strip().splitlines()[-self.TAIL_LINES:]
        what = f"killed by signal {-code}" if code < 0 else f"exited with code {code}"
        return f"the worker process {what}" + (": " + " | ".join(tail) if tail else "")

    def close(self, kill: bool = False) -> None:
        """Ask it to stop (``kill``: kill it), wait for it, and remove its stderr file; a second call does nothing."""
        if self.log.closed:
            return
        if self.process.poll() is None:
            if kill or not self.send(("stop",)):
                self.process.kill()
            try:
                self.process.wait(timeout=None if kill else 30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            try:
                stream.close()
            except OSError:
                pass
        self.log.close()
        os.unlink(self.log.name)
