"""What the conformance harness compiles: PyTorch's own op database, real models, and programs whose
ownership is known exactly (the README tour, a scatter of a cumsum's sine, ``torch.cond``, two attentions
sharing a mask, mutated inputs written back in a loop, AdamW written out, a dead twin of a call, a scaled
``index_put`` inlined into the two kernels on either side of a ``cumsum``).

A case is a function of tensors and its inputs; ``backward`` cases also run a backward pass. A builder
run under ``on(device)`` makes its tensors and modules there (``torch.device`` as the default device).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

import torch
import torch.nn.functional as F
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


def masked_attention_twice(x: torch.Tensor, ids: torch.Tensor, w1: torch.Tensor, w2: torch.Tensor) -> torch.Tensor:
    pos = torch.arange(x.shape[2], device=x.device)
    seg = torch.cumsum(ids != 0, -1)
    mask = (pos[None, :] <= pos[:, None]) & (seg[:, None] == seg[None, :])
    h = F.scaled_dot_product_attention((x @ w1).sin(), x, x, attn_mask=torch.where(mask, 0.0, float("-inf")))
    return F.scaled_dot_product_attention((h @ w2).cos(), h, h, attn_mask=torch.where(mask, 0.0, float("-inf")))


def write_backs_in_a_loop(a: torch.Tensor, b: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    s = a.sum()
    for t, f in ((b, lambda t: (a @ w)[:7, 0]), (a, torch.cos)):
        t.copy_(f(t) * 2)
    return s


def adamw_by_hand(*tensors: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """One AdamW step written out, in place on three parameters and their moments (step 3)."""
    params, grads, means, squares = (tensors[i:i + 3] for i in range(0, 12, 3))
    lr, beta1, beta2, eps, decay, step = 1e-2, 0.9, 0.999, 1e-8, 0.01, 3
    for p, g, m, v in zip(params, grads, means, squares):
        p.mul_(1 - lr * decay)
        m.mul_(beta1).add_(g, alpha=1 - beta1)
        v.mul_(beta2).addcmul_(g, g, value=1 - beta2)
        p.addcdiv_(m, (v / (1 - beta2 ** step)).sqrt().add_(eps), value=-lr / (1 - beta1 ** step))
    return params


def unused_twin(x: torch.Tensor) -> torch.Tensor:
    rows = torch.arange(4, device=x.device); unused = torch.arange(4, device=x.device)  # noqa: E702, F841
    return x + rows


def index_put_scaled_twice(x: torch.Tensor, idx: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    y = x.index_put((idx,), v) * 2
    s = y.sum(1).cumsum(0)
    return y + s[:, None]


def _adamw_inputs() -> tuple[torch.Tensor, ...]:
    shapes = [(8, 16), (16, 4), (4,)]
    params = [torch.randn(s) for s in shapes]
    grads = [torch.randn(s) for s in shapes]
    means = [torch.randn(s) * 0.1 for s in shapes]
    return (*params, *grads, *means, *[torch.rand(s) * 0.1 for s in shapes])


def known_cases() -> dict[str, Callable[[], Case]]:
    torch.manual_seed(0)
    return {
        "tour": lambda: Case("tour", tour, (torch.randn(16, 32), torch.randn(32, 48), torch.randn(48))),
        "scatter_sine": lambda: Case("scatter_sine", scatter_sine,
                                     (torch.randn(8, 16), torch.argsort(torch.randn(8, 16), 1))),
        "cond_one_line_branches": lambda: Case("cond_one_line_branches", one_line_branches, (torch.randn(8, 8),)),
        "masked_attention_twice": lambda: Case(
            "masked_attention_twice", masked_attention_twice,
            (torch.randn(1, 2, 8, 16), torch.tensor([1, 2, 0, 3, 4, 0, 5, 6]), torch.randn(16, 16), torch.randn(16, 16))),
        "write_backs_in_a_loop": lambda: Case("write_backs_in_a_loop", write_backs_in_a_loop,
                                              (torch.randn(8, 8), torch.randn(7), torch.randn(8, 8))),
        "adamw_by_hand": lambda: Case("adamw_by_hand", adamw_by_hand, _adamw_inputs()),
        "unused_twin": lambda: Case("unused_twin", unused_twin, (torch.randn(4),)),
        "index_put_scaled_twice": lambda: Case("index_put_scaled_twice", index_put_scaled_twice,
                                               (torch.randn(8, 16), torch.tensor([1, 5, 2]), torch.randn(3, 16))),
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

# the models CI's slice checks (tests/conformance/test_conformance.py, ``--slice``)
SLICE_MODELS = ["gpt2", "llama"]

# the zoo a GPU run checks (``--gpu``, tests/gpu/test_gpu_conformance.py): Hugging Face models built from
# configs, torchvision's blocks, a training step, an optimizer updating in place, a dynamic-shape compile
GPU_MODELS = ["gpt2", "bert", "llama", "t5", "vit", "mixtral", "resnet18", "mobilenet_v3_small", "bert_training_step",
              "adamw_step", "gpt2_dynamic", "cond_experts"]


def t5_encoder() -> Case:
    """T5's encoder, one layer: its RMSNorms (``T5LayerNorm``) fused with the residual adds they read."""
    from transformers import T5Config, T5EncoderModel

    torch.manual_seed(0)
    config = T5Config(num_layers=1, d_model=64, d_kv=16, num_heads=4, d_ff=128, vocab_size=500, use_cache=False)
    model = T5EncoderModel(config).eval()

    def encode(input_ids: torch.Tensor) -> torch.Tensor:
        return model(input_ids=input_ids).last_hidden_state

    return Case("t5_encoder", encode, (torch.randint(0, 500, (2, 16)),))


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
# views and multi-output getitems, cats written in place, split reductions, rewrites, dead nodes, a call's
# output returned through a view (``linear_cross_entropy``, where torch's op database has it)
SLICE_OPS = ["scatter_add", "index_put", "gradient", "fft.fft2", "sort", "var_mean", "nn.functional.layer_norm",
             "nn.functional.linear", "nn.functional.max_pool2d", "max_pool2d_with_indices_backward",
             "nn.functional.interpolate.bicubic", "quantile", "nn.functional.linear_cross_entropy.chunked"]

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
