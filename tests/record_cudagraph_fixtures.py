"""Re-record the CUDA graph traces kept under tests/fixtures/ (run on a CUDA machine).

    PYTHONPATH=. python -m tests.record_cudagraph_fixtures

Three real compilations with ``mode="reduce-overhead"``, each with what the CPU tests read back
(tests/unit/test_cudagraph_fixtures.py):

- ``gpu_cudagraphs_mlp.json``: ``workloads.DeepMLP`` at batch 8, inference: one partition holding every
  kernel, the CUDA graph tree's warm-up, recording and replays, a call timed with and without CUDA graphs
  (``c.cudagraphs.measure()``) and a profile of the replays (``c.profile()``);
- ``gpu_cudagraphs_mutation.json``: ``workloads.mutates_state``: the tree skips the graph at its first run for
  the input it writes into, the skip linked to ``state.add_(1)``;
- ``gpu_cudagraphs_partitions.json``: ``workloads.cpu_scalar``: a GPU partition captured and the CPU op on a
  0-dim tensor left out, Inductor's reason on its line; then run twice (recorded, replayed).

Paths of the recording machine are made neutral (tests/record_paths.py). A minute or so on an H200.

    PYTHONPATH=. python -m tests.record_cudagraph_fixtures gpu_cudagraphs_mlp   # only this one
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import torch

import explorer
from tests import workloads
from tests.record_paths import neutralize_file

FIXTURES = Path(__file__).parent / "fixtures"


def _mlp() -> explorer.Compilation:
    torch.manual_seed(0)
    model = workloads.DeepMLP().cuda().eval()
    with torch.no_grad():
        c = explorer.compile(model, torch.randn(8, 256, device="cuda"), mode="reduce-overhead", cache=False)
    c.cudagraphs.measure()
    c.profile(runs=10)
    return c


def _mutation() -> explorer.Compilation:
    torch.manual_seed(0)
    x, state = torch.randn(64, 64, device="cuda"), torch.zeros(64, 64, device="cuda")
    c = explorer.compile(workloads.mutates_state, x, state, mode="reduce-overhead", cache=False)
    c.run()
    return c


def _partitions() -> explorer.Compilation:
    torch.manual_seed(0)
    c = explorer.compile(workloads.cpu_scalar, torch.randn(256, device="cuda"), torch.tensor(2.0),
                         mode="reduce-overhead", cache=False)
    c.run()
    c.run()
    return c


RECORDINGS = {"gpu_cudagraphs_mlp": _mlp, "gpu_cudagraphs_mutation": _mutation,
              "gpu_cudagraphs_partitions": _partitions}


def main(only: list[str]) -> None:
    FIXTURES.mkdir(exist_ok=True)
    for name, record in RECORDINGS.items():
        if only and name not in only:
            continue
        started = time.perf_counter()
        c = record()
        path = c.save(FIXTURES / f"{name}.json")
        # kept unpacked and indented, as tests/record_gpu_fixtures.py keeps its traces
        path.write_text(json.dumps(explorer.load(path).to_json(), indent=1) + "\n")
        neutralize_file(path)
        states = ", ".join(f"{g.id} {g.cudagraphs.state.value}" for g in c.graphs if g.cudagraphs is not None)
        print(f"{path}: {c!r}; {states}; {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main(sys.argv[1:])
