"""``explorer.bisect(..., check="slower", slower_than=baseline)``: a slowdown a config made, found like a wrong
result is.

The baseline is a config (toggle names or Inductor keys, set on top of the current config) or a saved trace
(the toggles and Inductor settings it was captured with). Times recorded in a trace come from another
moment, often another machine: the baseline is measured again here, in the same way as every trial (the
median of several loops of back-to-back calls, compiler/sweeps/bisect_program.py), and a trial is bad when it
takes more than ``threshold`` times the baseline's time. The culprit is the setting that makes the
difference: the settings where the baseline differs from the current config are halved down to one (about
log2(n) trials), which then avoids the slowdown on its own (checked). When no setting differs, or none alone
explains it, torch's bisector looks for the pass inside Inductor (only that backend: the eager backends are
slower by nature, not because of a culprit).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from .._torch import inductor_config
from ..model.bisect import BisectResult
from ..pipeline import toggles
from .bisect_program import TrialOutput

THRESHOLD = 1.2


def baseline_settings(slower_than: Any) -> tuple[dict[str, Any], str]:
    """The baseline's Inductor settings and how to name it: from a config dict, or a saved trace (its path or
    a loaded Compilation)."""
    if isinstance(slower_than, (str, Path)):
        from ..io.files import load

        path = Path(slower_than)
        if not path.is_file():
            raise ValueError(f"slower_than={str(slower_than)!r}: no such trace file (a trace saved by c.save(), or "
                             "a config dict)")
        return baseline_settings(load(path))[0], f"the trace {path.name}"
    if isinstance(slower_than, Mapping):
        settings = toggles.resolve(slower_than)
        return settings, "the baseline config " + (", ".join(f"{k}={v!r}" for k, v in settings.items()) or "(as configured)")
    if hasattr(slower_than, "toggles") and hasattr(slower_than, "inductor_overrides"):
        return toggles.resolve({**slower_than.inductor_overrides, **slower_than.toggles}), \
            f"the compilation of {slower_than.function}"
    raise ValueError(f"slower_than must be a config dict (toggle names or Inductor keys) or a saved trace (its path, "
                     f"or a loaded compilation), got {type(slower_than).__name__}")


def differing(settings: Mapping[str, Any]) -> dict[str, Any]:
    """The baseline's settings that differ from the current config: where a culprit can be."""
    return {key: value for key, value in settings.items() if inductor_config.get(key) != value}


class Slower:
    """The check: the program as configured is slow when it takes more than ``threshold`` times the baseline's
    time. Once it is (``slow_ms``: its time), a trial of the search is good when its time is nearer the
    baseline's than the slow run's (below their geometric mean): both ends measured here, so a trial as fast
    as the baseline stays good on a busy machine whose noise alone can pass ``threshold``."""

    def __init__(self, threshold: float) -> None:
        if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not threshold > 1:
            raise ValueError(f"threshold is how many times the baseline's time counts as slower (> 1, e.g. 1.2), "
                             f"got {threshold!r}")
        self.threshold = float(threshold)
        self.baseline_ms: float | None = None
        self.slow_ms: float | None = None
        self.last_ms: float | None = None

    def __call__(self, out: TrialOutput) -> tuple[bool, str]:
        self.last_ms = out.ms
        ratio = out.ms / self.baseline_ms
        detail = f"{out.ms:.3g} ms per call, {ratio:.2f}x the baseline's {self.baseline_ms:.3g} ms"
        if self.slow_ms is None:
            return ratio <= self.threshold, detail
        middle = (self.baseline_ms * self.slow_ms) ** 0.5
        return out.ms <= middle, f"{detail} (the slow run's: {self.slow_ms:.3g} ms)"


def toggle_level(search: Any, result: BisectResult, baseline: Mapping[str, Any]) -> bool:
    """Halve the settings that differ from the baseline down to the one that brings the time back; True when
    one does (``result`` names it and the config that avoids the slowdown)."""
    keys = sorted(differing(baseline))
    if not keys:
        result.notes.append("the baseline's settings are those of the current config: no toggle to blame")
        return False

    def good(chosen: list[str]) -> bool:
        label = ", ".join(f"{k}={baseline[k]!r}" for k in chosen)
        return search.trial("config", f"Inductor with {label}", settings={k: baseline[k] for k in chosen})

    candidates, tested = keys, True  # all of them is the baseline, measured good
    while len(candidates) > 1:
        half = candidates[: len(candidates) // 2]
        if good(half):
            candidates, tested = half, True
        else:
            candidates, tested = candidates[len(candidates) // 2:], False
    if not tested and not good(candidates):
        result.notes.append(f"no single setting of the baseline ({', '.join(keys)}) brings the time back on its own")
        return False
    key = candidates[0]
    result.backend, result.subsystem, result.subsystem_kind = "inductor", key, "config"
    result.avoided_by, result.avoided_by_checked = {key: baseline[key]}, True
    result.notes.append(f"{key} is {inductor_config.get(key)!r} here and {baseline[key]!r} in the baseline")
    return True
