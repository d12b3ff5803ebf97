"""Record one small program's trace under the torch this interpreter has, for diffs across torch versions.

    PYTHONPATH=. .venv/bin/python -m tests.record_version_traces                   # -> tests/fixtures/
    PYTHONPATH=. .compat/torch-2.14.1/bin/python -m tests.record_version_traces
    PYTHONPATH=. python -m tests.record_version_traces --out out/version-diff      # `make version-diff`

Each run writes ``version_<torch>.json.gz`` (``2.13.0``, the local build tag dropped): ``Block`` below
compiled on CPU, profiled and checked against eager, its paths neutralized (tests/record_paths.py). The
program has what a version diff pairs: two extern matmuls, a pointwise op fused after one, a residual add
fused into a layer norm and a softmax (reductions). tests/unit/test_version_diff.py reads the fixtures
of 2.13.0 and 2.14.1 and pairs their kernels by the lines below, whose text it finds in the traces.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import torch
from torch import nn

import explorer
from tests.record_paths import neutralize_file

FIXTURES = Path(__file__).parent / "fixtures"


class Block(nn.Module):
    """Linear, relu, Linear, residual add, LayerNorm, scaled softmax: one line per kernel-worth of work."""

    def __init__(self, dim: int = 32, hidden: int = 64) -> None:
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)
        self.norm = nn.LayerNorm(dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.fc1(x))
        y = self.norm(self.fc2(h) + x)
        return torch.softmax(y * 2.0, dim=-1)


def version() -> str:
    """The installed torch's release, without a local build tag (``2.14.1+cu130`` -> ``2.14.1``)."""
    return torch.__version__.split("+")[0]


def record(out: Path) -> Path:
    """Compile, profile and check ``Block`` against eager; save the trace under ``out``, paths neutral. One
    thread: the C++ kernels do not depend on the recording machine's cores, and a shared machine's other
    work does not oversubscribe them (the times stay the kernels' own)."""
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model, x = Block().eval(), torch.randn(16, 32)
    with torch.no_grad():
        c = explorer.compile(model, x)
        c.profile(runs=10, warmup=2)
        c.check_numerics()
    # a CUDA build of torch on a machine without CUDA warns where it found CUDA_HOME: about the machine, not
    # the program, and a path record_paths.py does not rewrite
    c.notes = [n for n in c.notes if "CUDA_HOME" not in n.message]
    out.mkdir(parents=True, exist_ok=True)
    path = c.save(out / f"version_{version()}.json.gz")
    neutralize_file(path)  # the checkout, site-packages and Inductor's cache: tests/record_paths.py
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=FIXTURES, help="where to write the trace (default: tests/fixtures)")
    path = record(parser.parse_args().out)
    print(f"{path} ({path.stat().st_size} bytes, torch {torch.__version__})")


if __name__ == "__main__":
    main()
