"""One case through the harness: eager, the capture with torch's records read beside it, every check."""

from __future__ import annotations

import time
import traceback
from typing import Any, Callable

import torch

import explorer

from . import checks
from .cases import Case
from .checks import CaseResult, Finding
from .torch_records import non_lazy_backward, recorded


def _clone(value: Any) -> Any:
    return value.clone() if isinstance(value, torch.Tensor) else value


def run_case(name: str, build: Callable[[], Case | None]) -> CaseResult:
    """The case's findings, with convolutions in full float32: cuDNN's TF32 (on by default) rounds eager and
    the compiled program's convolutions to 10 mantissa bits through different algorithms, which moves a
    ResNet's outputs by 3e-4 and a ViT's by 1e-3 (H200), past any tolerance that still finds a wrong kernel."""
    with torch.backends.cudnn.flags(enabled=torch.backends.cudnn.enabled, benchmark=torch.backends.cudnn.benchmark,
                                    deterministic=torch.backends.cudnn.deterministic, allow_tf32=False):
        return _run_case(name, build)


def _run_case(name: str, build: Callable[[], Case | None]) -> CaseResult:
    started = time.perf_counter()
    result = CaseResult(name)
    try:
        case = build()
    except ImportError as error:
        result.error = f"skipped: {error.name or error} not importable here"
        return result
    if case is None:
        result.error = "skipped: no sample on this device"
        return result
    grad = torch.enable_grad() if case.backward else torch.no_grad()
    try:
        with grad:
            torch.manual_seed(0)
            eager = case.target(*[_clone(i) for i in case.inputs])
    except Exception as error:  # the sample itself does not run eagerly
        result.error = f"skipped: eager raised {type(error).__name__}"
        return result
    torch._dynamo.reset()
    try:
        with grad, recorded() as records, non_lazy_backward():
            torch.manual_seed(0)
            # cold: on a cache hit torch logs the records of the cached entry, which another program of the same
            # graph may have written (op:special.polygamma's node names were seen for op:polygamma); only a
            # compile's own records are its truth
            c = explorer.compile(case.target, *[_clone(i) for i in case.inputs], backward=case.backward,
                                 dynamic=case.dynamic, config=case.config, cache=False)
    except Exception as error:
        if _plain_compile_fails(case):
            result.error = f"skipped: torch.compile itself fails ({type(error).__name__})"
        else:
            result.findings.append(Finding(name, "-", None, "capture", checks.PROBLEM,
                                           detail=f"the capture failed where torch.compile works: "
                                                  f"{type(error).__name__}: {str(error)[:300]}"))
        result.seconds = time.perf_counter() - started
        return result
    if not c.graphs:
        result.error = "skipped: Dynamo compiled no graph (the op runs eagerly)"
        return result
    result.compilation = c
    try:
        result.findings += _check(name, case, c, records, eager)
    except Exception:
        result.findings.append(Finding(name, "-", None, "harness", checks.PROBLEM, detail=traceback.format_exc()[-800:]))
    result.kernels = sum(len(g.kernels) for g in c.graphs)
    result.seconds = time.perf_counter() - started
    return result


def _check(name: str, case: Case, c: Any, records: list[Any], eager: Any) -> list[Finding]:
    out = []
    pending = list(records)
    paired = []
    for graph in c.graphs:  # a graph without kernels logs no records, or records of no kernel
        if graph.kernels or (pending and not pending[0].kernel_nodes):
            if not pending:
                out.append(Finding(name, graph.id, None, "capture", checks.PROBLEM,
                                   detail="torch logged no records for this graph"))
            paired.append((graph, pending.pop(0) if pending else None))
        else:
            paired.append((graph, None))
    for graph, graph_records in paired:
        out += checks.check_graph(name, graph, graph_records)
    out += checks.fx_coverage(name, paired)
    if pending:
        out.append(Finding(name, "-", None, "capture", checks.PROBLEM,
                           detail=f"torch logged {len(pending)} more graphs than the capture has"))
    if checks.outputs_equal(c.outputs, eager, atol=case.atol, rtol=1e-3):
        out.append(Finding(name, "-", None, "outputs", checks.EXACT))
    elif case.random:
        out.append(Finding(name, "-", None, "outputs", checks.ACCEPTED, "random", "drawn from torch's RNG or uninitialized memory"))
    else:
        out.append(Finding(name, "-", None, "outputs", checks.PROBLEM, detail="compiled outputs differ from eager"))
    return out


def _plain_compile_fails(case: Case) -> bool:
    torch._dynamo.reset()
    try:
        with torch.enable_grad() if case.backward else torch.no_grad():
            torch.compile(case.target, backend="inductor", dynamic=case.dynamic)(*[_clone(i) for i in case.inputs])
        return False
    except Exception:
        return True
    finally:
        torch._dynamo.reset()
