"""Where a compile's own time goes (c.compile_time) on a real model, and what recording it costs.

Part 1 captures the model once and prints its compile-time report: the split by phase, the frames and
graphs, the costliest lines, modules and kernels, and the suggestions. Part 2 captures it again
``--rounds`` times with the report's recording on and off (``capture.RECORD_COMPILE_TIME``), alternating
which goes first, Dynamo reset before each, and prints the median of each round's on/off ratio (the two
captures of a round ran side by side), of wall time and of CPU time (this process and the compiler
processes it ran: steadier than wall time on a shared machine).

    python benchmarks/compile_time.py [--model gpt2|bert] [--rounds 5] [--record]      # a Hugging Face model, CPU
    python benchmarks/compile_time.py --device cuda --layers 24 [--rounds 3] [--record]  # 24 blocks, fw+bw

The Hugging Face models are built from a small config (no download). ``--layers N`` compiles a training
step (forward + backward) of N transformer blocks (d=256, 8x256 tokens) instead.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import explorer  # noqa: E402
from benchmarks import recording  # noqa: E402
from compiler.pipeline import capture  # noqa: E402
from tests.workloads import TransformerBlock  # noqa: E402


def hugging_face(name: str) -> tuple[torch.nn.Module, tuple, bool]:
    """A small model of the family, from a config (random weights): (module, inputs, backward)."""
    torch.manual_seed(0)
    ids = torch.randint(0, 1000, (2, 64))
    if name == "gpt2":
        from transformers import GPT2Config, GPT2LMHeadModel

        config = GPT2Config(n_layer=2, n_embd=64, n_head=4, n_positions=128, vocab_size=1000, use_cache=False,
                            bos_token_id=0, eos_token_id=0)
        return GPT2LMHeadModel(config).eval(), (ids,), False
    if name == "bert":
        from transformers import BertConfig, BertModel

        config = BertConfig(num_hidden_layers=2, hidden_size=64, num_attention_heads=4, intermediate_size=256,
                            vocab_size=1000, max_position_embeddings=128)
        return BertModel(config).eval(), (ids,), False
    raise SystemExit(f"--model {name!r}: choose gpt2 or bert")


def blocks(layers: int, device: str) -> tuple[torch.nn.Module, tuple, bool]:
    torch.manual_seed(0)
    stack = torch.nn.Sequential(*[TransformerBlock(dim=256, heads=4) for _ in range(layers)]).to(device)
    return stack, (torch.randn(8, 256, 256, device=device, requires_grad=True),), True


def _cpu_seconds() -> float:
    """User + system CPU time of this process and its finished children (the C++ compiler runs)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def captured(model, inputs, backward: bool, record: bool):
    """One capture from a fresh Dynamo state; returns (compilation, wall seconds, CPU seconds)."""
    torch._dynamo.reset()
    capture.RECORD_COMPILE_TIME = record
    try:
        started, cpu = time.perf_counter(), _cpu_seconds()
        # cold: a capture served from the store (every round after the first) compiles nothing
        c = explorer.compile(model, *inputs, backward=backward, progress_display=False, cache=False)
        if inputs[0].is_cuda:
            torch.cuda.synchronize()
        return c, time.perf_counter() - started, _cpu_seconds() - cpu
    finally:
        capture.RECORD_COMPILE_TIME = True


def report_tables(c, wall: float) -> list[recording.Table]:
    report = c.compile_time
    split = recording.Table(["phase", "seconds", "share"], title=f"where {wall:.1f} s of capture went, by phase")
    for category, seconds in sorted(report.categories().items(), key=lambda kv: -kv[1]):
        split.add(category, f"{seconds:.2f}", f"{seconds / report.seconds:.1%}")
    split.add("total", f"{report.seconds:.2f}", f"{report.seconds / wall:.1%} of wall")
    graphs = recording.Table(["graph", "kind", "compile id", "seconds", "cache"], title="per graph (inductor_compile)")
    for g in c.graphs:
        for phase in report.graph(g.id):
            graphs.add(g.id, g.kind, g.compile_id or "", f"{phase.seconds:.2f}", str(phase.args.get("cache_state", "")))
    lines = recording.Table(["line", "seconds", "kernel s", "spread s"], title="top lines")
    for row in report.top_lines(8):
        lines.add(f"{Path(row.file or '?').name}:{row.line}", f"{row.seconds:.2f}", f"{row.kernel_s:.2f}",
                  f"{row.spread_s:.2f}")
    modules = recording.Table(["module", "seconds"], title="top modules")
    for row in report.top_modules(8):
        modules.add(row.key or "(root)", f"{row.seconds:.2f}")
    tables = [split, graphs, lines, modules]
    if report.kernels:
        kernels = recording.Table(["kernel", "autotune s", "compile s", "candidates"], title="top kernels")
        for k in report.top_kernels(8):
            kernels.add(f"{k.graph}/{k.kernel}", f"{k.autotune_s:.2f}", f"{k.compile_s:.2f}", k.candidates)
        tables.append(kernels)
    return tables


def _paired(times: dict[bool, list[float]]) -> float:
    """The median of each round's with/without ratio (the two captures of a round ran side by side)."""
    return statistics.median(on / off for on, off in zip(times[True], times[False]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="gpt2", help="Hugging Face family built from a config: gpt2 or bert")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--layers", type=int, default=0, help="a training step of this many blocks instead")
    parser.add_argument("--rounds", type=int, default=5,
                        help="paired captures with and without recording (0: print the report only)")
    recording.add_argument(parser)
    args = parser.parse_args()
    model, inputs, backward = blocks(args.layers, args.device) if args.layers else hugging_face(args.model)
    name = f"{args.layers} blocks, train" if args.layers else f"{args.model} (config), inference"
    captured(model, inputs, backward, True)  # the first capture in a process pays imports and worker start-up
    c, wall, _ = captured(model, inputs, backward, True)
    tables = report_tables(c, wall)
    for table in tables:
        print(table.text(), end="\n\n")
    for s in c.compile_time.suggestions:
        print(f"suggestion ({s.kind}): {s.message}")
    notes = [f"device {args.device}, torch {torch.__version__}, {args.rounds} paired rounds; model: {name}"]
    if not args.rounds:  # the report alone
        recording.record(args, tables, device=args.device, notes=notes)
        return
    walls: dict[bool, list[float]] = {True: [], False: []}
    cpus: dict[bool, list[float]] = {True: [], False: []}
    for r in range(args.rounds):
        for record in ((True, False) if r % 2 == 0 else (False, True)):
            _, wall_s, cpu_s = captured(model, inputs, backward, record)
            walls[record].append(wall_s)
            cpus[record].append(cpu_s)
    cost = recording.Table(["workload", "without s", "with s", "wall ratio (paired median)", "min wall ratio",
                            "CPU ratio (paired median)"], title="what recording the report costs")
    cost.add(name, f"{statistics.median(walls[False]):.2f}", f"{statistics.median(walls[True]):.2f}",
             f"{_paired(walls):.3f}", f"{min(walls[True]) / min(walls[False]):.3f}", f"{_paired(cpus):.3f}")
    print(cost.text())
    tables.append(cost)
    recording.record(args, tables, device=args.device, notes=notes)


if __name__ == "__main__":
    main()
