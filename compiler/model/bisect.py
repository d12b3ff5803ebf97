"""``explorer.bisect(fn, *inputs)``: what made the compiled program differ from eager, level by level.

``BisectResult`` holds the culprit at each level the search reached: the torch.compile backend, the
subsystem of that backend (a pass family, lowerings, decompositions, cudagraphs, or a config change) and the
n-th application of it that breaks the program with what torch says that application is (all from torch's
``CompilerBisector``), the config that avoids it when one does, then the fused group whose fusion changes the
outputs, its kernel and the user's lines. Every trial the search ran is kept with its outcome. Plain data: the
search is compiler/sweeps/bisect.py, the renderings compiler/render/bisect.py.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .formatting import where
from .slots import Rendered

# what ``status`` can be
DIVERGES, MATCHES, CHECK_RAISED, UNAVAILABLE = "diverges", "matches", "check raised", "unavailable"


@dataclass
class Trial:
    """One compile-and-run of the program the search made, and what the check said."""

    number: int
    level: str  # "first run", "torch bisector", "config", "fusion"
    what: str  # what was tried: "backend inductor", "inductor / post_grad_passes: applications 0..7", ...
    # "good" | "bad" | "crashed" (a compile or run error, a worker that died or timed out: counted as bad)
    # | "check raised" | "measured" (a slowdown's baseline, not judged)
    outcome: str
    detail: str = ""  # the measured error or run time, or the crash's message
    seconds: float = 0.0


@dataclass
class FusionCulprit:
    """The fused group whose fusion makes the outputs differ: kept apart, the program matches."""

    graph: str  # graph id, "g0"
    group: str  # the group's name, "op0_op1"
    nodes: list[str]  # its post-grad nodes
    kernels: list[str]  # kernel ids computing the group
    user_lines: list[tuple[str, int]] = field(default_factory=list)


@dataclass
class BisectResult(Rendered):
    """What ``explorer.bisect`` found. ``status``: ``diverges`` (a culprit, at as many levels as were found),
    ``matches`` (nothing to bisect: ``error`` and ``tolerance`` say by how much), ``check raised`` (the user's
    check failed: ``message`` has its error, nothing is blamed) or ``unavailable``."""

    function: str
    status: str
    message: str
    check: str  # how outputs were judged
    tolerance: str = ""
    error: str = ""  # the first compiled run's error against eager
    backend: str | None = None  # the first backend that fails (torch's order: eager, aot_eager, ..., inductor)
    subsystem: str | None = None
    subsystem_kind: str | None = None  # "bisect" (applications bisected) | "config" | "binary"
    application: int | None = None  # the failing application's number (counting from 0)
    applied: str | None = None  # what torch says that application is: a pass name, a lowered node
    avoided_by: dict[str, Any] = field(default_factory=dict)  # Inductor config that makes the program match
    avoided_by_checked: bool = False  # a trial with ``avoided_by`` matched
    fusion: FusionCulprit | None = None
    fusion_note: str = ""  # why the fusion level found nothing, or did not run
    kernels: list[str] = field(default_factory=list)  # kernel ids named at the deepest level reached
    user_lines: list[tuple[str, int]] = field(default_factory=list)
    trials: list[Trial] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    log: str = ""  # what torch's bisector printed
    baseline_ms: float | None = None  # check="slower": the baseline's time per call
    engine: str = "in-process"  # where the trials ran: in-process, local (worker processes) or ray
    compilation: Any = field(default=None, repr=False, compare=False)  # the program as captured (live), or None

    @property
    def found(self) -> bool:
        return self.status == DIVERGES and self.backend is not None

    def culprit_lines(self) -> list[tuple[str, str]]:
        """(level, what it names) for each level reached, top down."""
        rows: list[tuple[str, str]] = []
        if self.backend:
            rows.append(("backend", self.backend))
        if self.subsystem:
            kind = {"config": "config change", "bisect": "subsystem"}.get(self.subsystem_kind or "", "subsystem")
            rows.append((kind, self.subsystem))
        if self.application is not None and self.subsystem_kind == "bisect":
            rows.append(("application", f"#{self.application}" + (f": {self.applied}" if self.applied else "")))
        if self.avoided_by:
            settings = ", ".join(f"{k}={v!r}" for k, v in self.avoided_by.items())
            rows.append(("avoided by", settings + (" (checked)" if self.avoided_by_checked else "")))
        if self.fusion is not None:
            rows.append(("fused group", f"{self.fusion.graph} {self.fusion.group} ({', '.join(self.fusion.nodes)})"))
        if self.kernels:
            rows.append(("kernel", ", ".join(self.kernels)))
        if self.user_lines:
            rows.append(("lines", ", ".join(where(line) for line in self.user_lines)))
        return rows

    def summary(self) -> str:
        if self.status != DIVERGES:
            return self.message
        return "; ".join(f"{level} {value}" for level, value in self.culprit_lines()) or self.message

    def __repr__(self) -> str:
        return f"<BisectResult {self.function}: {self.status}: {self.summary()}; {len(self.trials)} trials>"

    def repro(self, path: str | Path, *, overwrite: bool = False) -> Path:
        """A standalone script (torch only) that shows the failure: the graph reproducer of the culprit's graph
        (``g.repro``), headed by what the bisect found and the config that avoids it. Returns its path."""
        if self.status != DIVERGES:
            raise ValueError(f"nothing to reproduce: the bisect of {self.function} says {self.status!r} "
                             f"({self.message})")
        c = self.compilation
        if c is None:
            raise ValueError("this result keeps no live compilation of the program (a loaded result, or the "
                             "capture failed): run explorer.bisect again in this process")
        graph_id = self.fusion.graph if self.fusion is not None else None
        graphs = [g for g in c.graphs if g.kind != "backward" and (graph_id is None or g.id == graph_id)]
        if not graphs:
            raise ValueError(f"{self.function} has no forward or inference graph to reproduce")
        written = Path(graphs[0].repro(Path(path), overwrite=overwrite))
        written.write_text(_headed(written.read_text(), self))
        return written


def _headed(script: str, result: BisectResult) -> str:
    """The reproducer with the bisect's findings as comment lines after its own header comment."""
    lines = ["#", "# explorer.bisect found:"]
    lines += [f"#   {level}: {value}" for level, value in result.culprit_lines()]
    if result.avoided_by:
        lines.append("#   to see it go away, add these to CONFIG below: "
                     + ", ".join(f"{k!r}: {v!r}" for k, v in result.avoided_by.items()))
    if result.subsystem and result.subsystem_kind == "bisect" and result.backend:
        lines.append(f"#   torch's own bisector reproduces it with TORCH_BISECT_BACKEND={result.backend} "
                     f"TORCH_BISECT_SUBSYSTEM={result.subsystem} TORCH_BISECT_MAX={result.application}")
    if result.subsystem in ("pre_grad_passes", "joint_graph_passes", "post_grad_passes") and result.applied:
        lines.append(f"#   {result.applied} is a pass: a custom pass (a Python callable in Inductor's config) is not "
                     "carried by this script, so a failure it makes does not show here")
    lines = [re.sub(r"\s+$", "", line) for line in lines]
    head, sep, rest = script.partition("\n\nfrom __future__")
    return head + "\n" + "\n".join(lines) + sep + rest if sep else "\n".join(lines) + "\n" + script
