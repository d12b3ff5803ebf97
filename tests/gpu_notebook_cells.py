"""Run the code cells of notebooks in examples/ on a machine without Jupyter (the GPU machine).

    PYTHONPATH=$PWD python -m tests.gpu_notebook_cells 03_matmul.ipynb 08_memory_and_ir.ipynb

Each notebook's cells run in order in one namespace that is ``__main__``, as in a Jupyter kernel, with
the working directory examples/, and each cell's source registered with linecache as IPython does (so
captured user lines resolve). Magic cells are skipped and said so. Prints each cell's outcome, the
output of GPU cells and of the exercises' checks; exits non-zero when a cell raised. Run one notebook
per process: Dynamo keeps a reference to the ``__main__`` it first saw.
"""

from __future__ import annotations

import contextlib
import io
import json
import linecache
import os
import sys
import time
import traceback
import types
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def run(name: str) -> int:
    """Run notebook ``name``'s code cells; returns how many raised."""
    cells = [c for c in json.loads((EXAMPLES / name).read_text())["cells"] if c["cell_type"] == "code"]
    main = types.ModuleType("__main__")
    sys.modules["__main__"] = main
    namespace = main.__dict__
    namespace["display"] = print
    failed = 0
    print(f"=== {name}", flush=True)
    for index, cell in enumerate(cells):
        source = "".join(cell["source"])
        if source.lstrip().startswith(("%", "!")):
            print(f"[{index}] skipped (magic): {source.splitlines()[0]}")
            continue
        filename = f"<cell {name}[{index}]>"
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        out, started = io.StringIO(), time.perf_counter()
        try:
            with contextlib.redirect_stdout(out):
                exec(compile(source, filename, "exec"), namespace)
            status = "ok"
        except Exception:
            status = "ERROR\n" + traceback.format_exc(limit=-4)
            failed += 1
        gpu = "cuda" in source
        print(f"[{index}] {status} {time.perf_counter() - started:.1f}s{' (GPU cell)' if gpu else ''}")
        text = out.getvalue()
        if gpu or status != "ok" or "checked" in text:
            print("    " + text[-1500:].replace("\n", "\n    "))
    return failed


if __name__ == "__main__":
    os.chdir(EXAMPLES)
    sys.path.insert(0, str(EXAMPLES.parent))
    raised = sum(run(name) for name in sys.argv[1:])
    print("cells that raised:", raised)
    sys.exit(1 if raised else 0)
