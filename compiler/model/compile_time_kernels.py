"""Compile seconds charged to kernels: the phases torch timed for one kernel (autotuning, config
benchmarks), and each kernel's share of its graph's wait for the kernel builds in compile workers.
"""

from __future__ import annotations

from typing import Any

from .compile_time import CompileCall, KernelCompileTime, Phase
from .compile_time_events import KERNEL_BUILDS
from .provenance import computing_fx_nodes

_KERNEL_NAME = "kernel_name"  # what torch's per-kernel timers (CachingAutotuner.*) carry in their metadata
_TEMPLATE_AUTOTUNE = ("_template_autotuning", "_template_precompiling")


def _kernel_of(graph: Any, key: str) -> Any:
    for kernel in graph.kernels:
        if key in (kernel.id, kernel.name):
            return kernel
    return None


def _kernel_of_nodes(graph: Any, nodes: tuple[str, ...]) -> Any:
    """The kernel computing these post-grad nodes: a template or Triton kernel before an extern one."""
    wanted = set(nodes)
    found = [k for k in graph.kernels if wanted & set(k.post_grad_nodes)]
    found.sort(key=lambda k: k.language == "extern")
    return found[0] if found else None


def kernels_of_shape(graph: Any, shape_text: Any) -> list[Any]:
    """The kernels computing a matrix product whose two operands have the shapes an autotuning logged
    (``autotune_shape``: ``"256x512, 512x384"``, a bias first for addmm), in graph order."""
    if not isinstance(shape_text, str) or not shape_text:
        return []
    wanted = [part.strip() for part in shape_text.split(",")][-2:]
    nodes = getattr(getattr(graph, "post_grad", None), "nodes", None) or []
    shapes = {n.name: "x".join(map(str, n.shape)) for n in nodes if n.shape is not None}
    found: list[Any] = []
    for node in nodes:
        operands = [shapes.get(name) for name in node.inputs][-2:]
        if "mm" in node.target and operands == wanted and (kernel := _kernel_of_nodes(graph, (node.name,))):
            if kernel not in found:
                found.append(kernel)
    return found


def charge_kernels(builder_graphs: dict[str, Any], root: Phase, calls: list[CompileCall],
                    origin_ns: int) -> dict[tuple[str, str], KernelCompileTime]:
    """Phases torch timed for one kernel get its id (they and everything under them); their seconds go to
    that kernel: builds (``kernel_compile`` leaves) as its compile time, the rest as its autotuning."""
    kernels: dict[tuple[str, str], KernelCompileTime] = {}
    owners = sorted((t, g, nodes, n) for call in calls for t, g, nodes, n in call.autotune_owners)

    def owned(phase: Phase) -> tuple[str | None, Any, Any]:
        name = phase.args.get(_KERNEL_NAME)
        if isinstance(name, str) and name:
            # kernel names repeat across graphs: the graph of the phase's compile id and direction first
            backward = bool(phase.args.get("is_backward"))
            ranked = sorted(builder_graphs.items(), key=lambda item: (
                item[1].compile_id != phase.compile_id, (item[1].kind == "backward") != backward))
            for gid, graph in ranked:
                if phase.graph in (None, gid) and (kernel := _kernel_of(graph, name)) is not None:
                    return gid, kernel, None
        elif phase.name.endswith(_TEMPLATE_AUTOTUNE):
            end_ns = origin_ns + int((phase.start_s + phase.seconds) * 1e9)
            owner = next((o for o in owners if o[0] >= end_ns - 1000), None)
            graph = builder_graphs.get(f"g{owner[1]}") if owner else None
            timed = _kernel_of_nodes(graph, owner[2]) if graph is not None else None
            # the shapes torch logged with the autotuning name its matmul; the hook's note decides between
            # matmuls of one shape (Inductor tunes a shape once and reuses the choice)
            shaped = [(gid, k) for gid, g in builder_graphs.items() if phase.compile_id in (None, g.compile_id)
                      for k in kernels_of_shape(g, phase.args.get("autotune_shape"))]
            if timed is not None and (not shaped or (graph.id, timed) in shaped):
                return graph.id, timed, owner
            if shaped:
                return shaped[0][0], shaped[0][1], owner
        return None, None, None

    def visit(phase: Phase) -> None:
        graph_id, kernel, owner = owned(phase)
        if kernel is None or graph_id is None:
            for child in phase.children:
                visit(child)
            return
        for inner in phase.walk():
            inner.kernel = kernel.id
        entry = kernels.get((graph_id, kernel.id))
        if entry is None:
            entry = kernels[(graph_id, kernel.id)] = KernelCompileTime(
                kernel.id, graph_id, fx_nodes=charged_fx_nodes(builder_graphs[graph_id], kernel),
                user_lines=[tuple(line) for line in kernel.user_lines],
                candidates=_candidates(builder_graphs[graph_id], kernel, phase.args.get(_KERNEL_NAME)))
        leaves = [p for p in phase.walk() if not p.children]
        built = sum(p.seconds for p in leaves if p.category == "kernel_compile")
        entry.compile_s = round(entry.compile_s + built, 6)
        entry.autotune_s = round(entry.autotune_s + phase.seconds - built, 6)
        if owner is not None:
            entry.candidates = max(entry.candidates, owner[3])

    visit(root)
    return kernels


