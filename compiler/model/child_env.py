"""The environment of the explorer's child processes (kernel edits, counters, package runs).

A child is a fresh interpreter started with ``python -m compiler.runs.<worker>``: it finds this package
through PYTHONPATH, so it works from notebooks and scripts whether or not the package is installed.
"""

from __future__ import annotations

import os
from pathlib import Path

PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])  # the folder holding compiler/


def worker_env() -> dict[str, str]:
    """This process's environment with the explorer's root first on PYTHONPATH."""
    return dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [PACKAGE_ROOT, os.environ.get("PYTHONPATH")])))
