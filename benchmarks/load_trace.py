"""load_trace on large TORCH_TRACE logs: seconds and peak memory, side by side with tlparse.

    python benchmarks/load_trace.py --mb 100
    python benchmarks/load_trace.py --mb 1000 --ranks 145 --work /tmp/load_trace_bench   # both shapes of job

Logs are built from real records, replicated: the logs of a real job are copied, copy after copy, each
copy's frame ids shifted so its compiles are new compiles, as in a long job that keeps compiling. Two
shapes of job (``--shape``), as different as logs of the same size get:

- ``small``: the rank logs of examples/two_ranks.py (2 CPU ranks under torchrun: recompiles, a graph
  break, forward and backward), each about 160 KB of records: many small compilations;
- ``large``: the log of benchmarks/large_compiles_job.py (three models of 4 to 6 Linear + LayerNorm +
  GELU blocks, two widths, two batch sizes, a training step each: 12 compilations of about 740 KB): few
  large compilations. One copy per rank, so this shape's rank count is ``--mb`` over the job's log.

The jobs run once; with ``--work DIR`` their logs and the ranks made from them are kept there and reused
by the next run (1 GB of logs takes a while to write on 2 cores).

With ``--ranks N`` each shape is written as a job's directory and what a user does with it is timed in a
fresh process: ``explorer.load_trace(dir)``, list every compilation of every rank, open the last one
(import included), then ``tlparse DIR --all-ranks-html`` on the same directory (tlparse 0.4.3: ``pip
install tlparse``), one after the other: wall seconds, CPU seconds and peak RSS of each.

Without ``--ranks``, one log of ``--mb`` of the small shape: ``load_trace`` (index and cross-rank
summary; peak Python memory by tracemalloc against the log's size), then every compile's Compilation
built one after another, and tlparse on the same file; and the peak RSS of a fresh process running
load_trace, and of one that only imports it.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks import recording  # noqa: E402

_HEADER_IDS = re.compile(rb'"frame_id": (\d+)')
_HEADER_RANK = re.compile(rb'"rank": \d+')


def record_job_logs(directory: Path) -> list[Path]:
    """Run examples/two_ranks.py under torchrun with TORCH_TRACE=directory; its rank logs."""
    spec = importlib.util.spec_from_file_location("two_ranks", ROOT / "examples" / "two_ranks.py")
    job = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(job)
    result = job.launch(directory)
    if result.returncode != 0:
        raise SystemExit(f"the torchrun job failed:\n{result.stderr[-3000:]}")
    return sorted(directory.glob("*.log"))


def record_large_logs(directory: Path) -> list[Path]:
    """Run benchmarks/large_compiles_job.py with TORCH_TRACE=directory (and provenance); its log."""
    from compiler.pipeline.trace_import import trace_env

    env = {**os.environ, **trace_env(directory), "PYTHONPATH": str(ROOT),
           "TORCHINDUCTOR_FORCE_DISABLE_CACHES": "1"}  # every compile for itself, as in a first run
    result = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "large_compiles_job.py")], env=env,
                            capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"the large-compilations job failed:\n{result.stderr[-3000:]}")
    return sorted(directory.glob("*.log"))


SHAPES = {"small": record_job_logs, "large": record_large_logs}  # shape -> what records its job's logs


def job_logs(shape: str, work: Path) -> list[Path]:
    """The logs of ``shape``'s job under ``work``, recorded now unless a run before left them there."""
    directory = work / f"{shape}_job"
    logs = sorted(directory.glob("*.log")) if (directory / "done").exists() else []
    if not logs:
        shutil.rmtree(directory, ignore_errors=True)
        logs = SHAPES[shape](directory)
        (directory / "done").write_text("")
    return logs


def synthetic_log(sources: list[Path], target_bytes: int, out: Path) -> int:
    """Concatenate ``sources`` until ``out`` holds ``target_bytes``; the frame ids of each copy of each
    source are shifted (in record headers only) past all earlier ones, so every copy adds new
    compiles. Returns the number of copies."""
    texts = [p.read_bytes() for p in sources]
    span = 1 + max((int(m) for t in texts for m in _HEADER_IDS.findall(t)), default=0)
    copies, written = 0, 0
    with open(out, "wb") as stream:
        while written < target_bytes:
            for number, text in enumerate(texts):
                shift = span * (copies * len(texts) + number)

                def shifted(match: re.Match, shift: int = shift) -> bytes:
                    return b'"frame_id": %d' % (int(match.group(1)) + shift)

                lines = text.splitlines(keepends=True)
                chunk = b"".join(_HEADER_IDS.sub(shifted, line) if not line.startswith(b"\t") else line
                                 for line in lines)
                stream.write(chunk)
                written += len(chunk)
            copies += 1
    return copies


