"""What ``explorer.watch()`` costs the loop it watches: the same loop run plain and watched, in alternating
pairs, the median of the per-pair time ratios (watched / plain).

A watch adds, per step, the step mark (``w.step()``: a snapshot of each compiled graph's call count) and,
per call of a compiled graph, one counter increment, with one call in ``sample_every`` timed. Its records
are read only while something compiles, so a loop that stopped compiling pays only these. Two loops:

- ``tiny``: ``x * 2 + 1`` on 16 floats, one compiled call per step: the worst case, where the step is the
  graph's call alone (a few microseconds of Python around a tiny kernel);
- ``mlp``: a training step of a 2-layer MLP (64x256 @ 256x256, forward compiled, backward, an SGD update).

Each loop is compiled first (the plain one outside any watch, the watched one inside a watch: the watch
counts only graphs compiled while it was active) and warmed up; each round then times ``--steps`` steps
three ways, the order rotating: plain, watched (``w.step()`` after each step), and "found" (inside a
watch, no step marks: the steps the watch finds itself, one per call of the outermost compiled frame,
told by the per-call counter). The ratios are per round, against that round's plain.

    python benchmarks/watch_cost.py [--steps 300] [--pairs 15] [--device cpu]

Measured 2026-11-27 on an H100 host (16 cores, torch 2.11, Python 3.12), medians of 15 rounds
(``--steps 1000`` on CPU, ``--steps 500 --device cuda``), when the third mode, a watch without marks,
ended no step (the counter alone: "counted-only"):

    cpu   tiny  plain 12.6 us/step  watched 16.5  ratio 1.250 (1.142-1.752)  counted-only 1.085
    cpu   mlp   plain 526.3 us/step watched 498.2 ratio 0.995 (0.799-1.254)  counted-only 0.980
    cuda  tiny  plain 31.6 us/step  watched 40.3  ratio 1.232 (0.878-1.804)  counted-only 1.073
    cuda  mlp   plain 948.9 us/step watched 1000.4 ratio 1.054 (0.902-1.304) counted-only 0.992
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import types
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

import explorer  # noqa: E402


def _tiny(x):
    return x * 2 + 1


def _mlp(x, w1, w2):
    return (torch.relu(x @ w1) @ w2).square().mean()


def _copy(fn, name):
    """``fn`` with a code object of its own: Dynamo keeps one cache per code object."""
    return types.FunctionType(fn.__code__.replace(co_name=name), fn.__globals__, name)


def loops(device: str):
    x16 = torch.randn(16, device=device)
    x = torch.randn(64, 256, device=device)
    weights = [torch.randn(256, 256, device=device, requires_grad=True) for _ in range(2)]

    def tiny_step(f):
        f(x16)

    def mlp_step(f):
        loss = f(x, *weights)
        loss.backward()
        with torch.no_grad():
            for w in weights:
                w -= 1e-4 * w.grad
                w.grad = None

    return {"tiny": (_tiny, tiny_step), "mlp": (_mlp, mlp_step)}


def run(step, f, steps: int, w=None) -> float:
    start = time.perf_counter()
    if w is None:
        for _ in range(steps):
            step(f)
    else:
        for _ in range(steps):
            step(f)
            w.step()
    return time.perf_counter() - start


def measure(name: str, fn, step, steps: int, pairs: int) -> dict[str, float]:
    plain = torch.compile(_copy(fn, f"{name}_plain"))
    watched = torch.compile(_copy(fn, f"{name}_watched"))
    for _ in range(3):
        step(plain)
    with explorer.watch(live=False) as warm:
        for _ in range(3):
            step(watched)
            warm.step()
    assert warm.compiles, "the watched loop must compile inside a watch"
    modes = ("plain", "watched", "found")
    times: dict[str, list[float]] = {mode: [] for mode in modes}
    for pair in range(pairs):
        order = modes[pair % 3:] + modes[:pair % 3]  # each mode first, second and third in turn
        for mode in order:
            if mode == "plain":
                times[mode].append(run(step, plain, steps))
            else:
                with explorer.watch(live=False) as w:  # "found": no step marks, one step per compiled call
                    times[mode].append(run(step, watched, steps, w if mode == "watched" else None))
                assert sum(fr.calls for fr in w.frames) == steps and len(w.steps) == steps, w
    ratios = [w / p for w, p in zip(times["watched"], times["plain"])]
    found = [c / p for c, p in zip(times["found"], times["plain"])]
    return {"plain us/step": statistics.median(times["plain"]) / steps * 1e6,
            "watched us/step": statistics.median(times["watched"]) / steps * 1e6,
            "median ratio": statistics.median(ratios), "min ratio": min(ratios), "max ratio": max(ratios),
            "found-steps median ratio": statistics.median(found)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--pairs", type=int, default=15)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    explorer.progress.off()
    print(f"torch {torch.__version__}, {args.device}, {args.steps} steps x {args.pairs} rounds (plain, watched, found; order rotating)")
    for name, (fn, step) in loops(args.device).items():
        result = measure(name, fn, step, args.steps, args.pairs)
        print(f"{name:5s} " + "  ".join(f"{k} {v:.3f}" if "ratio" in k else f"{k} {v:.1f}" for k, v in result.items()))


if __name__ == "__main__":
    main()
