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


def rounding_feeds_the_math(cpp_source: str) -> bool:
    """Whether an ``emulate_precision_casts`` C++ kernel converts its bfloat16-rounded values back to
    float for the next op. The C++ backend of torch 2.11 and 2.12 emits the rounding casts but keeps
    computing on the unrounded values (the casts' results are never read), so its outputs equal the
    default build's; later releases round every intermediate as eager does."""
    return "convert<float" in cpp_source


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


def bf16_cancellation(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """A float32 matmul, then catastrophic cancellation after a scale in bfloat16: eager rounds big + 1
    back to big (the 1 is lost), a fused kernel keeping float32 intermediates keeps it."""
    h = x @ w
    big = h.bfloat16() * 1000
    return (big + 1) - big


def bf16_rounding_amplified(x: torch.Tensor, w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """bfloat16 rounding a matmul amplifies. The pointwise kernel of ``h`` keeps float32 between its two
    ops where eager rounds after each: within tolerance. The matmul sums that rounding over 64 products,
    and where its outputs cancel to near zero the sum leaves tolerance, though the matmul adds no error
    of its own."""
    h = x * 1.1 + 0.7
    return h, h @ w


def bf16_amplified_then_cancelled(x: torch.Tensor, w: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """bf16_rounding_amplified, then a kernel whose own error leaves tolerance (it cancels as
    bf16_cancellation does)."""
    h, y = bf16_rounding_amplified(x, w)
    big = y * 1000
    return h, y, (big + 1) - big


def embedding_lookup(ids: torch.Tensor, table: torch.Tensor) -> torch.Tensor:
    """Indirect indexing: Inductor checks every index against the table's size inside the kernel."""
    return torch.nn.functional.embedding(ids, table) * 2


def clear_sign_bit(x: torch.Tensor) -> torch.Tensor:
    """view(dtype) both ways: float32 bits as int32, mask the sign bit, back to float32 (|x| + 1)."""
    return (x.view(torch.int32) & 0x7FFFFFFF).view(torch.float32) + 1


def independent_pointwise(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """Three pointwise ops on unrelated inputs: nothing to fuse; combo kernels launch them together."""
    return a.sin() + 1, b.cos() * 2, c.exp() - 1


def matmul_relu(x: torch.Tensor) -> torch.Tensor:
    """x @ x.T through relu and a row sum: one extern mm and one fused C++/Triton kernel (sweep tests)."""
    return torch.relu(x @ x.T).sum(-1) + 1


def matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """A plain mm: with an unaligned K, Inductor's shape padding considers padding it (CUDA)."""
    return a @ b


def running_sum(x: torch.Tensor) -> torch.Tensor:
    """cumsum over one long dimension: on CUDA a split scan with a workspace shared by its blocks."""
    return torch.cumsum(x, dim=0)


def _positive_branch(x: torch.Tensor) -> torch.Tensor:
    return x.sin() * 2


def _negative_branch(x: torch.Tensor) -> torch.Tensor:
    return x.cos() + 1


def branches(x: torch.Tensor) -> torch.Tensor:
    """torch.cond: data-dependent control flow, each branch a subgraph Inductor lowers on its own."""
    return torch.cond(x.sum() > 0, _positive_branch, _negative_branch, (x,))
def branch_on_size(x: torch.Tensor) -> torch.Tensor:
    """A branch on a dimension: with dynamic shapes, a guard on that dimension's symbol."""
    y = x * 2
    if x.shape[0] > 4:
        return y.sum(0)
    return y.sum(1)
def two_branches(x: torch.Tensor, w1: torch.Tensor, w2: torch.Tensor) -> torch.Tensor:
    """Two wide matmuls each reduced to a column: run in program order both wide results are live at
    once; reordering for peak memory reduces the first before the second matmul runs."""
    a = x @ w1
    b = x @ w2
    return a.relu().sum(1) + b.relu().sum(1)


class LayerNormMLP(torch.nn.Module):
    """LayerNorm -> Linear + GELU -> Linear: a new user's first model. Each Linear is an extern matmul
    whose input is the kernel before it, so provenance must not hand it that kernel's nodes."""

    def __init__(self, dim: int = 96, hidden: int = 192) -> None:
        super().__init__()
        self.ln = torch.nn.LayerNorm(dim)
        self.fc1 = torch.nn.Linear(dim, hidden)
        self.fc2 = torch.nn.Linear(hidden, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        z = self.ln(x)
        h = torch.nn.functional.gelu(self.fc1(z))
        return self.fc2(h)


def _cancelling_branch(a: torch.Tensor) -> torch.Tensor:
    return (a.to(torch.bfloat16) + 1000.0 - 1000.0).float() * 3


def _plain_branch(a: torch.Tensor) -> torch.Tensor:
    return torch.cos(a) + 1


def cond_after_work(x: torch.Tensor, p: torch.Tensor) -> torch.Tensor:
    """Work before a torch.cond (the operand and the predicate), a branch that loses precision in
    bfloat16 (eager rounds after every op, the fused kernel does not), and work after it."""
    s = x * 2
    z = torch.cond(p.sum() > 0, _cancelling_branch, _plain_branch, (s,))
    return z * 2


def sort_after_pointwise(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """A fallback kernel (aten.sort) whose input is a pointwise kernel's output."""
    y = x * 2 + 1
    values, indices = torch.sort(y, dim=-1)
    return values.cos(), indices


def print_in_loop(x: torch.Tensor) -> torch.Tensor:
    """A graph break inside a loop: Dynamo gives up on the whole function, which runs eagerly."""
    for step in range(3):
        x = x * 2
        print("step", step)
    return x + 1


def data_dependent_if(x: torch.Tensor) -> torch.Tensor:
    y = x.sum()
    if y > 0:
        return x * 2
    return x - 1


def doubling_loop(x: torch.Tensor) -> torch.Tensor:
    """torch.while_loop: the body's kernel runs once per iteration."""
    def keep_going(i: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return i < 3

    def body(i: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return i + 1, v.sin() * 2

    return torch.while_loop(keep_going, body, (torch.zeros((), dtype=torch.int64), x))[1]


def kernel_mix(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """One kernel of each kind a reproducer meets: a matmul whose epilogue is fused with a reduction, a
    scan (an ATen call on CPU, a Triton scan kernel on CUDA) and a pointwise kernel updating its input."""
    y = torch.nn.functional.gelu(x @ w + b)
    total = y.sum(-1)
    running = torch.cumsum(y, dim=1)
    return total, running * 2, torch.sin(x) + 1


def rmsnorm_gate_cumsum(x, weight):
    """RMSNorm, a SiLU gate and a cumsum: a launch-bound GPU program at sub-millisecond sizes in fp16."""
    normed = x * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-6).to(x.dtype) * weight
    gate, up = normed.chunk(2, dim=-1)
    return torch.cumsum(torch.nn.functional.silu(gate) * up, dim=-1)


class DeepMLP(nn.Module):
    """Eight Linear + ReLU layers: a launch-bound program at small batches, whole in one CUDA graph."""

    def __init__(self, width: int = 256, depth: int = 8) -> None:
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(width, width) for _ in range(depth))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = torch.relu(layer(x))
        return x


def mutates_state(x: torch.Tensor, state: torch.Tensor) -> torch.Tensor:
    """Writes into its input ``state``: CUDA graph trees run it without a CUDA graph."""
    y = torch.relu(x) * 2
    state.add_(1)
    return y + state


def cpu_scalar(x: torch.Tensor, s: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """A GPU computation beside one on a 0-dim CPU tensor: graph partitions leave the CPU op out."""
    y = x * 2 + 1
    t = s * 3
    return y, t
