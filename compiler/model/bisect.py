"""``explorer.bisect(fn, *inputs)``: what made the compiled program differ from eager, level by level.

``BisectResult`` holds the culprit at each level the search reached: the torch.compile backend, the
subsystem of that backend (a pass family, lowerings, decompositions, cudagraphs, or a config change) and the
n-th application of it that breaks the program with what torch says that application is (all from torch's
``CompilerBisector``), the config that avoids it when one does, then the fused group whose fusion changes the
outputs, its kernel and the user's lines; what the avoiding setting changes (``setting``: the kernels whose code
changes, their nodes and lines, compiler/model/setting_changes.py). Every trial the search ran is kept with its
outcome. ``levels()`` says what each level names in the compilation's views, which ``view()`` / ``to_html()`` show
with the culprit selectable. Plain data: the search is compiler/sweeps/bisect.py, the renderings
compiler/render/bisect.py.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import progress, slots
from .contract import CULPRITS, CulpritRecord
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
class ChangedKernel:
    """A kernel of the program as configured whose code the avoiding setting changes (setting_changes.py)."""

    graph: str  # graph id, "g0"
    kernel: str  # its id as configured
    becomes: list[str]  # with the setting: the kernels computing those nodes (or its pair)
    fx_nodes: list[str]  # the Dynamo FX nodes the setting changes in it
    post_grad_nodes: list[str]  # their post-grad nodes in this kernel (as configured)
    user_lines: list[tuple[str, int]] = field(default_factory=list)
    how: str = ""  # "lowered differently" | "generated differently" | "its code changed"


@dataclass
class SettingCulprit:
    """Where the setting that avoids the culprit acts: the program captured with it and without, kernels
    paired by their nodes, and the kernels whose code changes with the nodes and lines that change."""

    settings: dict[str, Any]
    kernels: list[ChangedKernel] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def user_lines(self) -> list[tuple[str, int]]:
        return sorted({line for k in self.kernels for line in k.user_lines})


@dataclass
class CulpritLevel:
    """One level of the culprit, and what it names in the compilation's views: selecting it there lights
    these nodes, kernels and lines of ``graph``."""

    level: str  # "backend", "config change", "avoided by", "it changes", "fused group", "kernel", "lines"...
    what: str
    graph: str | None = None
    fx: list[str] = field(default_factory=list)
    post_grad: list[str] = field(default_factory=list)
    fused: list[str] = field(default_factory=list)
    kernels: list[str] = field(default_factory=list)
    user_lines: list[tuple[str, int]] = field(default_factory=list)

    @property
    def linked(self) -> bool:
        return bool(self.graph and (self.fx or self.post_grad or self.fused or self.kernels or self.user_lines))

    def to_json(self) -> CulpritRecord:
        return {"level": self.level, "what": self.what, "graph": self.graph, "fx": list(self.fx),
                "post_grad": list(self.post_grad), "fused": list(self.fused), "kernels": list(self.kernels),
                "user_lines": [[str(file), int(line)] for file, line in self.user_lines]}


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
    setting: SettingCulprit | None = None  # what ``avoided_by`` changes in the program: kernels, nodes, lines
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
        return [(level.level, level.what) for level in self.levels()]

    def levels(self) -> list[CulpritLevel]:
        """Each level reached, top down, with what it names in the compilation's views: its graph, FX and
        post-grad nodes, fused group, kernels and the user's lines (empty where a level names none: the
        backend)."""
        rows: list[CulpritLevel] = []
        setting = self._setting_links()
        if self.backend:
            rows.append(CulpritLevel("backend", self.backend))
        if self.subsystem:
            kind = {"config": "config change", "bisect": "subsystem"}.get(self.subsystem_kind or "", "subsystem")
            rows.append(CulpritLevel(kind, self.subsystem, **(self._node_links() if self.subsystem == "lowerings"
                                                               else setting)))
        if self.application is not None and self.subsystem_kind == "bisect":
            rows.append(CulpritLevel("application", f"#{self.application}" + (f": {self.applied}" if self.applied else ""),
                                     **(self._node_links() if self.subsystem == "lowerings" else setting)))
        if self.avoided_by:
            settings = ", ".join(f"{k}={v!r}" for k, v in self.avoided_by.items())
            rows.append(CulpritLevel("avoided by", settings + (" (checked)" if self.avoided_by_checked else ""),
                                     **setting))
        for changed in self.setting.kernels if self.setting is not None else []:
            becomes = f"; with it: {', '.join(changed.becomes)}" if changed.becomes else ""
            rows.append(CulpritLevel("it changes", f"{changed.kernel}: {', '.join(changed.fx_nodes)} {changed.how}"
                                     f"{becomes}", changed.graph, changed.fx_nodes, changed.post_grad_nodes, [],
                                     [changed.kernel], changed.user_lines))
        if self.fusion is not None:
            f = self.fusion
            rows.append(CulpritLevel("fused group", f"{f.graph} {f.group} ({', '.join(f.nodes)})", f.graph,
                                     post_grad=f.nodes, fused=[f.group], kernels=f.kernels, user_lines=f.user_lines))
        graph = self._deepest_graph(setting)
        if self.kernels:
            rows.append(CulpritLevel("kernel", ", ".join(self.kernels), graph, kernels=list(self.kernels)))
        if self.user_lines:
            rows.append(CulpritLevel("lines", ", ".join(where(line) for line in self.user_lines), graph,
                                     user_lines=list(self.user_lines)))
        return rows

    def _setting_links(self) -> dict[str, Any]:
        """What the avoiding setting changes, in the first graph where it changes a kernel."""
        changed = self.setting.kernels if self.setting is not None else []
        if not changed:
            return {}
        graph = changed[0].graph
        mine = [k for k in changed if k.graph == graph]
        return {"graph": graph, "fx": sorted({n for k in mine for n in k.fx_nodes}),
                "post_grad": sorted({n for k in mine for n in k.post_grad_nodes}), "kernels": [k.kernel for k in mine],
                "user_lines": sorted({line for k in mine for line in k.user_lines})}

    def _node_links(self) -> dict[str, Any]:
        """A lowering culprit: the post-grad node torch lowered (``applied``), its kernels and lines."""
        name = (self.applied or "").strip()
        for graph in getattr(self.compilation, "graphs", []):
            node = next((n for n in graph.post_grad.nodes if n.name == name), None)
            if node is not None:
                return {"graph": graph.id, "fx": list(node.fx), "post_grad": [name], "kernels": list(node.kernels),
                        "user_lines": [tuple(node.user_line)] if node.user_line else []}
        return {}

    def _deepest_graph(self, setting: dict[str, Any]) -> str | None:
        """The graph of ``kernels`` and ``user_lines``: the fused group's, the lowered node's or the setting's."""
        if self.fusion is not None:
            return self.fusion.graph
        return self._node_links().get("graph") if self.subsystem == "lowerings" else setting.get("graph")

    def culprit_links(self) -> list[CulpritRecord]:
        """The levels as the compilation's views read them (compiler/model/contract.py ``CulpritRecord``)."""
        return [level.to_json() for level in self.levels()]

    def summary(self) -> str:
        if self.status != DIVERGES:
            return self.message
        return "; ".join(f"{level} {value}" for level, value in self.culprit_lines()) or self.message

    def __repr__(self) -> str:
        return f"<BisectResult {self.function}: {self.status}: {self.summary()}; {len(self.trials)} trials>"

    def _blamed(self, what: str) -> Any:
        if self.compilation is None:
            raise ValueError(f"{what} shows the compilation the bisect blamed, and this result keeps none (the "
                             "program matched, the bisect stopped before capturing it, or the capture failed)")
        return self.compilation

    def trace_view(self) -> dict[str, Any]:
        """The blamed compilation's trace as views read it, with the culprit's levels (``culprits``,
        compiler/model/contract.py): the view lists them, and selecting one lights what it names."""
        return {**self._blamed("the view").trace_view(), CULPRITS: self.culprit_links()}

    def view(self) -> Any:
        """The explorer widget of the compilation the bisect blamed, the culprit's levels above its stages:
        select one (or ``w.select("culprit", "2")``) and its nodes, kernels, kernel lines and your lines
        light up in every stage."""
        self._blamed("the view")
        return slots.widget(self.trace_view)

    def to_html(self, path: str | Path) -> Path:
        """The same view as one self-contained HTML file."""
        c = self._blamed("to_html")
        with progress.task(f"export {self.function}"):
            slots.complete_kernel_irs(c)
            return Path(slots.write_html(self.trace_view(), path))

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
