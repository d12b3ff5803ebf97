"""Runs the notebooks of examples/ headless on this Python: used by tests/notebooks/test_notebooks.py and by the
documentation build (docs/hooks.py).

Each notebook that runs cleanly is kept, with its outputs, in ``build/notebooks/<name>.ipynb``. The
notebook test writes those copies; ``make docs`` renders them and executes only the notebooks whose
copy is missing or older than the notebook, so CI runs every notebook once.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
EXECUTED = ROOT / "build" / "notebooks"
KERNEL_NAME = "explorer-notebooks"
CELL_TIMEOUT_S = 300


def notebook_names() -> list[str]:
    """The notebooks of examples/, sorted by file name."""
    return sorted(p.name for p in EXAMPLES.glob("*.ipynb"))


def write_kernel_spec(directory: Path):
    """A kernelspec in ``directory`` that launches this interpreter (the venv's, not whatever ``python3``
    is on PATH) with the repository root on its PYTHONPATH; returns a KernelSpecManager that finds it."""
    from jupyter_client.kernelspec import KernelSpecManager

    spec_dir = Path(directory) / KERNEL_NAME
    spec_dir.mkdir(parents=True, exist_ok=True)
    env = {"PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
           "PYTHONWARNINGS": "ignore"}
    (spec_dir / "kernel.json").write_text(json.dumps({
        # the kernel's own warnings ("running over TCP without encryption", "Parent appears to have exited"
        # at shutdown) are about this headless runner, not the notebook: only errors get through
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}", "--IPKernelApp.log_level=ERROR"],
        "display_name": "inductor-explorer notebooks",
        "language": "python",
        "env": env,
    }))
    return KernelSpecManager(kernel_dirs=[str(spec_dir.parent)])


def execute(name: str, specs) -> tuple[nbformat.NotebookNode, float]:
    """Run examples/``name`` top to bottom in a fresh kernel whose working directory is examples/;
    returns the notebook with its outputs and the seconds it took. Cells that raise leave their error
    as an output (see ``errors_of``)."""
    from jupyter_client.manager import KernelManager
    from nbclient import NotebookClient

    nb = nbformat.read(EXAMPLES / name, as_version=4)
    km = KernelManager(kernel_name=KERNEL_NAME, kernel_spec_manager=specs)
    client = NotebookClient(nb, km=km, timeout=CELL_TIMEOUT_S, allow_errors=True,
                            resources={"metadata": {"path": str(EXAMPLES)}})
    started = time.perf_counter()
    try:
        client.execute()
    finally:
        # nbclient shuts down only kernels it made itself (this one only at exit): each notebook's
        # kernel would otherwise stay alive, holding its memory, until the whole test session ends.
        if km.has_kernel:
            km.shutdown_kernel(now=True)
    return nb, time.perf_counter() - started


def errors_of(nb: nbformat.NotebookNode) -> list[str]:
    found = []
    for index, cell in enumerate(nb.cells):
        for out in cell.get("outputs", []):
            if out.output_type == "error":
                found.append(f"cell {index}: {out.ename}: {out.evalue}\n{cell.source[:300]}")
    return found


def executed_path(name: str, folder: Path = EXECUTED) -> Path:
    return Path(folder) / name


def is_fresh(name: str, folder: Path = EXECUTED) -> bool:
    """Whether the executed copy of ``name`` exists and is newer than the notebook in examples/."""
    copy = executed_path(name, folder)
    return copy.exists() and copy.stat().st_mtime > (EXAMPLES / name).stat().st_mtime


def save_executed(nb: nbformat.NotebookNode, name: str, folder: Path = EXECUTED) -> Path:
    """Write the executed notebook to ``folder/name`` (atomically: a reader never sees half a file)."""
    path = executed_path(name, folder)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{name}.{os.getpid()}.partial")
    nbformat.write(nb, partial)
    partial.replace(path)
    return path
