"""python -m tests.conformance [--all | --slice | --gpu] [--known] [--models [NAME ...]] [--op [NAME ...]]
[--ops N] [--device cuda] [--report PATH]

Every kernel of each case checked against torch's own provenance records and the wrapper (docs/ownership.md).
``make conformance`` runs everything on the CPU and writes docs/conformance.md; ``--gpu`` is the set run on a
GPU machine. Exits 1 when any problem is found.
"""

from __future__ import annotations

import argparse
import datetime
import platform
import sys
import time

import torch

from . import cases, checks, report
from .run import run_case


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="kernel ownership checked against torch's own records")
    parser.add_argument("--known", action="store_true", help="the programs whose owners are known exactly")
    parser.add_argument("--models", nargs="*", default=None, help="these real models (no names: all)")
    parser.add_argument("--op", nargs="*", default=None, help="these ops of op_db (no names: all)")
    parser.add_argument("--ops", type=int, default=None, help="only the first N ops of op_db")
    parser.add_argument("--all", action="store_true", help="--known, every model and every op")
    parser.add_argument("--slice", action="store_true", help="what CI runs: --known, GPT-2, Llama and a slice of op_db")
    parser.add_argument("--gpu", action="store_true",
                        help="on cuda: --known, GPU-only cases, the model zoo and the slice of op_db")
    parser.add_argument("--device", default="cpu", help="where cases run (cuda for --gpu)")
    parser.add_argument("--report", help="write the markdown report here (docs/conformance.md)")
    parser.add_argument("--append", action="store_true", help="add this run to the report as a section of its own")
    parser.add_argument("-v", "--verbose", action="store_true", help="print accepted findings too")
    args = parser.parse_args(argv)
    device = "cuda" if args.gpu else args.device
    if args.slice or args.gpu:
        args.known, args.op = True, args.op or cases.SLICE_OPS
        args.models = args.models or (cases.GPU_MODELS if args.gpu else cases.SLICE_MODELS)
    sets: dict[str, list] = {}
    if args.known or args.all:
        known = {**cases.known_cases(), **(cases.gpu_cases() if device.startswith("cuda") else {})}
        sets["programs with known owners"] = [(name, cases.on(device, build)) for name, build in known.items()]
    if args.models is not None or args.all:
        models = cases.model_cases(args.models or None)
        sets["real models"] = [(name, cases.on(device, build)) for name, build in models.items()]
    if args.op is not None or args.ops is not None or args.all:
        ops = list(cases.op_cases(args.op or None, device))
        sets[f"op_db, first {device} sample"] = ops[: args.ops] if args.ops is not None else ops
    started = time.perf_counter()
    summaries = {}
    for title, todo in sets.items():
        results = []
        for done, (name, build) in enumerate(todo, start=1):
            result = run_case(name, build)
            results.append(result)
            _print(result, done, len(todo), args.verbose)
        summaries[title] = report.summarize(results)
        print(f"== {title}: {report.text(summaries[title])}", flush=True)
    if args.report and args.append:
        header = (f"## torch {torch.__version__}\n\n{', '.join(sets)} on {_device_name(device)}, "
                  f"{time.perf_counter() - started:.0f} s.")
        with open(args.report, "a") as out:
            out.write("\n" + report.markdown(summaries, header).replace("\n## ", "\n### "))
    elif args.report:
        header = (f"# Conformance against torch's records\n\n"
                  f"Written by `make conformance` ({datetime.date.today()}, torch {torch.__version__}, "
                  f"Python {platform.python_version()}, {_device_name(device)}, {time.perf_counter() - started:.0f} s). "
                  "Each kernel's "
                  "post-grad nodes, FX nodes and lines are checked against torch's own provenance records "
                  "(`inductor_provenance_tracking_node_mappings` and the kernel stack traces, read from the "
                  "structured trace as TORCH_TRACE writes it) and against the wrapper's call order; every "
                  "computing FX node must reach a kernel and the compiled outputs must equal eager. "
                  "The harness is `tests/conformance/`; the same checks on a GPU are "
                  "[Conformance on a GPU](conformance-gpu.md).")
        with open(args.report, "w") as out:
            out.write(report.markdown(summaries, header))
    return 1 if any(s.problems for s in summaries.values()) else 0


def _device_name(device: str) -> str:
    if device.startswith("cuda") and torch.cuda.is_available():
        return torch.cuda.get_device_name()
    return "CPU"


def _print(result: checks.CaseResult, done: int, total: int, verbose: bool) -> None:
    prefix = f"[{done}/{total}] {result.case}"
    if result.error:
        print(f"{prefix}: {result.error}", flush=True)
        return
    verdicts = {v: sum(1 for f in result.findings if f.verdict == v) for v in (checks.EXACT, checks.ACCEPTED, checks.PROBLEM)}
    print(f"{prefix}: {result.kernels} kernels, {verdicts} ({result.seconds:.1f} s)", flush=True)
    for f in result.findings:
        if f.verdict == checks.PROBLEM or (verbose and f.verdict == checks.ACCEPTED):
            print(f"    {f.verdict} [{f.check}] {f.graph}/{f.kernel}: {f.rule + ': ' if f.rule else ''}{f.detail}")


if __name__ == "__main__":
    sys.exit(main())
