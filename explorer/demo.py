"""The built-in example: a small pre-norm MLP block, compiled and shown stage by stage."""

from __future__ import annotations

import torch
from torch import nn


class MLPBlock(nn.Module):
    """LayerNorm -> Linear -> GELU -> Linear, with a residual: matmuls, a reduction and pointwise ops."""

    def __init__(self, dim: int = 64, hidden: int = 128) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.up = nn.Linear(dim, hidden)
        self.down = nn.Linear(hidden, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.norm(x)
        h = torch.nn.functional.gelu(self.up(h))
        return x + self.down(h)


def example() -> tuple[nn.Module, torch.Tensor]:
    torch.manual_seed(0)
    return MLPBlock().eval(), torch.randn(8, 64)
