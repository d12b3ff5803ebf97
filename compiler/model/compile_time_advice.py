"""What each recompile cost, and the suggestions of the compile-time report: what to change, the
seconds it is about, and the evidence.
"""

from __future__ import annotations

from typing import Any

from .compile_time import CompileTimeReport, Phase, RecompileCost, Suggestion


def compile_seconds(root: Phase) -> dict[str, float]:
    """Seconds of each compile id's top-level phases (its frame compile and its lazily compiled backwards)."""
    totals: dict[str, float] = {}
    for call in root.children:
        for top in call.children:
            if top.compile_id is not None and top.name not in ("explorer", "other"):
                totals[top.compile_id] = totals.get(top.compile_id, 0.0) + top.seconds
    return totals


def recompiles(dynamo: Any, totals: dict[str, float]) -> list[RecompileCost]:
    return [RecompileCost(r.compile_id, r.function, list(r.reasons), round(totals.get(r.compile_id, 0.0), 6),
                          list(r.graphs)) for r in getattr(dynamo, "recompiles", [])]


AUTOTUNE_SHARE = 0.25  # autotuning above this share of the compile is worth a suggestion
KERNEL_COMPILE_SHARE = 0.3
RECOMPILE_SHARE = 0.1


def suggestions(report: CompileTimeReport, dynamo: Any, instants: list[dict[str, Any]]) -> list[Suggestion]:
    found: list[Suggestion] = []
    total = report.seconds or 1.0
    split = report.categories()
    autotune = split.get("autotune", 0.0)
    if autotune >= AUTOTUNE_SHARE * total:
        tuned = [k for k in report.kernels if k.autotune_s]
        candidates = sum(k.candidates for k in tuned)
        found.append(Suggestion(
            "autotuning", f"autotuning took {autotune:.1f} s ({autotune / total:.0%} of the compile): {len(tuned)} "
            f"kernels x {candidates / max(1, len(tuned)):.0f} candidates on average. Autotune fewer ops "
            "(max_autotune_gemm only, or mode='max-autotune-no-cudagraphs' on the layers that matter), keep the "
            "autotune cache warm between runs, or set max_autotune_gemm_backends to fewer backends.",
            autotune, [f"{k.graph}/{k.kernel}: {k.autotune_s:.2f} s, {k.candidates} candidates" for k in report.top_kernels(5)
                       if k.autotune_s]))
    shapes = [r for r in report.recompiles if any("size mismatch" in reason or "stride mismatch" in reason
                                                 for reason in r.reasons)]
    recompile_s = sum(r.seconds for r in shapes)
    if shapes and recompile_s >= RECOMPILE_SHARE * total:
        found.append(Suggestion(
            "recompiles", f"{len(shapes)} recompile(s) for a new shape cost {recompile_s:.1f} s: mark the dimension "
            "dynamic (torch._dynamo.mark_dynamic(x, dim), or torch.compile(dynamic=True)) so one graph serves "
            "every size", recompile_s, [f"{r.compile_id} {r.function}: {r.reasons[0]} ({r.seconds:.2f} s)" for r in shapes]))
    cold = cold_cache(report, instants)
    if cold is not None:
        found.append(cold)
    breaks = getattr(dynamo, "graph_breaks", [])
    frames = report.frames()
    if breaks and len(frames) > 1:
        resumed = [f for f in frames if any(b.resume == f.compile_id for b in breaks)]
        seconds = sum(f.seconds for f in resumed)
        found.append(Suggestion(
            "graph_breaks", f"graph breaks at {len({(b.user_line, b.reason) for b in breaks})} place(s) split the code "
            f"into {len(frames)} frame compiles; the "
            f"frames after a break cost {seconds:.2f} s and their graphs cannot fuse across the break. Remove the "
            "break (its reason and line are in the evidence), or move it out of the compiled region.",
            seconds, list(dict.fromkeys(f"{b.user_line[0]}:{b.user_line[1]}: {b.reason}" if b.user_line else b.reason
                                        for b in breaks))))
    return found


def cold_cache(report: CompileTimeReport, instants: list[dict[str, Any]]) -> Suggestion | None:
    """Building kernels is a large share of the compile, or a log's caches all missed: say what a warm cache
    would skip. A capture makes its own misses (it compiles in full every graph it has not stored, to see every
    stage), so there they say nothing about the user's program, and the message says what that program would
    see instead."""
    total = report.seconds or 1.0
    kernel_compile = report.categories().get("kernel_compile", 0.0)
    states = [str(i.get("name", "")) for i in instants if "cache" in str(i.get("name", ""))]
    misses = [s for s in states if s.endswith(("_miss", "_disabled", "_bypass"))]
    cold_log = report.source == "log" and bool(misses) and not [s for s in states if s.endswith("_hit")]
    if kernel_compile < KERNEL_COMPILE_SHARE * total and not cold_log:
        return None
    built = f"building kernels took {kernel_compile:.1f} s ({kernel_compile / total:.0%})"
    keep = ("keep TORCHINDUCTOR_CACHE_DIR on a disk that persists between jobs (or ship "
            "torch.compiler.save_cache_artifacts() to fresh machines)")
    if report.source == "log":
        return Suggestion(
            "cold_cache", f"{built}; this compile ran with cold caches. Inductor's FX graph cache and kernel caches "
            f"skip this on the next run of the same program: {keep}.",
            kernel_compile, sorted(set(states))[:6] + [f"kernel_compile: {kernel_compile:.2f} s"])
    inductor = round(sum(p.seconds for p in report.root.walk() if p.name == "inductor_compile"), 6)
    return Suggestion(
        "cold_cache", f"{built}. The capture compiles every graph it has not captured before in full, to see every "
        "stage; your program builds these kernels on its first compile too, and its second compile of this code "
        f"would hit the FX graph cache and skip Inductor's compile of each graph (~{inductor:.1f} s here). For jobs "
        f"after the first, {keep}.",
        kernel_compile, [f"kernel_compile: {kernel_compile:.2f} s", f"inductor_compile: {inductor:.2f} s",
                         "graphs compiled in full by the capture (a cold capture, or one not captured before)"])
