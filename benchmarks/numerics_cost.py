"""What c.check_numerics() costs: its wall time against one run of the compiled function.

    PYTHONPATH=. python benchmarks/numerics_cost.py [--rounds 3]
    PYTHONPATH=. python benchmarks/numerics_cost.py --llama-layers 32 [--hidden 64] [--tokens 2x32]

By default on a transformer block (CPU, and the GPU when there is one). With ``--llama-layers`` on a
bfloat16 transformers ``LlamaForCausalLM`` built from its config (random weights, SDPA) on the CPU and
the GPU when there is one; ``--hidden 4096 --llama-layers 32 --tokens 2x512 --device cuda`` is the
7B-scale case of docs/numerics.md. The check runs the compiled function once while copying every buffer a
kernel writes, runs the post-grad graph eagerly twice (same dtypes, and float64), once more on the
compiled program's own buffers (each kernel's local error), and compares. The table also says which
kernel the check names first divergent, and its kind.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import explorer  # noqa: E402
from benchmarks import recording  # noqa: E402
from compiler.runs import replay  # noqa: E402
from tests.workloads import TransformerBlock  # noqa: E402


def block(device: str) -> tuple[Any, tuple[Any, ...], str]:
    torch.manual_seed(0)
    dim, batch, seq = (1024, 8, 512) if device == "cuda" else (256, 4, 128)
    x = torch.randn(batch, seq, dim, device=device)
    return TransformerBlock(dim, 8).eval().to(device), (x,), f"transformer block, input {tuple(x.shape)}"


def llama(device: str, layers: int, hidden: int, tokens: tuple[int, int]) -> tuple[Any, tuple[Any, ...], str]:
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    heads = max(4, hidden // 128)  # Llama 2's proportions: 11008 = 43 * 4096 // 16, and four query heads a key head
    config = LlamaConfig(num_hidden_layers=layers, hidden_size=hidden, intermediate_size=43 * hidden // 16,
                         num_attention_heads=heads, num_key_value_heads=max(2, heads // 4),
                         vocab_size=32000 if hidden >= 1024 else 256,
                         max_position_embeddings=max(64, tokens[1]), use_cache=False, attn_implementation="sdpa")
    with torch.device(device):
        model = LlamaForCausalLM(config).to(torch.bfloat16).eval()
    ids = torch.randint(0, config.vocab_size, tokens, device=device)
    return model, (ids,), (f"bf16 LlamaForCausalLM, {layers} layers, hidden {hidden}, {heads} heads, "
                           f"input ids {tuple(ids.shape)}")


def measure(model: Any, inputs: tuple[Any, ...], device: str, rounds: int) -> tuple[float, float, float, Any, Any]:
    """Median wall seconds of a check, its median CPU seconds (this process's threads: steadier than wall
    time on a machine others share), median seconds of one run, the last report and the compilation."""
    with torch.no_grad():
        c = explorer.compile(model, *inputs)
    run = replay.runner(c)
    runs, checks, cpu = [], [], []
    for _ in range(rounds):
        run()
        replay.synchronize(device)
        started = time.perf_counter()
        run()
        replay.synchronize(device)
        runs.append(time.perf_counter() - started)
        started, started_cpu = time.perf_counter(), time.process_time()
        report = c.check_numerics()
        checks.append(time.perf_counter() - started)
        cpu.append(time.process_time() - started_cpu)
    return statistics.median(checks), statistics.median(cpu), statistics.median(runs), report, c


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--llama-layers", type=int, default=0, help="a bf16 Llama of this many layers instead of the block")
    parser.add_argument("--hidden", type=int, default=64, help="the Llama's hidden size")
    parser.add_argument("--tokens", default="2x32", help="the Llama's input ids, BATCHxLENGTH")
    parser.add_argument("--device", choices=["cpu", "cuda"], action="append", help="only these devices (repeatable)")
    recording.add_argument(parser)
    args = parser.parse_args()
    devices = args.device or (["cpu"] + (["cuda"] if torch.cuda.is_available() else []))
    table = recording.Table(["device", "check s", "check cpu s", "one run s", "ratio", "kernels", "first divergent",
                             "its error"])
    notes = []
    for device in devices:
        if args.llama_layers:
            batch, length = (int(n) for n in args.tokens.split("x"))
            model, inputs, what = llama(device, args.llama_layers, args.hidden, (batch, length))
        else:
            model, inputs, what = block(device)
        check, cpu, run, report, c = measure(model, inputs, device, args.rounds)
        if not args.llama_layers:
            assert report.ok, report
        first = report.kernels[report.first_divergent] if report.first_divergent else None
        # a checkout from before local errors (this script copied there, to time the check before) has no divergence
        kind = getattr(first, "divergence", None)
        table.add(device, f"{check:.3f}", f"{cpu:.3f}", f"{run:.5f}", f"{check / run:.0f}x", str(len(report.kernels)),
                  first.kernel if first else "-", f"{first.language}, {kind.value if kind else 'propagated'}" if first else "-")
        notes.append(f"{device}: {what}")
        del model, inputs, c, report
    print(table.text())
    recording.record(args, [table], device=devices[-1], notes=notes)


if __name__ == "__main__":
    main()
