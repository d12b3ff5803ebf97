"""What the conformance harness compiles: PyTorch's own op database, real models, and programs whose
ownership is known exactly (the README tour, a scatter of a cumsum's sine, ``torch.cond``, GPT-2).

A case is a function of tensors and its inputs; ``backward`` cases also run a backward pass. A builder
run under ``on(device)`` makes its tensors and modules there (``torch.device`` as the default device).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

import torch
import torch.utils._pytree as pytree

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks import real_models  # noqa: E402


@dataclass
class Case:
    name: str
    target: Any
    inputs: tuple[Any, ...]
    backward: bool = False
    dynamic: bool = False
    atol: float = 1e-4
    random: bool = False  # outputs come from torch's RNG or uninitialized memory: compiled and eager differ
    config: dict[str, Any] | None = None  # explorer.compile's toggles


# ------------------------------------------------------------------------------ programs with known owners


def tour(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    y = x @ w
    return torch.nn.functional.gelu(y + b)


def scatter_sine(x: torch.Tensor, order: torch.Tensor) -> torch.Tensor:
    s, idx = torch.sort(x, 1)
    y = torch.scatter(x, 1, order, torch.cumsum(x * 2, 1).sin())
    z = torch.zeros_like(x).scatter_add(1, idx, s)
    return y + z


def one_line_branches(x: torch.Tensor) -> torch.Tensor:
    return torch.cond(x.sum() > 0,
                      lambda t: (t - 1) * 2,
                      lambda t: t * 3,
                      (x,))


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True) * 2


def known_cases() -> dict[str, Callable[[], Case]]:
    torch.manual_seed(0)
    return {
        "tour": lambda: Case("tour", tour, (torch.randn(16, 32), torch.randn(32, 48), torch.randn(48))),
        "scatter_sine": lambda: Case("scatter_sine", scatter_sine,
                                     (torch.randn(8, 16), torch.argsort(torch.randn(8, 16), 1))),
        "cond_one_line_branches": lambda: Case("cond_one_line_branches", one_line_branches, (torch.randn(8, 8),)),
    }


def gpu_cases() -> dict[str, Callable[[], Case]]:
    """What only a GPU compiles: a matmul template under max-autotune, SDPA's flash (half precision) and
    memory-efficient (float32) kernels, a persistent reduction."""
    def qkv(dtype: torch.dtype) -> tuple[torch.Tensor, ...]:
        return tuple(torch.randn(2, 4, 128, 64, dtype=dtype) for _ in range(3))

    return {
        "tour_max_autotune": lambda: Case("tour_max_autotune", tour,
                                          (torch.randn(64, 128), torch.randn(128, 256), torch.randn(256)),
                                          config={"max_autotune": True}, atol=1e-2),
        "sdpa_flash": lambda: Case("sdpa_flash", attention, qkv(torch.float16), atol=1e-2),
        "sdpa_efficient": lambda: Case("sdpa_efficient", attention, qkv(torch.float32), atol=1e-3),
        "softmax_rows": lambda: Case("softmax_rows", lambda x: torch.softmax(x * 2, -1) + 1, (torch.randn(256, 512),)),
    }


# ------------------------------------------------------------------------------------------- real models


def model_cases(names: list[str] | None = None) -> dict[str, Callable[[], Case]]:
    """The models of benchmarks/real_models.py (built from configs, nothing downloaded); torchvision's only
    where torchvision imports."""
    out = {}
    for name, build in real_models.MODELS.items():
        if names is not None and name not in names:
            continue

        def make(name: str = name, build: Callable[[], Any] = build) -> Case:
            case = build()
            return Case(name, case.target, case.inputs, backward=case.backward, dynamic=case.dynamic, atol=max(case.atol, 1e-4))

        out[name] = make
    return out


def on(device: str, build: Callable[[], Case | None]) -> Callable[[], Case | None]:
    """``build`` with every tensor and module it makes on ``device``."""
    def built() -> Case | None:
        with torch.device(device):
            return build()

    return built


# --------------------------------------------------------------------------------------- the op database

# the slice CI runs (and the GPU test): ops whose kernels differ from torch's records in every way a rule of
# docs/ownership.md accepts: fallbacks that scatter into a copy or write without a provenance handle,
# views and multi-output getitems, cats written in place, split reductions, rewrites, dead nodes
SLICE_OPS = ["scatter_add", "index_put", "gradient", "fft.fft2", "sort", "var_mean", "nn.functional.layer_norm",
             "nn.functional.linear", "nn.functional.max_pool2d", "max_pool2d_with_indices_backward",
             "nn.functional.interpolate.bicubic", "quantile"]

# ops whose outputs are drawn from torch's RNG or are uninitialized memory
_RANDOM = ("bernoulli", "normal", "rand", "randn", "randint", "dropout", "multinomial", "uniform", "poisson",
           "exponential", "cauchy", "geometric", "log_normal", "rrelu", "randperm", "empty")


def op_names() -> list[str]:
    from torch.testing._internal.common_methods_invocations import op_db

    return [_op_name(op) for op in op_db]


def _op_name(op: Any) -> str:
    return op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")


def op_cases(names: list[str] | None = None, device: str = "cpu") -> Iterator[tuple[str, Callable[[], Case | None]]]:
    """The first sample of each op of ``op_db`` on ``device`` (float32 where the op takes it), as a function
    of its tensors. A builder returns None for an op with no sample there."""
    from torch.testing._internal.common_methods_invocations import op_db

    wanted = set(names) if names is not None else None
    for op in op_db:
        name = _op_name(op)
        if wanted is not None and name not in wanted:
            continue
        yield f"op:{name}", (lambda op=op, name=name: _op_case(op, name, device))


def _op_case(op: Any, name: str, device: str) -> Case | None:
    kind = device.split(":")[0]
    dtype = next((d for d in (torch.float32, torch.int64, torch.bool) if op.supports_dtype(d, kind)), None)
    if dtype is None:
        return None
    torch.manual_seed(0)
    sample = next(iter(op.sample_inputs(device, dtype, requires_grad=False)), None)
    if sample is None:
        return None
    structure = (sample.input, sample.args, sample.kwargs)
    leaves, spec = pytree.tree_flatten(structure)
    positions = [i for i, leaf in enumerate(leaves) if isinstance(leaf, torch.Tensor)]
    fixed = list(leaves)
    call = op.op

    def fn(*tensors: torch.Tensor) -> Any:
        values = list(fixed)
        for position, tensor in zip(positions, tensors):
            values[position] = tensor
        first, args, kwargs = pytree.tree_unflatten(values, spec)
        return call(first, *args, **kwargs)

    fn.__name__ = fn.__qualname__ = name.replace(".", "_")
    return Case(f"op:{name}", fn, tuple(leaves[i].clone() for i in positions),
                random=any(word in name for word in _RANDOM), atol=1e-3)
