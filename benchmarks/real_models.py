"""Real models nobody here wrote, compiled and checked: outputs, provenance, save/load.

Every model is built from a config or a constructor (random weights, nothing downloaded): Hugging Face
GPT-2, BERT, Llama, T5, Qwen2, ViT and Mixtral (a mixture of experts), torchvision's resnet18 and
mobilenet_v3_small, two training steps, an AdamW step updating parameters in place, dynamic shapes, a graph
break, and the higher-order ops (``torch.cond``, ``while_loop``, a
``nested_compile_region`` called twice, activation checkpointing). For each it prints whether the
compiled outputs match eager, how many kernels are linked to nodes and source lines or explained by
a ``provenance_note`` out of all kernels, how many post-grad nodes several kernels list for a stated
reason (views, split or recomputed ops), and whether the trace survives a JSON round trip.

    python benchmarks/real_models.py [--only gpt2 bert ...] [--list]

Exits non-zero when a model mismatches eager, fails the round trip, has a kernel with missing
provenance or a node two kernels claim for no known reason (kernels own the nodes they compute). torchvision models are skipped (and said so) where torchvision cannot be imported.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

import torch
from torch import nn
from torch.utils.checkpoint import checkpoint

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import explorer  # noqa: E402
from benchmarks import recording  # noqa: E402
from compiler.io import trace as serialize  # noqa: E402


@dataclass
class Case:
    """One model run: ``target(*inputs)``, compiled with these options."""

    target: Any
    inputs: tuple[Any, ...]
    backward: bool = False
    dynamic: bool = False
    atol: float = 1e-4
    note: str = ""
    reference: Callable[[], Any] | None = None  # eager outputs; default: target(*inputs) before compiling


# ------------------------------------------------------------------------------------------- models


def _ids(vocab: int, batch: int = 2, length: int = 16) -> torch.Tensor:
    return torch.randint(0, vocab, (batch, length))


def gpt2() -> Case:
    from transformers import GPT2Config, GPT2LMHeadModel

    config = GPT2Config(n_layer=2, n_embd=64, n_head=4, n_positions=64, vocab_size=500, use_cache=False)
    return Case(GPT2LMHeadModel(config).eval(), (_ids(500),))


def bert() -> Case:
    from transformers import BertConfig, BertModel

    config = BertConfig(num_hidden_layers=2, hidden_size=64, num_attention_heads=4, intermediate_size=128,
                        vocab_size=500, max_position_embeddings=64)
    return Case(BertModel(config).eval(), (_ids(500),))


def llama() -> Case:
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(num_hidden_layers=2, hidden_size=64, num_attention_heads=4, num_key_value_heads=2,
                         intermediate_size=128, vocab_size=500, max_position_embeddings=64, use_cache=False)
    return Case(LlamaForCausalLM(config).eval(), (_ids(500),))


def t5() -> Case:
    from transformers import T5Config, T5ForConditionalGeneration

    config = T5Config(num_layers=2, num_decoder_layers=2, d_model=64, d_kv=16, num_heads=4, d_ff=128,
                      vocab_size=500, use_cache=False)
    model = T5ForConditionalGeneration(config).eval()

    def encode_decode(input_ids: torch.Tensor, decoder_input_ids: torch.Tensor) -> torch.Tensor:
        return model(input_ids=input_ids, decoder_input_ids=decoder_input_ids).logits

    return Case(encode_decode, (_ids(500), _ids(500, length=8)))


def qwen2() -> Case:
    """A LLaMA-style decoder whose q/k/v projections have biases (an addmm each) and grouped-query attention."""
    from transformers import Qwen2Config, Qwen2ForCausalLM

    config = Qwen2Config(num_hidden_layers=2, hidden_size=64, num_attention_heads=4, num_key_value_heads=2,
                         intermediate_size=128, vocab_size=500, max_position_embeddings=64, use_cache=False)
    return Case(Qwen2ForCausalLM(config).eval(), (_ids(500),))


def mixtral() -> Case:
    """A mixture of experts (Mixtral): a router picks two of four expert MLPs per token."""
    from transformers import MixtralConfig, MixtralForCausalLM

    config = MixtralConfig(num_hidden_layers=2, hidden_size=64, num_attention_heads=4, num_key_value_heads=2,
                           intermediate_size=128, vocab_size=500, max_position_embeddings=64, num_local_experts=4,
                           num_experts_per_tok=2, use_cache=False)
    return Case(MixtralForCausalLM(config).eval(), (_ids(500),))


def vit() -> Case:
    """A vision transformer: a convolution cuts patches, then attention blocks."""
    from transformers import ViTConfig, ViTModel

    config = ViTConfig(image_size=32, patch_size=8, num_channels=3, hidden_size=64, num_hidden_layers=2,
                       num_attention_heads=4, intermediate_size=128)
    return Case(ViTModel(config).eval(), (torch.randn(2, 3, 32, 32),))


def gpt2_training_step() -> Case:
    """Forward and backward of GPT-2's language-model loss: the attention's backward kernels too."""
    from transformers import GPT2Config, GPT2LMHeadModel

    config = GPT2Config(n_layer=1, n_embd=64, n_head=4, n_positions=64, vocab_size=500, use_cache=False,
                        resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
    model = GPT2LMHeadModel(config).train()

    def loss(input_ids: torch.Tensor) -> torch.Tensor:
        return model(input_ids=input_ids, labels=input_ids).loss

    return Case(loss, (_ids(500),), backward=True)


def resnet18() -> Case:
    import torchvision

    return Case(torchvision.models.resnet18(num_classes=10).eval(), (torch.randn(1, 3, 64, 64),))


def mobilenet_v3_small() -> Case:
    import torchvision

    return Case(torchvision.models.mobilenet_v3_small(num_classes=10).eval(), (torch.randn(1, 3, 64, 64),))


def bert_training_step() -> Case:
    """Forward and backward of a classification loss: the backward graph's kernels too."""
    from transformers import BertConfig, BertForSequenceClassification

    config = BertConfig(num_hidden_layers=1, hidden_size=64, num_attention_heads=4, intermediate_size=128,
                        vocab_size=500, max_position_embeddings=64, hidden_dropout_prob=0.0,
                        attention_probs_dropout_prob=0.0, num_labels=3)
    model = BertForSequenceClassification(config).train()

    def loss(input_ids: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        return model(input_ids=input_ids, labels=labels).loss

    return Case(loss, (_ids(500), torch.tensor([0, 2])), backward=True)


def adamw_step() -> Case:
    """An optimizer step updating parameters in place: torch.optim's AdamW on a two-layer MLP's parameters,
    its moments and step counts (given as inputs, so that eager and compiled start from the same state)."""
    from torch.optim.adamw import adamw

    torch.manual_seed(0)
    mlp = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 8))
    shapes = [p.shape for p in mlp.parameters()]
    count = len(shapes)

    def step(*tensors: torch.Tensor) -> list[torch.Tensor]:
        params, grads, means, squares, steps = (list(tensors[i:i + count]) for i in range(0, 5 * count, count))
        adamw(params, grads, means, squares, [], steps, foreach=False, capturable=False, differentiable=False,
              fused=None, grad_scale=None, found_inf=None, has_complex=False, amsgrad=False, beta1=0.9, beta2=0.999,
              lr=1e-2, weight_decay=0.01, eps=1e-8, maximize=False)
        return params

    state = [[p.detach().clone() for p in mlp.parameters()], [torch.randn(s) for s in shapes],
             [torch.randn(s) * 0.1 for s in shapes], [torch.rand(s) * 0.1 for s in shapes],
             [torch.tensor(2.0, device="cpu") for _ in shapes]]  # where torch.optim keeps a step count
    return Case(step, tuple(t for part in state for t in part))


