"""Running a written script in a fresh interpreter that can import torch (and triton) but nothing of
this project: what a reproducer must run with.

``python -I`` ignores PYTHONPATH, the user's site directory and the working directory, but this project
is installed (editable) into the environment, so the launcher also refuses its packages on import.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

PROJECT = ("compiler", "explorer", "widgets", "tests")
LAUNCHER = f"""import runpy, sys
class Refuse:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in {PROJECT!r}:
            raise ImportError(f"a reproducer may not import {{name}}")
sys.meta_path.insert(0, Refuse())
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def run(script: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-I", "-c", LAUNCHER, str(script), *args], capture_output=True,
                          text=True, timeout=timeout, check=False)
