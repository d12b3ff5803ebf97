"""Opening a large saved trace and its first view: ``explorer.load`` and what the widget sends first.

    python benchmarks/open_trace.py                         # a 32-layer Llama captured on CPU, then measured
    python benchmarks/open_trace.py --trace big.json.gz     # any file c.save() wrote

The trace (unless ``--trace``) is the one benchmarks/render.py ``--llama`` shows: a 32-layer
transformers Llama built from a LlamaConfig (hidden size 64) captured on CPU, saved as ``.json`` and
``.json.gz`` (kept with ``--work DIR`` and reused). Each measurement runs in a fresh process, ``--runs``
times, and prints the median of:

- open: ``import explorer`` and ``c = explorer.load(path)``;
- first view: what a notebook does to show ``c``: the explorer widget made for it (its summary, the
  first message), and the first part the view asks for (the first graph's FX outline), encoded;
- the widget package's own import (anywidget, ipywidgets, traitlets; a notebook that showed a widget
  before has paid it), timed apart, before the rest;
- CPU seconds of the whole and the process's peak RSS;
- with ``--chromium PATH``: the browser's share, in the static page of the same trace (``c.to_html``):
  from navigation start to the first frame with the graph drawn, median of ``--runs``, headless.

``--code DIR`` measures the package checked out at DIR instead of this one (the same file, before and
after a change); its commit is noted in the record.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks import recording  # noqa: E402

_OPEN = """
import resource, sys, time
started = time.perf_counter()
import anywidget  # the widget package: timed apart
widget_import = time.perf_counter() - started
started, cpu = time.perf_counter(), time.process_time()
import explorer
c = explorer.load(sys.argv[1])
opened = time.perf_counter()
from explorer import _widget
w = _widget(c.trace_view)
part = w._parts.encoded(f"{c.graphs[0].id}/fx_outline")
done = time.perf_counter()
print(widget_import, opened - started, done - opened, done - started, time.process_time() - cpu,
      resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, len(part))
"""


def llama_trace(work: Path, layers: int) -> Path:
    """Capture the Llama on CPU (in a child process) and save it as .json and .json.gz under ``work``."""
    path = work / f"llama{layers}.json"
    if path.exists() and path.with_suffix(".json.gz").exists():
        return path
    code = (f"import sys, torch; sys.path.insert(0, {str(ROOT)!r})\n"
            "from transformers import LlamaConfig, LlamaModel\nimport explorer\nexplorer.progress.off()\n"
            "torch.manual_seed(0)\n"
            f"config = LlamaConfig(num_hidden_layers={layers}, hidden_size=64, intermediate_size=128, "
            "num_attention_heads=4, num_key_value_heads=2, vocab_size=1000, max_position_embeddings=128)\n"
            "model = LlamaModel(config).eval()\nids = torch.randint(0, config.vocab_size, (1, 32))\n"
            "with torch.no_grad():\n    c = explorer.compile(model, ids)\n"
            f"c.save({str(path)!r}); c.save({str(path) + '.gz'!r})\n")
    subprocess.run([sys.executable, "-c", code], check=True)
    return path


def measure(path: Path, runs: int, code: Path = ROOT) -> dict[str, float]:
    """Median of ``runs`` fresh processes opening ``path`` and making its first view with the package at
    ``code``."""
    samples = []
    for _ in range(runs):
        out = subprocess.run([sys.executable, "-c", _OPEN, str(path)], capture_output=True, text=True, check=True,
                             cwd=code, env={"PYTHONPATH": str(code), "PATH": "/usr/bin:/bin"})
        widget, opened, first, total, cpu, rss_kb, part = out.stdout.split()[-7:]
        samples.append({"widget_import_s": float(widget), "open_s": float(opened), "first_view_s": float(first),
                        "total_s": float(total), "cpu_s": float(cpu), "rss_mb": int(rss_kb) / 1e3,
                        "first_part_kb": int(part) / 1e3})
    return {key: statistics.median(s[key] for s in samples) for key in samples[0]} | {
        "runs_s": [round(s["total_s"], 3) for s in samples]}


def browser_first_frame(path: Path, chromium: str, runs: int) -> float:
    """Median ms from navigation start to the first frame with the graph drawn, in the static page."""
    from playwright.sync_api import sync_playwright

    import explorer

    with tempfile.TemporaryDirectory() as tmp:
        page_path = explorer.load(path).to_html(Path(tmp) / "first.html")
        frames = []
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium, headless=True, args=["--no-sandbox"])
            for _ in range(runs):
                page = browser.new_page(viewport={"width": 1400, "height": 900})
                page.goto(page_path.as_uri())
                page.wait_for_selector(".ie-root[data-painted-at]", timeout=120_000)
                frames.append(float(page.locator(".ie-root").get_attribute("data-painted-at")))
                page.close()
            browser.close()
    return statistics.median(frames)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trace", type=Path, help="a saved trace (.json or .json.gz) to open instead of the Llama's")
    parser.add_argument("--layers", type=int, default=32, help="the Llama's layers (default 32)")
    parser.add_argument("--runs", type=int, default=5, help="fresh processes per file (default 5)")
    parser.add_argument("--work", type=Path, help="keep the Llama's trace here and reuse it")
    parser.add_argument("--code", type=Path, default=ROOT, help="measure the package checked out here (default: this one)")
    parser.add_argument("--chromium", help="also time the static page's first frame in this Chromium")
    recording.add_argument(parser)
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="open_trace_"))
    work.mkdir(parents=True, exist_ok=True)
    if args.trace:
        paths = [args.trace]
    else:
        started = time.perf_counter()
        saved = llama_trace(work, args.layers)
        print(f"trace of the {args.layers}-layer Llama ready in {time.perf_counter() - started:.0f} s")
        paths = [saved, saved.with_suffix(".json.gz")]
    table = recording.Table(["file", "MB", "open s", "first view s", "open + first view s (runs)", "CPU s",
                             "peak RSS MB", "widget package import s", "static page first frame ms"])
    rows = {path: measure(path, args.runs, args.code.resolve()) for path in paths}  # all before the browser runs
    for path, row in rows.items():
        print(json.dumps({"file": path.name, **row}, indent=1), flush=True)
        table.add(path.name, f"{path.stat().st_size / 1e6:.1f}", f"{row['open_s']:.2f}", f"{row['first_view_s']:.2f}",
                  f"{row['total_s']:.2f} ({', '.join(f'{x:.2f}' for x in row['runs_s'])})", f"{row['cpu_s']:.2f}",
                  f"{row['rss_mb']:.0f}", f"{row['widget_import_s']:.2f}",
                  f"{browser_first_frame(path, args.chromium, args.runs):.0f}" if args.chromium else "")
    print(table.text())
    commit = subprocess.run(["git", "-C", str(args.code), "log", "-1", "--format=%h %s"], capture_output=True,
                            text=True).stdout.strip()
    recording.record(args, [table], notes=[
        "open: import explorer + explorer.load; first view: the widget made for the compilation (its first "
        "message) and the first graph's FX outline (the first part the view asks for), encoded; medians of "
        "fresh processes, after the widget package is imported", f"package measured: {commit[:100]}"])


if __name__ == "__main__":
    main()
