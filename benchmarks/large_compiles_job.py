"""A script whose TORCH_TRACE log is made of a few large compilations: what benchmarks/load_trace.py's
``--shape large`` replicates across ranks.

    TORCH_TRACE=/tmp/large INDUCTOR_PROVENANCE=1 python benchmarks/large_compiles_job.py

Three models of 4, 5 and 6 blocks (Linear + LayerNorm + GELU, each arranged its own way), each at two
widths and two batch sizes, a training step each (forward and backward): 12 compilations of a forward
and a backward graph, every one a new compile of its model's ``forward`` (static shapes, so a new width
or batch size recompiles instead of going dynamic). A log of the same size made of these holds about
fifty times fewer compilations than one made of examples/two_ranks.py's, each far larger.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import torch
from torch import nn

WIDTHS = (256, 384)
BATCHES = (8, 32)
TOKENS = 16


class PostNorm(nn.Module):
    """Blocks of Linear -> LayerNorm -> GELU, one after the other."""

    def __init__(self, dim: int, blocks: int = 4) -> None:
        super().__init__()
        self.fcs = nn.ModuleList(nn.Linear(dim, dim) for _ in range(blocks))
        self.norms = nn.ModuleList(nn.LayerNorm(dim) for _ in range(blocks))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for fc, norm in zip(self.fcs, self.norms):
            x = nn.functional.gelu(norm(fc(x)))
        return x


class PreNormResidual(PostNorm):
    """Residual blocks: x + GELU(Linear(LayerNorm(x)))."""

    def __init__(self, dim: int, blocks: int = 5) -> None:
        super().__init__(dim, blocks)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for fc, norm in zip(self.fcs, self.norms):
            x = x + nn.functional.gelu(fc(norm(x)))
        return x


class Expanding(nn.Module):
    """Blocks that widen then narrow: Linear(d, 2d) -> GELU -> Linear(2d, d) -> LayerNorm, residual."""

    def __init__(self, dim: int, blocks: int = 6) -> None:
        super().__init__()
        self.up = nn.ModuleList(nn.Linear(dim, 2 * dim) for _ in range(blocks))
        self.down = nn.ModuleList(nn.Linear(2 * dim, dim) for _ in range(blocks))
        self.norms = nn.ModuleList(nn.LayerNorm(dim) for _ in range(blocks))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for up, down, norm in zip(self.up, self.down, self.norms):
            x = norm(x + down(nn.functional.gelu(up(x))))
        return x


MODELS = (PostNorm, PreNormResidual, Expanding)


def main() -> None:
    if not os.environ.get("TORCH_TRACE"):
        raise SystemExit("run with TORCH_TRACE=<dir> (and INDUCTOR_PROVENANCE=1): this script is the log it writes")
    torch.manual_seed(0)
    torch._dynamo.config.automatic_dynamic_shapes = False  # each width and batch size its own static compile
    for model_class in MODELS:
        for width in WIDTHS:
            model = torch.compile(model_class(width))
            for batch in BATCHES:
                x = torch.randn(batch, TOKENS, width, requires_grad=True)
                model(x).sum().backward()
    print(f"compiled {len(MODELS) * len(WIDTHS) * len(BATCHES)} training steps into {Path(os.environ['TORCH_TRACE'])}",
          file=sys.stderr)


if __name__ == "__main__":
    main()