def gpt2_dynamic() -> Case:
    """Sequence length as a symbol: kernels with symbolic sizes."""
    case = gpt2()
    case.dynamic = True
    return case


def gpt2_greedy_step() -> Case:
    """One greedy decoding step: ``int()`` of a tensor breaks the graph in two."""
    model = gpt2().target

    def greedy_step(input_ids: torch.Tensor) -> torch.Tensor:
        logits = model(input_ids).logits[:, -1]
        next_id = int(logits[0].argmax())  # a Python int: Dynamo ends the graph here
        return torch.cat([input_ids, input_ids.new_full((input_ids.shape[0], 1), next_id)], dim=1)

    return Case(greedy_step, (_ids(500),), atol=0)


def conv_bn_relu_train() -> Case:
    """nn.Sequential(Conv2d, BatchNorm2d in training mode, ReLU) passed as a module. On CPU Inductor
    copies the weight and input into channels-last first: a kernel made only of graph inputs."""
    model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU()).train()
    return Case(model, (torch.randn(2, 3, 8, 8),))


class Experts(nn.Module):
    """Two MLP experts; ``torch.cond`` on the input's mean picks one (data-dependent control flow)."""

    def __init__(self, dim: int = 32) -> None:
        super().__init__()
        self.a = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))
        self.b = nn.Sequential(nn.Linear(dim, dim), nn.Tanh())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cond(x.mean() > 0, lambda t: self.a(t) * 2, lambda t: self.b(t) - 1, (x,))


