"""What torch's structured trace costs a capture: explorer.compile with and without the filter that has
torch build only the trace records the capture reads, against plain torch.compile, in one process.

The capture listens on torch's trace logger for the Dynamo stage; while anything listens, torch builds
every record and its payload (printed graphs, tensor descriptions). ``compiler/_torch/structured_trace.py``
filters them while the capture is the only listener. This script times a training step (forward +
backward) of ``--layers`` transformer blocks (d=256, 8x256 tokens, as in benchmarks/scale.py) three ways,
alternating the order every round, after a warm-up compile of a small block in each mode: the capture
as it is ("filtered"), the capture with the filter off ("unfiltered"), and plain ``torch.compile``.
Caches are bypassed in every mode. Prints each time, the minimum per mode and the ratios.

    python benchmarks/trace_filter.py [--device cuda] [--layers 24] [--rounds 2]
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import explorer  # noqa: E402
from capture_overhead import timed, workloads  # noqa: E402
from compiler._torch import structured_trace  # noqa: E402

ORDER = ("filtered", "unfiltered", "plain")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--layers", type=int, default=24)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    explorer.progress.off()
    loads = workloads(args.device, args.layers)
    fn, inputs, backward = loads["transformer block"]
    timed("explorer", fn, inputs, backward)
    timed("plain", fn, inputs, backward)
    fn, inputs, backward = loads[f"{args.layers} blocks, train"]
    the_filter = structured_trace._only_records_read
    seconds: dict[str, list[float]] = {mode: [] for mode in ORDER}
    try:
        for number in range(args.rounds):
            for mode in ORDER if number % 2 == 0 else ORDER[::-1]:
                structured_trace._only_records_read = (the_filter if mode == "filtered"
                                                       else lambda *a, **k: contextlib.nullcontext())
                seconds[mode].append(timed("plain" if mode == "plain" else "explorer", fn, inputs, backward))
                print(f"round {number} {mode:<10} {seconds[mode][-1]:.2f} s", flush=True)
    finally:
        structured_trace._only_records_read = the_filter
    for mode, values in seconds.items():
        print(f"{mode:<10} " + " ".join(f"{v:.2f}" for v in values) + f"  min {min(values):.2f}")
    best = {mode: min(values) for mode, values in seconds.items()}
    print(f"filtered / plain {best['filtered'] / best['plain']:.3f}, unfiltered / plain "
          f"{best['unfiltered'] / best['plain']:.3f}, filtered / unfiltered {best['filtered'] / best['unfiltered']:.3f}")


if __name__ == "__main__":
    main()
