"""Small workloads that each exercise one thing Inductor does (shared by tests and benchmarks)."""

from __future__ import annotations

import torch
from torch import nn


def reduction_with_pointwise(x: torch.Tensor) -> torch.Tensor:
    """relu(x * 2 + 1).sum(-1): pointwise ops fused into a reduction."""
    y = torch.relu(x * 2 + 1)
    return y.sum(-1)


def matmul_epilogue(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """An extern mm followed by a fused bias + GELU epilogue kernel."""
    y = x @ w
    return torch.nn.functional.gelu(y + b)


def with_graph_break(x: torch.Tensor) -> torch.Tensor:
    """Two graphs: Dynamo cannot trace the print."""
    y = torch.sin(x) + 1
    print("graph break here")
    return torch.cos(y) * 2


def bf16_roundtrip(x: torch.Tensor) -> torch.Tensor:
    """Pointwise math in bfloat16: emulating eager's rounding adds casts to the kernel."""
    return (x.bfloat16() * 3 + 1).float() * 2


def transposed_add(x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """a + b.t() with a and b realized: loop ordering after fusion fuses b's kernel into the sum (GPU)."""
    a = x * 2
    b = y * 3
    return a, b, a + b.t()


class TinyMLP(nn.Module):
    """LayerNorm + two Linears with parameters (a training step gives forward and backward graphs)."""

    def __init__(self, dim: int = 16, hidden: int = 32) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.fc1(self.norm(x)))
        return self.fc2(h)


class ResidualBlock(nn.Module):
    """x + gelu(fc(norm(x))): stacked, the residual adds feed the next block's norm kernel."""

    def __init__(self, dim: int = 16) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fc = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + torch.nn.functional.gelu(self.fc(self.norm(x)))


class TransformerBlock(nn.Module):
    """A small pre-norm transformer block: attention (scaled_dot_product_attention) + MLP."""

    def __init__(self, dim: int = 64, heads: int = 4) -> None:
        super().__init__()
        self.heads = heads
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.qkv, self.proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
        self.up, self.down = nn.Linear(dim, 4 * dim), nn.Linear(4 * dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(b, t, 3, self.heads, d // self.heads).unbind(2)
        attn = nn.functional.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2))
        x = x + self.proj(attn.transpose(1, 2).reshape(b, t, d))
        return x + self.down(nn.functional.gelu(self.up(self.norm2(x))))


def two_branches(x: torch.Tensor, w1: torch.Tensor, w2: torch.Tensor) -> torch.Tensor:
    """Two wide matmuls each reduced to a column: run in program order both wide results are live at
    once; reordering for peak memory reduces the first before the second matmul runs."""
    a = x @ w1
    b = x @ w2
    return a.relu().sum(1) + b.relu().sum(1)
