"""A 2-rank torch.compile job whose ranks compile differently (run it under torchrun with TORCH_TRACE).

    TORCH_TRACE=/tmp/trace INDUCTOR_PROVENANCE=1 \\
        torchrun --standalone --nproc-per-node 2 examples/two_ranks.py --backend gloo

then ``explorer.load_trace("/tmp/trace")`` (or ``python -m explorer trace /tmp/trace``).

Each rank compiles ``Block``: a Linear and a ReLU, an ``all_reduce`` inside the compiled region, a sum.
Rank 1 takes a branch the other ranks do not: two more ops and a print, which breaks the graph. Then
every rank calls the block again; rank 1 passes another ``n``, so only rank 1 recompiles. The tests
(tests/capture/test_load_trace.py) and examples/07_dynamo_and_ranks.ipynb load its logs and find exactly
these divergences. ``--backend nccl`` runs the same with one GPU per rank
(tests/record_trace_fixtures.py records it).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import torch
import torch.distributed as dist
from torch import nn


class Block(nn.Module):
    def __init__(self, dim: int = 16) -> None:
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor, rank: int, n: int) -> torch.Tensor:
        h = torch.relu(self.fc(x)) * n
        dist.all_reduce(h)
        if rank == 1:
            h = h * 2 + 1
            print(f"rank {rank} takes its own branch")  # a graph break on rank 1 only
        return h.sum(-1)


def launch(trace_dir: str | Path, backend: str = "gloo", nproc: int = 2, timeout: float = 600) -> subprocess.CompletedProcess:
    """Run this job under torchrun with its structured trace written to ``trace_dir`` (one log per rank)."""
    from explorer import trace_env

    # Every rank compiles its graphs itself: a graph served from Inductor's FX graph cache (or AOTAutograd's) would
    # leave that rank's log without its kernels. The C++ build cache stays on: it only spares g++ a kernel whose
    # source another rank (or an earlier run) already built.
    env = {**os.environ, **trace_env(trace_dir), "TORCHINDUCTOR_FX_GRAPH_CACHE": "0", "TORCHINDUCTOR_AUTOGRAD_CACHE": "0"}
    if backend == "nccl":  # never NVLink multicast (NVLS)
        env.update(NCCL_NVLS_ENABLE="0", TORCH_SYMM_MEM_DISABLE_MULTICAST="1", NVSHMEM_DISABLE_NVLS="1")
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc-per-node={nproc}",
               str(Path(__file__).resolve()), "--backend", backend]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--backend", choices=("gloo", "nccl"), default="gloo")
    args = parser.parse_args()
    dist.init_process_group(args.backend)
    rank = dist.get_rank()
    if args.backend == "nccl":
        device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", rank)))
        torch.cuda.set_device(device)
    else:
        device = torch.device("cpu")
    torch.manual_seed(0)
    torch.set_grad_enabled(False)  # an in-place all_reduce of a tensor autograd saved is not allowed
    model = torch.compile(Block().to(device))
    x = torch.randn(4, 16, device=device)
    first = model(x, rank, 1)
    second = model(x, rank, 1 if rank != 1 else 2)  # rank 1 recompiles for n=2
    print(f"rank {rank}: {tuple(first.shape)} {tuple(second.shape)}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
