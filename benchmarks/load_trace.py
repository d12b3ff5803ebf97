"""load_trace on a large TORCH_TRACE log: seconds per MB and peak memory, side by side with tlparse.

    python benchmarks/load_trace.py --mb 100
    python benchmarks/load_trace.py --mb 1000 --ranks 145    # a job's directory, against tlparse --all-ranks-html

The log is built by concatenating real records: the rank logs of examples/two_ranks.py (run once
here under torchrun, 2 CPU ranks, unless --logs names logs to reuse), copy after copy, each copy's
frame ids shifted so its compiles are new compiles, as in a long job that keeps compiling. Printed:

- ``load_trace`` (stream the log, index every compile, summarize the ranks): seconds, s/MB, peak
  Python memory (tracemalloc) against the log's size;
- building every compile's Compilation from the index (parsing graphs, output code, guards);
- tlparse (PyTorch's own report over the same log: ``pip install tlparse``) on the same file,
  timed as a subprocess, with its peak RSS; for comparison, the peak RSS of a fresh process running
  load_trace, and of one that only imports it (torch is most of that).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
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
    job's own logs with its rank number written into every record header. Returns the copies per rank."""
    out.mkdir(parents=True, exist_ok=True)
    first = out / "dedicated_log_torch_trace_rank_0_synthetic.log"
    copies = synthetic_log(sources, target_bytes // ranks, first)
    text = first.read_bytes()
    for rank in range(ranks):
        own = b"".join(_HEADER_RANK.sub(b'"rank": %d' % rank, line) if not line.startswith(b"\t") else line
                       for line in text.splitlines(keepends=True))
        (out / f"dedicated_log_torch_trace_rank_{rank}_synthetic.log").write_bytes(own)
    return copies


_OPEN_JOB = """
import resource, sys, time
started = time.perf_counter()
from compiler.pipeline.traceset_load import load_trace
traces = load_trace(sys.argv[1])
opened = time.perf_counter()
listed = [(rank.rank, s.compile_id) for rank in traces for s in rank.summary.compiles]
rank, compile_id = listed[-1]
c = traces[rank][compile_id]
kernels = sum(len(g.kernels) for g in c.graphs)
done = time.perf_counter()
print(opened - started, done - opened, done - started, len(listed), len(traces), kernels,
      resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def open_job(directory: Path) -> dict[str, float]:
    """What a user does with a job's logs, in a fresh process: ``load_trace``, list every compilation of
    every rank, open the last one. Seconds (import included) and the process's peak RSS."""
    out = subprocess.run([sys.executable, "-c", _OPEN_JOB, str(directory)], capture_output=True, text=True,
                         check=True, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    load_s, open_s, total_s, compiles, ranks, kernels, rss_kb = out.stdout.split()[-7:]
    return {"load_s": float(load_s), "open_last_s": float(open_s), "s": float(total_s), "compiles": int(compiles),
            "ranks": int(ranks), "kernels_in_last": int(kernels), "rss_mb": int(rss_kb) / 1e3}


def tlparse_all_ranks(directory: Path) -> dict[str, float] | None:
    """tlparse's multi-rank report over the same directory: seconds and peak RSS (one run)."""
    binary = shutil.which("tlparse") or str(Path(sys.executable).parent / "tlparse")
    if not Path(binary).exists():
        return None
    out = Path(tempfile.mkdtemp(prefix="tlparse_"))
    wrapper = ("import resource, subprocess, sys; code = subprocess.run(sys.argv[1:], capture_output=True).returncode; "
               "print(code, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    command = [sys.executable, "-c", wrapper, binary, str(directory), "--all-ranks-html", "-o", str(out / "report"),
               "--overwrite", "--no-browser"]
    started = time.perf_counter()
    code, rss_kb = subprocess.run(command, capture_output=True, text=True, check=True).stdout.split()[-2:]
    seconds = time.perf_counter() - started
    shutil.rmtree(out, ignore_errors=True)
    return {"s": seconds, "rss_mb": int(rss_kb) / 1e3, "ok": code == "0"}


def _build_each(rank) -> int:
    for compile_id in rank.compile_ids:
        rank[compile_id]
        rank._compilations.pop(compile_id)  # one at a time, as a viewer walking the compiles would
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
    """Peak RSS of a fresh process that runs load_trace, and of one that only imports it (mostly torch)."""
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


def _job(args: argparse.Namespace, sources: list[Path], directory: Path) -> None:
    """The multi-rank figure: a user's open of the job (load, list every compilation, open the last) and
    tlparse's multi-rank report of the same directory, one after the other."""
    copies = rank_logs(sources, args.ranks, int(args.mb * 1e6), directory)
    size = sum(p.stat().st_size for p in directory.glob("*.log")) / 1e6
    ours = open_job(directory)
    theirs = tlparse_all_ranks(directory)
    print(json.dumps({"copies_per_rank": copies, "mb": size, "explorer": ours, "tlparse": theirs}, indent=1))
    table = recording.Table([f"{args.ranks} ranks, {size:.0f} MB, {ours['compiles']} compilations", "s", "peak RSS MB"])
    table.add("explorer: load_trace + list every compilation + open the last", f"{ours['s']:.1f}", f"{ours['rss_mb']:.0f}")
    if theirs:
        table.add(f"tlparse --all-ranks-html{'' if theirs['ok'] else ' (failed)'}", f"{theirs['s']:.1f}",
                  f"{theirs['rss_mb']:.0f}")
        table.add("explorer / tlparse", f"{ours['s'] / theirs['s']:.3f}", f"{ours['rss_mb'] / theirs['rss_mb']:.3f}")
    print(table.text())
    recording.record(args, [table], notes=[f"each rank's log: {copies} copies of the job's logs, "
                                           f"{ours['compiles'] // args.ranks} compilations a rank"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=float, default=100.0, help="size of the synthetic log (default 100 MB)")
    parser.add_argument("--logs", type=Path, help="a TORCH_TRACE directory to copy records from (default: run the job)")
    parser.add_argument("--ranks", type=int, default=0,
                        help="write a job of this many ranks (--mb in all) and time opening it as a user does, "
                             "against tlparse --all-ranks-html")
    recording.add_argument(parser)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="load_trace_bench_"))
    try:
        sources = sorted(args.logs.glob("*.log")) if args.logs else record_job_logs(work / "job")
        if args.ranks:
            _job(args, sources, work / "ranks")
            return
        log = work / "synthetic" / "dedicated_log_torch_trace_rank_0_synthetic.log"
        log.parent.mkdir()
        copies = synthetic_log(sources, int(args.mb * 1e6), log)
        ours = measure(log)
        process = rss(log)
        theirs = tlparse(log)
        print(json.dumps({"copies": copies, "load_trace": ours, "process_rss": process, "tlparse": theirs}, indent=1))
        print(f"\n| tool | {ours['mb']:.0f} MB log | s/MB | peak memory |")
        print("| --- | ---: | ---: | ---: |")
        print(f"| load_trace (index + cross-rank summary) | {ours['index_s']:.2f} s | {ours['index_s'] / ours['mb']:.3f} "
              f"| {ours['index_peak_mb']:.1f} MB Python heap; max RSS {process['load_trace_mb']:.0f} MB, of which "
              f"{process['import_mb']:.0f} MB is importing torch |")
        print(f"| + every one of {ours['compiles']} compilations built | {ours['build_s']:.2f} s | "
              f"{ours['build_s'] / ours['mb']:.3f} | {ours['build_peak_mb']:.1f} MB (Python heap) |")
        if theirs:
            print(f"| tlparse (HTML report, {theirs['files']} files) | {theirs['s']:.2f} s | {theirs['s'] / ours['mb']:.3f} "
                  f"| {theirs['rss_mb']:.0f} MB (max RSS) |")
        else:
            print("| tlparse | not installed (pip install tlparse) | | |")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
