"""How fast a toggle change reaches the view: served from the session vs a real recompile.

Two SessionViews on the same compiled code (bf16_roundtrip, 64x128): one over a Session with its
cache, one over a Session without. Each round switches emulate_precision_casts on and off in both,
alternating, and times SessionView.set_toggle from the request to the updated widget (new payload,
diff against the previous compilation, toggle states, status). The cached view compiles each
configuration once (round 0); every later switch is served from the session. Prints medians, the
ratio, and whether the cached figure is under 0.2 s.

    .venv/bin/python benchmarks/toggle.py [--rounds 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from benchmarks import recording  # noqa: E402
from explorer import Session  # noqa: E402
from tests import workloads  # noqa: E402

TOGGLE = "emulate_precision_casts"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    recording.add_argument(parser)
    args = parser.parse_args()
    torch.manual_seed(0)
    x = torch.randn(64, 128)
    cached, uncached = Session(), Session(cache=False)
    for session in (cached, uncached):
        session.compile(workloads.bf16_roundtrip, x)
    views = {"cached": cached.view(0), "recompile": uncached.view(0)}
    times: dict[str, list[float]] = {"cached": [], "recompile": []}
    for round_ in range(args.rounds + 1):
        for value in (True, False):
            for name, view in views.items():
                view.set_toggle(TOGGLE, value)
                assert view.widget.status["state"] == "idle", view.widget.status
                if round_ == 0 and name == "cached":
                    assert not view.last_from_cache or value is False  # round 0 compiles "on" once
                    continue
                assert view.last_from_cache == (name == "cached"), (name, view.widget.status)
                times[name].append(view.last_seconds)
    cached_s = statistics.median(times["cached"])
    recompile_s = statistics.median(times["recompile"])
    workload = f"workload: bf16_roundtrip on {tuple(x.shape)}, toggling {TOGGLE} ({torch.__version__}, CPU)"
    print(workload)
    table = recording.Table(["mode", "median ms", "switches"])
    table.add("served from the session", f"{cached_s * 1000:.1f}", len(times["cached"]))
    table.add("real recompile", f"{recompile_s * 1000:.1f}", len(times["recompile"]))
    print(table.text())
    slowest = max(times["cached"])
    ratio = (f"ratio recompile / cached: {recompile_s / cached_s:.0f}x; cached under 0.2 s: {slowest < 0.2} "
             f"(max {slowest * 1000:.1f} ms)")
    print(ratio)
    print(f"entries compiled: cached session {len(cached)}, uncached session {len(uncached)}")
    recording.record(args, [table], notes=[workload, ratio])


if __name__ == "__main__":
    main()