def cond_experts() -> Case:
    return Case(Experts().eval(), (torch.randn(4, 32).abs(),))


def while_loop_power() -> Case:
    """``while_loop``: repeated normalized matrix-vector steps until a counter runs out."""
    w = torch.randn(16, 16) / 4

    def power(v: torch.Tensor) -> torch.Tensor:
        def keep_going(i: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
            return i < 5

        def step(i: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            v = torch.tanh(w @ v)
            return i + 1, v / v.norm()

        return torch._higher_order_ops.while_loop(keep_going, step, (torch.tensor(0), v))[1]

    return Case(power, (torch.randn(16),))


class RepeatedRegion(nn.Module):
    """The same block body compiled once (``nested_compile_region``) and invoked for each layer."""

    def __init__(self, dim: int = 32, layers: int = 3) -> None:
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(dim, dim) for _ in range(layers))
        self.norm = nn.LayerNorm(dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = _region(self.norm, layer, x)
        return x


@torch.compiler.nested_compile_region
def _region(norm: nn.Module, layer: nn.Module, x: torch.Tensor) -> torch.Tensor:
    return x + torch.relu(layer(norm(x)))


def invoke_subgraph_layers() -> Case:
    return Case(RepeatedRegion().eval(), (torch.randn(4, 32),))


def checkpointed_mlp() -> Case:
    """Activation checkpointing in a training step: the backward recomputes the checkpointed block."""
    model = nn.Sequential(nn.Linear(32, 64), nn.GELU(), nn.Linear(64, 32))
    x = torch.randn(8, 32, requires_grad=True)

    def loss(x: torch.Tensor) -> torch.Tensor:
        return checkpoint(model, x, use_reentrant=False).pow(2).mean()

    return Case(loss, (x,), backward=True)


MODELS: dict[str, Callable[[], Case]] = {
    "gpt2": gpt2,
    "bert": bert,
    "llama": llama,
    "t5": t5,
    "qwen2": qwen2,
    "vit": vit,
    "mixtral": mixtral,
    "resnet18": resnet18,
    "mobilenet_v3_small": mobilenet_v3_small,
    "bert_training_step": bert_training_step,
    "gpt2_training_step": gpt2_training_step,
    "adamw_step": adamw_step,
    "gpt2_dynamic": gpt2_dynamic,
    "gpt2_graph_break": gpt2_greedy_step,
    "conv_bn_relu_train": conv_bn_relu_train,
    "cond_experts": cond_experts,
    "while_loop": while_loop_power,
    "invoke_subgraph": invoke_subgraph_layers,
    "checkpoint": checkpointed_mlp,
}


# ------------------------------------------------------------------------------------------- checks


def tensors(value: Any) -> list[torch.Tensor]:
    """Every tensor of a nested output (tuples, lists, dicts and Hugging Face ModelOutputs), in order."""
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, Mapping):
        return [t for item in value.values() for t in tensors(item)]
    if isinstance(value, (list, tuple)):
        return [t for item in value for t in tensors(item)]
    return []


def outputs_match(compiled: Any, eager: Any, atol: float) -> bool:
    got, want = tensors(compiled), tensors(eager)
    return len(got) == len(want) and all(
        g.shape == w.shape and torch.allclose(g.detach().float(), w.detach().float(), atol=atol, rtol=1e-3)
        for g, w in zip(got, want))


def round_trips(c: explorer.Compilation) -> bool:
    data = json.loads(json.dumps(c.to_json()))
    return serialize.from_json(data).to_json() == data


@dataclass
class Result:
    name: str
    ok: bool
    matches: bool = False
    round_trip: bool = False
    graphs: int = 0
    kernels: int = 0
    linked: int = 0
    explained: int = 0
    missing: list[str] = field(default_factory=list)
    shared: int = 0  # post-grad nodes several kernels list for a stated reason (views, split or recomputed ops)
    overlaps: list[str] = field(default_factory=list)  # nodes several kernels claim for no known reason
    seconds: float = 0.0
    skipped: str = ""
    compilation: Any = None


def run(name: str) -> Result:
    try:
        case = MODELS[name]()
    except ImportError as error:
        return Result(name, ok=True, skipped=f"{error.name or error} not importable here")
    torch.manual_seed(0)
    with torch.no_grad() if not case.backward else torch.enable_grad():
        eager = case.reference() if case.reference else case.target(*case.inputs)
        started = time.perf_counter()
        c = explorer.compile(case.target, *case.inputs, backward=case.backward, dynamic=case.dynamic,
                             cache=False)  # each model compiled, not served from an earlier run's store
        seconds = time.perf_counter() - started
    report = c.provenance()
    result = Result(name, ok=False, matches=outputs_match(c.outputs, eager, case.atol), round_trip=round_trips(c),
                    graphs=len(c.graphs), kernels=len(report.kernels), linked=report.count("linked"),
                    explained=report.count("explained"),
                    missing=[f"{k.graph}/{k.kernel} lacks {', '.join(k.gaps)}" for k in report.missing],
                    shared=len(report.shared),
                    overlaps=[f"{s.graph}/{s.node} claimed by {', '.join(s.kernels)}" for s in report.overlaps],
                    seconds=seconds, compilation=c)
    result.ok = result.matches and result.round_trip and not result.missing and not result.overlaps
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", choices=list(MODELS), help="run only these models")
    parser.add_argument("--list", action="store_true", help="list the models and exit")
    recording.add_argument(parser)
    args = parser.parse_args(argv)
    if args.list:
        print("\n".join(MODELS))
        return 0
    print(f"torch {torch.__version__}")
    table = recording.Table(["model", "graphs", "matches eager", "linked + explained / kernels", "shared",
                             "claimed twice", "round trip", "s"],
                            align=["left", "right", "center", "right", "right", "right", "center", "right"])
    notes, failed = [], []

    def say(line: str) -> None:  # printed now, and a note of the record
        print(line)
        notes.append(line)

    for name in args.only or MODELS:
        result = run(name)
        if result.skipped:
            say(f"{name} skipped: {result.skipped}")
            continue
        table.add(name, result.graphs, "yes" if result.matches else "no",
                  f"{result.linked} + {result.explained} / {result.kernels}", result.shared, len(result.overlaps),
                  "yes" if result.round_trip else "no", f"{result.seconds:.1f}")
        for line in result.missing:
            say(f"{name} missing: {line}")
        for line in result.overlaps:
            say(f"{name} claimed twice: {line}")
        if not result.ok:
            failed.append(name)
    print(table.text())
    verdict = ("all models matched eager, round-tripped, had every kernel linked or explained and no node claimed by "
               "two kernels without a reason" if not failed else f"FAILED: {', '.join(failed)}")
    say(verdict)
    recording.record(args, [table], notes=notes)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