def rank_logs(sources: list[Path], ranks: int, target_bytes: int, out: Path) -> int:
    """A job of ``ranks`` ranks, ``target_bytes`` in all: each rank's log is ``synthetic_log`` of the
    job's own logs with its rank number written into every record header. Returns the copies per rank.
    A directory an earlier run made with the same sources and sizes is kept as it is."""
    made = f"{[str(p) for p in sources]} {ranks} {target_bytes}"
    if (out / "made").exists() and (out / "made").read_text() == made:
        first = out / "dedicated_log_torch_trace_rank_0_synthetic.log"
        return round(first.stat().st_size / sum(p.stat().st_size for p in sources))
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True, exist_ok=True)
    first = out / "dedicated_log_torch_trace_rank_0_synthetic.log"
    copies = synthetic_log(sources, target_bytes // ranks, first)
    text = first.read_bytes()
    for rank in range(ranks):
        own = b"".join(_HEADER_RANK.sub(b'"rank": %d' % rank, line) if not line.startswith(b"\t") else line
                       for line in text.splitlines(keepends=True))
        (out / f"dedicated_log_torch_trace_rank_{rank}_synthetic.log").write_bytes(own)
    (out / "made").write_text(made)
    return copies


_OPEN_JOB = """
import resource, sys, time
started = time.perf_counter()
import explorer
traces = explorer.load_trace(sys.argv[1])
opened = time.perf_counter()
listed = [(rank.rank, s.compile_id) for rank in traces for s in rank.summary.compiles]
rank, compile_id = listed[-1]
c = traces[rank][compile_id]
kernels = sum(len(g.kernels) for g in c.graphs)
done = time.perf_counter()
usage = resource.getrusage(resource.RUSAGE_SELF)
print(opened - started, done - opened, done - started, usage.ru_utime + usage.ru_stime, len(listed), len(traces),
      kernels, "torch" in sys.modules, usage.ru_maxrss)
"""


def open_job(directory: Path) -> dict[str, float]:
    """What a user does with a job's logs, in a fresh process: ``explorer.load_trace``, list every
    compilation of every rank, open the last one. Seconds (import included), CPU seconds, the process's
    peak RSS, and whether it imported torch."""
    out = subprocess.run([sys.executable, "-c", _OPEN_JOB, str(directory)], capture_output=True, text=True,
                         check=True, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    load_s, open_s, total_s, cpu_s, compiles, ranks, kernels, torch, rss_kb = out.stdout.split()[-9:]
    return {"load_s": float(load_s), "open_last_s": float(open_s), "s": float(total_s), "cpu_s": float(cpu_s),
            "compiles": int(compiles), "ranks": int(ranks), "kernels_in_last": int(kernels),
            "imported_torch": torch == "True", "rss_mb": int(rss_kb) / 1e3}


def tlparse_all_ranks(directory: Path) -> dict[str, float] | None:
    """tlparse's multi-rank report over the same directory: seconds, CPU seconds and peak RSS (one run)."""
    binary = shutil.which("tlparse") or str(Path(sys.executable).parent / "tlparse")
    if not Path(binary).exists():
        return None
    out = Path(tempfile.mkdtemp(prefix="tlparse_"))
    wrapper = ("import resource, subprocess, sys; code = subprocess.run(sys.argv[1:], capture_output=True).returncode; "
               "usage = resource.getrusage(resource.RUSAGE_CHILDREN); "
               "print(code, usage.ru_utime + usage.ru_stime, usage.ru_maxrss)")
    command = [sys.executable, "-c", wrapper, binary, str(directory), "--all-ranks-html", "-o", str(out / "report"),
               "--overwrite", "--no-browser"]
    started = time.perf_counter()
    code, cpu_s, rss_kb = subprocess.run(command, capture_output=True, text=True, check=True).stdout.split()[-3:]
    seconds = time.perf_counter() - started
    shutil.rmtree(out, ignore_errors=True)
    return {"s": seconds, "cpu_s": float(cpu_s), "rss_mb": int(rss_kb) / 1e3, "ok": code == "0"}


def _build_each(rank) -> int:
    for compile_id in rank.compile_ids:  # one after another, as a viewer walking the compiles would
        rank[compile_id]
    return len(rank.compile_ids)


def measure(log: Path) -> dict[str, float]:
    """Times without tracemalloc (it slows Python several-fold), then the same work again for memory."""
    from compiler.pipeline.traceset_load import load_trace

    started = time.perf_counter()
    traces = load_trace(log)
    index_s = time.perf_counter() - started
    started = time.perf_counter()
    built = _build_each(next(iter(traces)))
    build_s = time.perf_counter() - started
    tracemalloc.start()
    traces = load_trace(log)
    _, index_peak = tracemalloc.get_traced_memory()
    tracemalloc.reset_peak()
    _build_each(next(iter(traces)))
    _, build_peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {"mb": log.stat().st_size / 1e6, "compiles": built, "index_s": index_s, "index_peak_mb": index_peak / 1e6,
            "build_s": build_s, "build_peak_mb": build_peak / 1e6}


_MAX_RSS = ("import resource, subprocess, sys; subprocess.run(sys.argv[1:], capture_output=True); "
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
_SELF_RSS = "import resource, sys; {work}; print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"


def _max_rss_mb(command: list[str]) -> float:
    """Peak RSS of ``command`` run alone (in a fresh wrapper process, so nothing else is counted)."""
    out = subprocess.run([sys.executable, "-c", _MAX_RSS, *command], capture_output=True, text=True, check=True)
    return int(out.stdout.split()[-1]) / 1e3


def _self_rss_mb(work: str) -> float:
    out = subprocess.run([sys.executable, "-c", _SELF_RSS.format(work=work)], capture_output=True, text=True,
                         check=True, env={"PYTHONPATH": str(ROOT)})
    return int(out.stdout.split()[-1]) / 1e3


def rss(log: Path) -> dict[str, float]:
    """Peak RSS of a fresh process that runs load_trace, and of one that only imports it."""
    return {"import_mb": _self_rss_mb("import compiler.pipeline.traceset_load"),
            "load_trace_mb": _self_rss_mb(f"from compiler.pipeline.traceset_load import load_trace; load_trace({str(log)!r})")}


def tlparse(log: Path) -> dict[str, float] | None:
    binary = shutil.which("tlparse") or str(Path(sys.executable).parent / "tlparse")
    if not Path(binary).exists():
        return None
    out = Path(tempfile.mkdtemp(prefix="tlparse_"))
    command = [binary, str(log), "-o", str(out), "--overwrite", "--no-browser"]
    started = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    files = sum(1 for p in out.rglob("*") if p.is_file())
    peak = _max_rss_mb(command)
    shutil.rmtree(out, ignore_errors=True)
    return {"s": seconds, "rss_mb": peak, "ok": result.returncode == 0, "files": files}


def _job(args: argparse.Namespace, shape: str, sources: list[Path], directory: Path) -> list[str]:
    """One shape's multi-rank figure: a user's open of the job (load, list every compilation, open the
    last) and tlparse's multi-rank report of the same directory, one after the other. Its table row."""
    target, job = int(args.mb * 1e6), sum(p.stat().st_size for p in sources)
    if shape == "large":  # one copy of the job's log a rank
        ranks = max(1, round(target / job))
        target = ranks * job
    else:
        ranks = args.ranks
    copies = rank_logs(sources, ranks, target, directory)
    size = sum(p.stat().st_size for p in directory.glob("*.log")) / 1e6
    ours = open_job(directory)
    theirs = tlparse_all_ranks(directory)
    print(json.dumps({"shape": shape, "copies_per_rank": copies, "mb": size, "explorer": ours, "tlparse": theirs},
                     indent=1), flush=True)
    per = size / ours["compiles"] * 1e3
    row = [shape, str(ranks), f"{size:.0f}", f"{ours['compiles']:,} of {per:.0f} KB", f"{ours['s']:.1f}",
           f"{ours['cpu_s']:.1f}", f"{ours['rss_mb']:.0f}"]
    if theirs:
        row += [f"{theirs['s']:.1f}{'' if theirs['ok'] else ' (failed)'}", f"{theirs['cpu_s']:.1f}",
                f"{theirs['rss_mb']:.0f}", f"{ours['s'] / theirs['s']:.3f}", f"{ours['cpu_s'] / theirs['cpu_s']:.3f}",
                f"{ours['rss_mb'] / theirs['rss_mb']:.3f}"]
    else:
        row += ["not installed (pip install tlparse)"] + [""] * 5
    return row


COLUMNS = ["shape", "ranks", "MB", "compilations", "explorer s", "explorer CPU s", "explorer peak RSS MB",
           "tlparse s", "tlparse CPU s", "tlparse peak RSS MB", "s ratio", "CPU ratio", "RSS ratio"]


def _jobs(args: argparse.Namespace, work: Path) -> None:
    """The multi-rank figures of every shape asked for, one table."""
    table = recording.Table(COLUMNS, title="explorer: load_trace + list every compilation + open the last; "
                                           "tlparse --all-ranks-html; one after the other")
    for shape in args.shape:
        sources = sorted(args.logs.glob("*.log")) if args.logs and shape == "small" else job_logs(shape, work)
        table.add(*_job(args, shape, sources, work / f"{shape}_ranks"))
    print(table.text())
    recording.record(args, [table], notes=[
        "small: copies of examples/two_ranks.py's rank logs (many small compilations); large: one copy of "
        "benchmarks/large_compiles_job.py's log a rank (12 compilations of forward and backward graphs)",
        "ratios are explorer / tlparse; CPU seconds are user + system of each process (this machine is shared)"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=float, default=100.0, help="size of the synthetic log (default 100 MB)")
    parser.add_argument("--logs", type=Path, help="a TORCH_TRACE directory to copy the small shape's records from "
                                                  "(default: run its job)")
    parser.add_argument("--ranks", type=int, default=0,
                        help="write a job of this many ranks (--mb in all) and time opening it as a user does, "
                             "against tlparse --all-ranks-html")
    parser.add_argument("--shape", type=lambda text: text.split(","), default=["small", "large"],
                        help="with --ranks: the shapes of job, comma separated (default small,large)")
    parser.add_argument("--work", type=Path, help="keep the jobs' logs and the ranks made of them here, and reuse them")
    recording.add_argument(parser)
    args = parser.parse_args()
    unknown = [shape for shape in args.shape if shape not in SHAPES]
    if unknown:
        parser.error(f"unknown shape(s) {unknown}: pick from {list(SHAPES)}")
    work = args.work or Path(tempfile.mkdtemp(prefix="load_trace_bench_"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        if args.ranks:
            _jobs(args, work)
            return
        sources = sorted(args.logs.glob("*.log")) if args.logs else job_logs("small", work)
        log = work / "synthetic" / "dedicated_log_torch_trace_rank_0_synthetic.log"
        log.parent.mkdir(exist_ok=True)
        copies = synthetic_log(sources, int(args.mb * 1e6), log)
        ours = measure(log)
        process = rss(log)
        theirs = tlparse(log)
        print(json.dumps({"copies": copies, "load_trace": ours, "process_rss": process, "tlparse": theirs}, indent=1))
        print(f"\n| tool | {ours['mb']:.0f} MB log | s/MB | peak memory |")
        print("| --- | ---: | ---: | ---: |")
        print(f"| load_trace (index + cross-rank summary) | {ours['index_s']:.2f} s | {ours['index_s'] / ours['mb']:.3f} "
              f"| {ours['index_peak_mb']:.1f} MB Python heap; max RSS {process['load_trace_mb']:.0f} MB, of which "
              f"{process['import_mb']:.0f} MB is importing it |")
        print(f"| + every one of {ours['compiles']} compilations built | {ours['build_s']:.2f} s | "
              f"{ours['build_s'] / ours['mb']:.3f} | {ours['build_peak_mb']:.1f} MB (Python heap) |")
        if theirs:
            print(f"| tlparse (HTML report, {theirs['files']} files) | {theirs['s']:.2f} s | {theirs['s'] / ours['mb']:.3f} "
                  f"| {theirs['rss_mb']:.0f} MB (max RSS) |")
        else:
            print("| tlparse | not installed (pip install tlparse) | | |")
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