def charge_kernel_builds(graphs: dict[str, Any], root: Phase, instants: list[dict[str, Any]],
                          kernels: dict[tuple[str, str], KernelCompileTime], origin_ns: int) -> dict[str, float]:
    """A graph's Triton kernels build in compile workers, in parallel, while the graph waits for them
    (``async_compile.wait``): torch times that wait per graph and each build per kernel, in its worker
    (``triton_kernel_info``). Each kernel is charged its share of the wait, by its build time, so the
    charges add up to the wait. Returns the seconds charged per graph (no longer the graph's own)."""
    compiles = [p for p in root.walk() if p.name == "inductor_compile" and p.graph in graphs]
    charged: dict[str, float] = {}
    for event in instants:
        args = event.get("args") if isinstance(event.get("args"), dict) else {}
        builds = args.get("builds_us") if event.get("name") == KERNEL_BUILDS else None
        if not isinstance(builds, dict) or not builds:
            continue
        at = (float(event.get("ts", 0)) * 1000 - origin_ns) / 1e9  # seconds from the report's start
        mine = [p for p in compiles if args.get("compile_id") in (None, p.compile_id)] or compiles
        holding = [p for p in mine if p.start_s <= at <= p.start_s + p.seconds + 1e-3]
        phase = holding[-1] if holding else min(mine, key=lambda p: abs(p.start_s + p.seconds - at), default=None)
        if phase is None:
            continue
        graph = graphs[phase.graph]
        wait = sum(p.seconds for p in phase.walk() if not p.children and p.category == "kernel_compile" and p.kernel is None)
        found = {name: (kernel, us) for name, us in builds.items() if (kernel := _kernel_of(graph, name)) is not None}
        total_us = sum(us for _, us in found.values())
        if wait <= 0 or total_us <= 0:
            continue
        for name, (kernel, us) in found.items():
            entry = kernels.get((graph.id, kernel.id))
            if entry is None:
                entry = kernels[(graph.id, kernel.id)] = KernelCompileTime(
                    kernel.id, graph.id, fx_nodes=charged_fx_nodes(graph, kernel),
                    user_lines=[tuple(line) for line in kernel.user_lines], candidates=_candidates(graph, kernel, name))
            entry.compile_s = round(entry.compile_s + wait * us / total_us, 6)
            entry.build_s = round(entry.build_s + us / 1e6, 6)
        charged[graph.id] = charged.get(graph.id, 0.0) + wait
    return charged


def _candidates(graph: Any, kernel: Any, name: Any) -> int:
    return sum(1 for r in graph.autotune if r.kernel in (kernel.id, kernel.name, name))

def charged_fx_nodes(graph: Any, kernel: Any) -> list[str]:
    """The FX nodes a kernel's compile seconds are charged to: those of what it computes, not of views it reads."""
    return computing_fx_nodes(kernel, {n.name: n for n in graph.post_grad.nodes})
