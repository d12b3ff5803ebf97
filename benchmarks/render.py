"""How fast the explorer view is on large graphs, in the static HTML and in the live JupyterLab widget.

Synthesizes traces shaped like a multi-layer transformer's (38 FX nodes per block, with post-grad
nodes, loop IR, fused groups, kernels and a wrapper in the proportions Inductor produces, every id
distinct, module paths as nn_module_stack gives them) at the sizes asked for, and prints per size:

- the trace file size, `explorer.load` time and the memory it keeps (tracemalloc), the size of what
  the first view needs (the summary plus the first graph's outline; the full part comes behind it), and
  `c.to_html` of the loaded trace;
- static HTML: file size; first view (navigation start to the first frame with the graph drawn), the
  time to open the post-grad stage and one search keystroke once the index is built, median of 3,
  headless Chromium;
- JupyterLab: `c = explorer.load(path)` in one cell, `c` in the next; from running that cell to the
  first frame with the graph drawn, and the time to open the post-grad stage, median of 3.

`--llama` also compiles a 32-layer Llama built from a transformers config on CPU (compile time) and
measures its first view the same two ways.

    .venv/bin/python benchmarks/render.py [--sizes 2000,20000,100000] [--no-lab] [--llama]
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import widgets  # noqa: E402
from benchmarks import recording  # noqa: E402

SRC = "/home/user/project/transformer.py"

# One transformer block as (name, op, target, inputs-by-local-name, user line).
_BLOCK = [
    ("ln1_w", "get_attr", "ln1.weight", [], None),
    ("ln1_b", "get_attr", "ln1.bias", [], None),
    ("ln1", "call_function", "torch.nn.functional.layer_norm", ["x", "ln1_w", "ln1_b"], 31),
    ("wq", "get_attr", "attn.q.weight", [], None),
    ("wk", "get_attr", "attn.k.weight", [], None),
    ("wv", "get_attr", "attn.v.weight", [], None),
    ("q", "call_function", "torch._C._nn.linear", ["ln1", "wq"], 40),
    ("k", "call_function", "torch._C._nn.linear", ["ln1", "wk"], 41),
    ("v", "call_function", "torch._C._nn.linear", ["ln1", "wv"], 42),
    ("q_view", "call_method", "view", ["q"], 43),
    ("k_view", "call_method", "view", ["k"], 44),
    ("v_view", "call_method", "view", ["v"], 45),
    ("q_t", "call_method", "transpose", ["q_view"], 43),
    ("k_t", "call_method", "transpose", ["k_view"], 44),
    ("v_t", "call_method", "transpose", ["v_view"], 45),
    ("k_tt", "call_method", "transpose", ["k_t"], 46),
    ("scores", "call_function", "operator.matmul", ["q_t", "k_tt"], 46),
    ("scaled", "call_function", "operator.mul", ["scores"], 46),
    ("probs", "call_function", "torch.softmax", ["scaled"], 47),
    ("drop", "call_function", "torch.nn.functional.dropout", ["probs"], 48),
    ("ctx", "call_function", "operator.matmul", ["drop", "v_t"], 49),
    ("ctx_t", "call_method", "transpose", ["ctx"], 50),
    ("ctx_c", "call_method", "contiguous", ["ctx_t"], 50),
    ("ctx_v", "call_method", "view", ["ctx_c"], 50),
    ("wo", "get_attr", "attn.o.weight", [], None),
    ("attn_out", "call_function", "torch._C._nn.linear", ["ctx_v", "wo"], 51),
    ("res1", "call_function", "operator.add", ["x", "attn_out"], 32),
    ("ln2_w", "get_attr", "ln2.weight", [], None),
    ("ln2_b", "get_attr", "ln2.bias", [], None),
    ("ln2", "call_function", "torch.nn.functional.layer_norm", ["res1", "ln2_w", "ln2_b"], 33),
    ("w1", "get_attr", "mlp.fc1.weight", [], None),
    ("b1", "get_attr", "mlp.fc1.bias", [], None),
    ("fc1", "call_function", "torch._C._nn.linear", ["ln2", "w1", "b1"], 60),
    ("gelu", "call_function", "torch.nn.functional.gelu", ["fc1"], 61),
    ("w2", "get_attr", "mlp.fc2.weight", [], None),
    ("b2", "get_attr", "mlp.fc2.bias", [], None),
    ("fc2", "call_function", "torch._C._nn.linear", ["gelu", "w2", "b2"], 62),
    ("res2", "call_function", "operator.add", ["res1", "fc2"], 34),
]
_MATMULS = {"q", "k", "v", "scores", "ctx", "attn_out", "fc1", "fc2"}
_FUSIONS = [["ln1"], ["scaled", "probs", "drop"], ["res1", "ln2"], ["gelu"], ["res2"]]

_CPP_KERNEL = """#include "/tmp/torchinductor_user/cpu/header.h"
extern "C" void kernel(const float* in_ptr0, const float* in_ptr1, float* out_ptr0)
{{
    #pragma omp parallel num_threads(2)
    {{
        #pragma omp for
        for(int64_t x0=static_cast<int64_t>(0L); x0<static_cast<int64_t>(512L); x0+=static_cast<int64_t>(1L))
        {{
            float tmp_acc0 = 0;
            for(int64_t r0=static_cast<int64_t>(0L); r0<static_cast<int64_t>(768L); r0+=static_cast<int64_t>(1L))
            {{
                auto tmp0 = in_ptr0[static_cast<int64_t>(r0 + 768L*x0)];
                auto tmp1 = in_ptr1[static_cast<int64_t>(r0)];
                auto tmp2 = decltype(tmp0)(tmp0 + tmp1);  // {a}
                tmp_acc0 = tmp_acc0 + tmp2;               // {b}
            }}
            out_ptr0[static_cast<int64_t>(x0)] = tmp_acc0 / static_cast<float>(768.0);
        }}
    }}
}}
"""


def synthetic_trace(layers: int = 53) -> dict:
    """A schema-conformant trace with `layers` transformer blocks (38 FX nodes each)."""
    fx_nodes, pg_nodes, loop_ir, fused, kernels = [], [], [], [], []
    wrapper = ["# AOT ID: ['0_inference']", "from torch._inductor.select_algorithm import extern_kernels", "", "def call(args):"]
    kernel_lines: dict[str, str] = {}
    fx_nodes.append(_fx("x", "placeholder", "L_x_", [], None))
    pg_nodes.append(_pg("arg0_1", "placeholder", "arg0_1", [], None, ["x"]))
    prev, prev_pg = "x", "arg0_1"
    op_counter = 0
    for layer in range(layers):
        local = {"x": prev}
        local_pg = {"x": prev_pg}
        for name, op, target, inputs, line in _BLOCK:
            full = f"l{layer}_{name}"
            local[name] = full
            fx_nodes.append(_fx(full, op, target, [local[i] for i in inputs], line))
            pg_name = f"mm_{layer}_{name}" if name in _MATMULS else f"{name}_{layer}"
            local_pg[name] = pg_name
            pg_nodes.append(_pg(pg_name, "call_function" if op != "get_attr" else "placeholder",
                                "aten.mm.default" if name in _MATMULS else f"aten.{name}.default",
                                [local_pg[i] for i in inputs], line, [full]))
            if name in _MATMULS:
                kid = f"extern_kernels.mm:{op_counter}" if op_counter else "extern_kernels.mm"
                op_name = f"op{op_counter}"
                op_counter += 1
                wrapper.append(f"    extern_kernels.mm({', '.join(local_pg[i] for i in inputs)}, out=buf{op_counter})")
                kernel_lines[str(len(wrapper))] = kid
                loop_ir.append(_ir(op_name, "extern", [pg_name], op_name, kid))
                fused.append({"name": op_name, "kind": "extern", "nodes": [op_name], "origins": [pg_name], "kernels": [kid]})
                kernels.append(_kernel(kid, "extern", f"extern_kernels.mm(out=buf{op_counter})", op_name, [op_name],
                                       [pg_name], [full], {"1": [pg_name]}, [len(wrapper)]))
                _link(fx_nodes[-1], pg_nodes[-1], op_name, kid)
        for group_members in _FUSIONS:
            ops = []
            origins = [local_pg[m] for m in group_members]
            kid = f"cpp_fused_{'_'.join(group_members)}_{len(kernels)}"
            for member in group_members:
                op_name = f"op{op_counter}"
                op_counter += 1
                ops.append(op_name)
            group = "_".join(ops)
            for op_name in ops:
                loop_ir.append(_ir(op_name, "reduction", origins, group, kid))
            fused.append({"name": group, "kind": "fused" if len(ops) > 1 else "single", "nodes": ops, "origins": origins, "kernels": [kid]})
            source = _CPP_KERNEL.format(a=origins[0], b=origins[-1])
            wrapper.append(f"    {kid}(buf{op_counter}, buf{op_counter + 1})")
            kernel_lines[str(len(wrapper))] = kid
            kernels.append(_kernel(kid, "cpp", source, group, ops, origins, [local[m] for m in group_members],
                                   {"14": [origins[0]], "15": [origins[-1]]}, [len(wrapper)]))
            for member in group_members:
                idx_fx = next(i for i in range(len(fx_nodes) - 1, -1, -1) if fx_nodes[i]["name"] == local[member])
                idx_pg = next(i for i in range(len(pg_nodes) - 1, -1, -1) if pg_nodes[i]["name"] == local_pg[member])
                for op_name in ops:
                    _link(fx_nodes[idx_fx], pg_nodes[idx_pg], op_name, kid)
        prev, prev_pg = local["res2"], local_pg["res2"]
    fx_nodes.append(_fx("output", "output", "output", [prev], None))
    pg_nodes.append(_pg("output", "output", "output", [prev_pg], None, ["output"]))
    wrapper.append("    return (buf0, )")
    users: dict[str, list[str]] = {}
    for n in fx_nodes:
        for i in n["inputs"]:
            users.setdefault(i, []).append(n["name"])
    for n in fx_nodes:
        n["users"] = users.get(n["name"], [])
    graph = {
        "id": "g0", "index": 0, "kind": "inference", "dynamo_graph": 0, "timings": {"compile": 41.0},
        "fx": {"code": "def forward(self, L_x_):\n    ...\n", "nodes": fx_nodes},
        "post_grad": {"code": "def forward(self, arg0_1):\n    ...\n", "nodes": pg_nodes},
        "loop_ir": loop_ir, "fused": fused, "not_fused": [], "kernels": kernels,
        "wrapper": {"source": "\n".join(wrapper) + "\n", "kernel_lines": kernel_lines}, "autotune": [],
    }
    sources = {SRC: {str(i): f"        line_{i} = self.block(x)  # model code" for i in range(30, 63)}}
    return {
        "schema": "inductor-explorer/trace", "version": 2,
        "meta": {"function": "Transformer.forward", "device": "cpu", "device_name": "x86_64 CPU", "torch": "2.13.0+cpu",
                 "triton": None, "python": "3.11", "created": "2026-01-01T00:00:00Z", "toggles": {}, "inductor_overrides": {},
                 "backward": False, "timings": {"total": 45.0}},
        "inputs": [{"shape": [4, 128, 768], "dtype": "torch.float32", "device": "cpu", "requires_grad": False}],
        "outputs": [{"shape": [4, 128, 768], "dtype": "torch.float32", "device": "cpu", "requires_grad": False}],
        "sources": sources, "graphs": [graph],
    }


_PARTS = {"ln1": "ln1", "ln2": "ln2", "fc1": "mlp.fc1", "w1": "mlp.fc1", "b1": "mlp.fc1", "gelu": "mlp",
          "fc2": "mlp.fc2", "w2": "mlp.fc2", "b2": "mlp.fc2", "res1": "", "res2": ""}


def _module(name: str) -> str | None:
    """The module path a real capture records for this node (nn_module_stack): layers.<i>.<part>."""
    if not name.startswith("l") or "_" not in name:
        return None
    layer, local = name[1:].split("_", 1)
    part = _PARTS.get(local.removesuffix("_w").removesuffix("_b"), "attn")
    return f"layers.{layer}" + (f".{part}" if part else "")


def _fx(name, op, target, inputs, line):
    return {"name": name, "op": op, "target": target, "args": f"({', '.join(inputs)})", "shape": [4, 128, 768],
            "dtype": "torch.float32", "inputs": inputs, "users": [], "user_line": [SRC, line] if line else None,
            "stack": [[SRC, line, "forward"]] if line else [], "module": _module(name), "post_grad": [], "kernels": []}


def _pg(name, op, target, inputs, line, fx):
    return {"name": name, "op": op, "target": target, "args": f"({', '.join(inputs)})", "shape": [512, 768],
            "dtype": "torch.float32", "inputs": inputs, "users": [], "user_line": [SRC, line] if line else None,
            "stack": [[SRC, line, "forward"]] if line else [], "module": _module(fx[0]) if fx else None, "fx": fx,
            "loop_ir": [], "kernels": []}


def _ir(name, kind, origins, group, kid):
    return {"name": name, "kind": kind, "buffers": [f"buf{name[2:]}"], "device": "cpu", "dtype": "torch.float32",
            "size": ["512", "768"], "ranges": {"p0": "512", "r0_0": "768"}, "sizes": [["512"], ["768"]],
            "indexing": {"index0": "768*p0 + r0_0"}, "reads": ["buf0[768*c0 + c1]"], "writes": [f"buf{name[2:]}[c0]"],
            "body": "def body(self, ops):\n    load = ops.load('buf0', self.get_index('index0'))\n    return ops.store('buf1', self.get_index('index0'), load, None)",
            "origins": origins, "group": group, "eliminated": False, "kernels": [kid]}


def _kernel(kid, language, source, group, loop_ir, pg, fx, line_nodes, wrapper_lines):
    return {"id": kid, "name": kid.split(":")[0], "language": language, "source": source, "group": group,
            "loop_ir": loop_ir, "post_grad_nodes": pg, "fx_nodes": fx, "user_lines": [], "line_nodes": line_nodes,
            "wrapper_lines": wrapper_lines, "meta": {}}


def _link(fx_node, pg_node, op_name, kid):
    if pg_node["name"] not in fx_node["post_grad"]:
        fx_node["post_grad"].append(pg_node["name"])
    for lst, value in ((fx_node["kernels"], kid), (pg_node["kernels"], kid), (pg_node["loop_ir"], op_name)):
        if value not in lst:
            lst.append(value)


STAGE_JS = """async (stage) => {
  const root = [...document.querySelectorAll('.ie-root')].pop();
  const t0 = performance.now();
  root.querySelector(`.ie-stage-btn[data-stage="${stage}"]`).click();
  while (!root.querySelector(`.ie-main [data-stage="${stage}"] g.ie-node`)) await new Promise((r) => setTimeout(r, 5));
  return performance.now() - t0;
}"""


# One keystroke in the search box once its index is built: the query runs inside the input event.
SEARCH_JS = """() => { const input = document.querySelector('.ie-gsearch-input'); const t0 = performance.now();
  input.value = 'l4'; input.dispatchEvent(new Event('input')); return performance.now() - t0; }"""


def load_figures(path: Path) -> dict:
    """explorer.load time (excluding import torch) and the memory the loaded compilation keeps, in a fresh process."""
    code = (
        "import sys, time, tracemalloc, gc, torch\n"
        f"sys.path.insert(0, {str(Path(__file__).resolve().parents[1])!r})\n"
        "import explorer\n"
        "tracemalloc.start(); t = time.perf_counter()\n"
        f"c = explorer.load({str(path)!r})\n"
        "s = time.perf_counter() - t; gc.collect(); cur, peak = tracemalloc.get_traced_memory()\n"
        "print(s, cur, peak)\n"
    )
    seconds, current, peak = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    html = path.with_suffix(".html")
    export = code.replace("tracemalloc.start(); ", "").replace(  # to_html right after load, as a notebook would
        "s = time.perf_counter() - t; gc.collect(); cur, peak = tracemalloc.get_traced_memory()\nprint(s, cur, peak)\n",
        f"s = time.perf_counter() - t\nt = time.perf_counter(); c.to_html({str(html)!r}); print(s, time.perf_counter() - t)\n")
    untraced, to_html = subprocess.run([sys.executable, "-c", export], capture_output=True, text=True, check=True).stdout.split()
    html.unlink(missing_ok=True)
    return {"load_s": float(untraced), "kept_mb": float(current) / 1e6, "peak_mb": float(peak) / 1e6,
            "traced_load_s": float(seconds), "to_html_s": float(to_html)}


MARKS_JS = """(since) => performance.getEntriesByType('mark').filter((m) => m.name.startsWith('ie:') && m.startTime >= since)
  .map((m) => [m.name.slice(3), m.startTime - since])"""
START_MARKS_JS = "() => { globalThis.inductorExplorerMarks = true; performance.clearMarks(); return performance.now(); }"


def static_figures(trace: dict, tmp: Path, chromium: str, repeat: int = 3) -> dict:
    from playwright.sync_api import sync_playwright

    path = widgets.write_html(trace, tmp / "render.html")
    first, stage, search = [], [], []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, headless=True,
                                    args=["--no-sandbox", "--disable-background-networking"])
        for _ in range(repeat):
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.add_init_script("globalThis.inductorExplorerMarks = true")
            page.goto(path.as_uri())
            page.wait_for_selector(".ie-root[data-painted-at]", timeout=120_000)
            first.append(float(page.locator(".ie-root").get_attribute("data-painted-at")))
            page.wait_for_selector('.ie-root[data-pending="0"]', timeout=120_000)
            marks = page.evaluate(MARKS_JS, 0)
            stage.append(page.evaluate(STAGE_JS, "post_grad"))
            page.fill(".ie-gsearch-input", "fc")  # builds the search index
            page.wait_for_selector(".ie-gsearch-pop:not([hidden]) .ie-gsearch-group", timeout=120_000)
            page.wait_for_selector('.ie-root[data-pending="0"]', timeout=120_000)
            search.append(page.evaluate(SEARCH_JS))
            page.close()
        browser.close()
    return {"html_mb": path.stat().st_size / 1e6, "first_view_ms": statistics.median(first), "runs_ms": first,
            "open_stage_ms": statistics.median(stage), "search_ms": statistics.median(search), "marks": marks}


def lab_figures(trace_files: dict[str, Path], tmp: Path, repeat: int = 3) -> dict[str, dict]:
    """Per trace: from running the cell that shows a loaded trace to its first frame, in a real JupyterLab."""
    import nbformat

    from tests.jupyterlab import lab_server, notebook_page, run_cell, wait_idle

    notebooks = tmp / "notebooks"
    notebooks.mkdir()
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    cells = ["import explorer"]
    for name, path in trace_files.items():
        cells += [f"c = explorer.load({str(path)!r})", "c"]
    nb.cells = [nbformat.v4.new_code_cell(c) for c in cells]
    nbformat.write(nb, notebooks / "render.ipynb")
    out: dict[str, dict] = {}
    with lab_server(notebooks, tmp) as url, notebook_page(url, "render.ipynb") as page:
        run_cell(page, 0)
        wait_idle(page)
        for i, name in enumerate(trace_files):
            run_cell(page, 1 + 2 * i)
            wait_idle(page, 300_000)
            first, stage = [], []
            show = 2 + 2 * i
            for _ in range(repeat):
                page.evaluate("(i) => window.jupyterapp.shell.currentWidget.content.widgets[i].model.outputs.clear()", show)
                started = page.evaluate(START_MARKS_JS)
                run_cell(page, show)
                cell = page.locator(".jp-Notebook .jp-Cell").nth(show)
                cell.locator(".ie-root[data-painted-at]").wait_for(timeout=300_000)
                first.append(float(cell.locator(".ie-root").get_attribute("data-painted-at")) - started)
                cell.locator('.ie-root[data-pending="0"]').wait_for(timeout=300_000)
                marks = page.evaluate(MARKS_JS, started)
                stage.append(page.evaluate(STAGE_JS, "post_grad"))
            out[name] = {"first_view_ms": statistics.median(first), "runs_ms": first, "open_stage_ms": statistics.median(stage),
                         "marks": marks}
    return out


def first_message(trace: dict) -> dict:
    parts = widgets.TraceParts(trace)
    summary = len(json.dumps(parts.summary(), separators=(",", ":")))
    gid = trace["graphs"][0]["id"]
    return {"summary_kb": summary / 1e3, "first_part_mb": len(parts.encoded(f"{gid}/fx_outline")) / 1e6,
            "full_part_mb": len(parts.encoded(f"{gid}/fx")) / 1e6}


def llama_trace(tmp: Path) -> tuple[dict, float]:
    import torch
    from transformers import LlamaConfig, LlamaModel

    import explorer

    torch.manual_seed(0)
    config = LlamaConfig(num_hidden_layers=32, hidden_size=64, intermediate_size=128, num_attention_heads=4,
                         num_key_value_heads=2, vocab_size=1000, max_position_embeddings=128)
    model = LlamaModel(config).eval()
    ids = torch.randint(0, config.vocab_size, (1, 32))
    started = time.perf_counter()
    with torch.no_grad():
        c = explorer.compile(model, ids)
    seconds = time.perf_counter() - started
    path = c.save(tmp / "llama32.json")
    return json.loads(path.read_text()), seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="2000,20000,100000", help="post-grad node counts to synthesize")
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    parser.add_argument("--no-browser", action="store_true", help="skip every Chromium measurement")
    parser.add_argument("--no-lab", action="store_true", help="skip the JupyterLab measurement")
    parser.add_argument("--llama", action="store_true", help="also compile and show a 32-layer Llama (CPU)")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    parser.add_argument("--marks", action="store_true",
                        help="print where the last first view spent its time (the views' performance marks, ms)")
    recording.add_argument(parser)
    args = parser.parse_args()
    figures: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as tmp_dir:
        tmp = Path(tmp_dir)
        traces: dict[str, dict] = {}
        for size in (int(s) for s in args.sizes.split(",") if s):
            traces[f"{size} nodes"] = synthetic_trace(max(1, round(size / 38)))
        if args.llama:
            trace, seconds = llama_trace(tmp)
            traces["llama 32 layers"] = trace
            figures["llama 32 layers"] = {"compile_s": seconds}
        files = {}
        for name, trace in traces.items():
            graph = trace["graphs"][0]
            path = tmp / f"{name.replace(' ', '_')}.json"
            path.write_text(json.dumps(trace))
            files[name] = path
            row = figures.setdefault(name, {})
            row.update({"post_grad_nodes": len(graph["post_grad"]["nodes"]), "fx_nodes": len(graph["fx"]["nodes"]),
                        "trace_mb": path.stat().st_size / 1e6, **first_message(trace), **load_figures(path)})
            if not args.no_browser:
                row["static"] = static_figures(trace, tmp, args.chromium)
            gc.collect()
        if not (args.no_browser or args.no_lab):
            for name, lab in lab_figures(files, tmp).items():
                figures[name]["lab"] = lab
    for name, row in figures.items():
        print(f"\n{name}: {row['post_grad_nodes']} post-grad / {row['fx_nodes']} FX nodes, trace {row['trace_mb']:.1f} MB"
              + (f", compiled in {row['compile_s']:.1f} s" if "compile_s" in row else ""))
        print(f"  explorer.load {row['load_s']:.2f} s, keeps {row['kept_mb']:.0f} MB "
              f"({row['kept_mb'] / row['trace_mb']:.1f}x the file; peak {row['peak_mb']:.0f} MB); "
              f"c.to_html {row['to_html_s']:.2f} s")
        print(f"  first view reads: summary {row['summary_kb']:.1f} kB + first graph's outline {row['first_part_mb']:.2f} MB "
              f"(its full part, loaded behind: {row['full_part_mb']:.2f} MB)")
        for where in ("static", "lab"):
            if where in row:
                r = row[where]
                size = f", file {r['html_mb']:.1f} MB" if "html_mb" in r else ""
                print(f"  {where}: first view {r['first_view_ms']:.0f} ms (runs {', '.join(f'{x:.0f}' for x in r['runs_ms'])}), "
                      f"open post-grad stage {r['open_stage_ms']:.0f} ms{size}"
                      + (f", a search keystroke {r['search_ms']:.1f} ms" if "search_ms" in r else ""))
                if args.marks:
                    print("    " + ", ".join(f"{name} {ms:.0f}" for name, ms in r.get("marks", [])))
    table = recording.Table(["post-grad nodes", "`c.to_html` s", "HTML MB", "static first view ms",
                             "JupyterLab first view ms (runs)", "outline MB", "full FX part MB"])
    for name, row in figures.items():
        static, lab = row.get("static"), row.get("lab")  # None (an empty cell) under --no-browser, --no-lab
        table.add(f"{row['post_grad_nodes']:,}" + ("" if name.endswith(" nodes") else f" ({name})"),
                  f"{row['to_html_s']:.2f}", static and f"{static['html_mb']:.1f}",
                  static and f"{static['first_view_ms']:.0f}",
                  lab and f"{lab['first_view_ms']:.0f} ({', '.join(f'{x:.0f}' for x in lab['runs_ms'])})",
                  f"{row['first_part_mb']:.2f}", f"{row['full_part_mb']:.2f}")
    print(f"\n{table.text()}")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1))
    recording.record(args, [table])
    return 0


if __name__ == "__main__":
    sys.exit(main())
