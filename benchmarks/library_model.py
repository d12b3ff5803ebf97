"""A model the way users bring one: a transformers Llama built from its config, in bf16, on one GPU, at the
size they run (32 layers, hidden 4096: 5.9 B parameters; 2 x 512 tokens), called from a script's function.

In one process, after one plain compile to warm the process up:

1. **capture cost**: plain ``torch.compile`` and ``explorer.compile(..., cache=False)`` (Inductor's caches off
   for both), Dynamo reset before each, alternating plain, explorer, explorer, plain, ...; the median of the
   pairs' ratios;
2. **profile against CUDA events**: ``c.profile(runs=20)``'s device time per call next to CUDA events around
   back-to-back calls of the compiled function (``tests/plain_timing.py``'s way, on the capture's own callable);
3. **the matmuls' lines**: each extern matmul's time on the FX node of its ``nn.Linear`` call, and that node's
   line in ``modeling_llama.py`` (counted: how many land whole there);
4. **lines**: the top source lines, and the call site's share (``p.lines("user")``);
5. **numerics**: ``c.check_numerics()`` seconds and its first divergent kernel (an extern kernel never may be);
6. **the trace**: ``c.save`` as ``.json.gz`` (``--save``), whose first view ``benchmarks/render.py --trace``
   measures in Chromium on any machine.

    python benchmarks/library_model.py [--layers 32] [--hidden 4096] [--batch 2] [--tokens 512] [--pairs 3]
                                       [--save llama.json.gz] [--record ...]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import explorer  # noqa: E402
from benchmarks import recording  # noqa: E402
from compiler._torch import inductor_config  # noqa: E402
from compiler.model import provenance  # noqa: E402
from compiler.model.formatting import where  # noqa: E402
from compiler.runs import replay  # noqa: E402

NO_CACHES = {"force_disable_caches": True}


def build(layers: int, hidden: int, device: str) -> torch.nn.Module:
    """LlamaForCausalLM from a Llama-2-7B-shaped config (intermediate 11008 at hidden 4096), random weights."""
    import transformers

    config = transformers.LlamaConfig(hidden_size=hidden, intermediate_size=hidden * 11008 // 4096,
                                      num_hidden_layers=layers, num_attention_heads=max(1, hidden // 128),
                                      num_key_value_heads=max(1, hidden // 128), vocab_size=32000,
                                      max_position_embeddings=4096)
    config._attn_implementation = "sdpa"
    torch.manual_seed(0)
    with torch.device(device):
        previous = torch.get_default_dtype()
        torch.set_default_dtype(torch.bfloat16)
        try:
            return transformers.LlamaForCausalLM(config).eval()
        finally:
            torch.set_default_dtype(previous)


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def _timed(fn, device: str) -> tuple[float, object]:
    torch._dynamo.reset()
    _sync(device)
    start = time.perf_counter()
    value = fn()
    _sync(device)
    return time.perf_counter() - start, value


def cuda_events_ms(c, calls: int = 20, loops: int = 3) -> float:
    """Milliseconds per call of the capture's compiled callable: CUDA events around ``calls`` back-to-back
    calls, the median of ``loops`` loops, after warm-up calls."""
    run = replay.runner(c)
    for _ in range(5):
        run()
    torch.cuda.synchronize()
    times = []
    for _ in range(loops):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(calls):
            run()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / calls)
    return statistics.median(times)


def matmul_lines(c, p) -> tuple[int, int, list[str]]:
    """(extern matmuls whose whole time is on the one FX node that multiplies, an nn.Linear call or the rotary
    embedding's ``@``, with a line in modeling_llama.py; matmuls; the ones that are not, described)."""
    landed, total, misses = 0, 0, []
    for graph in c.graphs:
        fx = {n.name: n for n in graph.fx.nodes}
        pg = {n.name: n for n in graph.post_grad.nodes}
        for kernel in graph.kernels:
            if kernel.language != "extern" or "mm" not in kernel.name:
                continue
            total += 1
            linears = [f for f in provenance.computing_fx_nodes(kernel, pg)
                       if fx[f].target.endswith("linear") or "matmul" in fx[f].target]
            node_ms = p.fx_node_ms.get(graph.id, {}).get(linears[0], 0.0) if len(linears) == 1 else 0.0
            line = fx[linears[0]].user_line if len(linears) == 1 else None
            whole = abs(node_ms - p.ms(kernel)) <= 1e-6 * max(1.0, p.ms(kernel))
            if whole and line and line[0].endswith("modeling_llama.py"):
                landed += 1
            else:
                misses.append(f"{kernel.id}: {node_ms:.4f} of {p.ms(kernel):.4f} ms on {where(line)}")
    return landed, total, misses


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=32)
    parser.add_argument("--hidden", type=int, default=4096)
    parser.add_argument("--batch", type=int, default=2)
    parser.add_argument("--tokens", type=int, default=512)
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--save", type=Path, default=None, help="write the capture's trace here (.json.gz)")
    recording.add_argument(parser)
    args = parser.parse_args()
    device = args.device
    model = build(args.layers, args.hidden, device)
    params = sum(p.numel() for p in model.parameters()) / 1e9
    ids = torch.randint(0, 32000, (args.batch, args.tokens), device=device)

    def step(input_ids):
        return model(input_ids).logits

    def plain():
        with inductor_config.patched(NO_CACHES):
            return torch.compile(step)(ids)

    def capture():
        return explorer.compile(step, ids, cache=False)

    notes = [f"{args.layers} layers, hidden {args.hidden}, {params:.2f} B parameters, bf16, "
             f"{args.batch} x {args.tokens} tokens, torch {torch.__version__}"]
    with torch.no_grad():
        warm, _ = _timed(plain, device)
        plains, captures, c = [], [], None
        for pair in range(args.pairs):
            order = ("plain", "explorer") if pair % 2 == 0 else ("explorer", "plain")
            for mode in order:
                seconds, value = _timed(plain if mode == "plain" else capture, device)
                (plains if mode == "plain" else captures).append(seconds)
                if mode == "explorer":
                    c = value
                print(f"pair {pair}: {mode} {seconds:.2f} s", flush=True)
        ratios = [e / p for e, p in zip(captures, plains)]
        assert c is not None
        profiled, p = _timed(lambda: c.profile(runs=20), device)
        events = cuda_events_ms(c) if device.startswith("cuda") else float("nan")
        landed, matmuls, misses = matmul_lines(c, p)
        user = p.lines("user")
        checked, report = _timed(c.check_numerics, device)
    first = report.first_divergent
    first_kind = c.graphs[0].kernel(first.split("/")[-1]).language if first else None
    saved_s = None
    if args.save is not None:
        saved_s, _ = _timed(lambda: c.save(args.save), device)

    table = recording.Table(["figure", "value", "target"], title="a library model at 7B scale")
    table.add("plain compile s (median)", f"{statistics.median(plains):.2f}", "")
    table.add("capture s (median)", f"{statistics.median(captures):.2f}", "")
    table.add("capture / plain (median of pairs)", f"{statistics.median(ratios):.3f}", "<= 1.05")
    table.add("pair ratios", " ".join(f"{r:.3f}" for r in ratios), "")
    table.add("profile ms per call / CUDA events", f"{p.total_ms:.3f} / {events:.3f} = {p.total_ms / events:.3f}",
              "within 10%")
    table.add("extern matmuls whole on their own line", f"{landed} of {matmuls}", "all")
    table.add("call site's share (user depth)", f"{max(user.values(), default=0) / max(p.attributed_ms, 1e-9):.1%}",
              "")
    table.add("numerics s", f"{checked:.2f}", "<= 2")
    table.add("first divergent kernel", f"{first} ({first_kind})" if first else "none", "not extern")
    table.add("profile s", f"{profiled:.2f}", "")
    if saved_s is not None:
        table.add("save s / gz MB", f"{saved_s:.2f} / {args.save.stat().st_size / 1e6:.2f}", "")
    lines = recording.Table(["line", "ms per call", "share"], title="top source lines")
    for line, ms in p.top_lines(8):
        lines.add(where(line), f"{ms:.3f}", f"{ms / p.attributed_ms:.1%}")
    print(table.text())
    print(lines.text())
    for miss in misses[:10]:
        print("  not whole on its line:", miss)
    print("warm-up plain compile", f"{warm:.2f} s;", notes[0])
    recording.record(args, [table, lines], device=device, notes=notes + [f"warm-up plain compile {warm:.2f} s"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
