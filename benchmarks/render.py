"""How fast the explorer view is on a large graph.

Synthesizes a trace shaped like a multi-layer transformer's (about 2,000 Dynamo
FX nodes, with post-grad nodes, loop IR, fused groups, kernels and a wrapper
in the proportions Inductor produces), then prints:

- payload build time (widgets.payload_for) and payload size,
- HTML export size,
- first render in headless Chromium: navigation start until the first frame
  after the explorer mounted with the FX graph drawn (must stay under 1 s).

    .venv/bin/python benchmarks/render.py [--layers 50] [--chromium /usr/bin/chromium]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import widgets  # noqa: E402

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
        "schema": "inductor-explorer/trace", "version": 1,
        "meta": {"function": "Transformer.forward", "device": "cpu", "device_name": "x86_64 CPU", "torch": "2.13.0+cpu",
                 "triton": None, "python": "3.11", "created": "2026-01-01T00:00:00Z", "toggles": {}, "inductor_overrides": {},
                 "backward": False, "timings": {"total": 45.0}},
        "inputs": [{"shape": [4, 128, 768], "dtype": "torch.float32", "device": "cpu", "requires_grad": False}],
        "outputs": [{"shape": [4, 128, 768], "dtype": "torch.float32", "device": "cpu", "requires_grad": False}],
        "sources": sources, "graphs": [graph],
    }


def _fx(name, op, target, inputs, line):
    return {"name": name, "op": op, "target": target, "args": f"({', '.join(inputs)})", "shape": [4, 128, 768],
            "dtype": "torch.float32", "inputs": inputs, "users": [], "user_line": [SRC, line] if line else None,
            "stack": [[SRC, line, "forward"]] if line else [], "post_grad": [], "kernels": []}


def _pg(name, op, target, inputs, line, fx):
    return {"name": name, "op": op, "target": target, "args": f"({', '.join(inputs)})", "shape": [512, 768],
            "dtype": "torch.float32", "inputs": inputs, "users": [], "user_line": [SRC, line] if line else None,
            "stack": [[SRC, line, "forward"]] if line else [], "fx": fx, "loop_ir": [], "kernels": []}


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


def time_payload(trace: dict, repeat: int = 5) -> tuple[float, int]:
    """Median seconds of payload_for(trace) and the payload's JSON size in bytes."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        payload = widgets.payload_for(trace)
        times.append(time.perf_counter() - t0)
    return statistics.median(times), len(json.dumps(payload, separators=(",", ":")))


def first_render_ms(html_path: Path, chromium: str, repeat: int = 3) -> list[dict]:
    """Open the export in headless Chromium; per run: ms to mount and to the first frame after it."""
    from playwright.sync_api import sync_playwright

    runs = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, headless=True,
                                    args=["--no-sandbox", "--disable-background-networking"])
        for _ in range(repeat):
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.goto(html_path.as_uri())
            page.wait_for_selector(".ie-root[data-painted-at]", timeout=30_000)
            root = page.locator(".ie-root")
            runs.append({
                "mounted_ms": float(root.get_attribute("data-ready-at")),
                "painted_ms": float(root.get_attribute("data-painted-at")),
                "mount_ms": float(root.get_attribute("data-mount-ms")),
                "nodes_drawn": page.locator("g.ie-node").count(),
            })
            page.close()
        browser.close()
    return runs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=53, help="transformer blocks (38 FX nodes each)")
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    parser.add_argument("--no-browser", action="store_true", help="skip the Chromium measurement")
    args = parser.parse_args()
    trace = synthetic_trace(args.layers)
    n_fx = len(trace["graphs"][0]["fx"]["nodes"])
    build_s, size = time_payload(trace)
    print(f"FX nodes: {n_fx}  post-grad nodes: {len(trace['graphs'][0]['post_grad']['nodes'])}  kernels: {len(trace['graphs'][0]['kernels'])}")
    print(f"payload build: {build_s * 1000:.1f} ms (limit 500 ms)")
    print(f"payload size: {size / 1e6:.2f} MB")
    with tempfile.TemporaryDirectory() as tmp:
        path = widgets.write_html(trace, Path(tmp) / "render.html")
        print(f"HTML export: {path.stat().st_size / 1e6:.2f} MB")
        if args.no_browser:
            return 0
        runs = first_render_ms(path, args.chromium)
    painted = [r["painted_ms"] for r in runs]
    print(f"first render (navigation -> first frame with the graph): median {statistics.median(painted):.0f} ms "
          f"over {len(runs)} runs, runs {', '.join(f'{x:.0f}' for x in painted)} (limit 1000 ms)")
    print(f"  of which mount (layout + first draw): {statistics.median(r['mount_ms'] for r in runs):.0f} ms; "
          f"SVG nodes drawn: {runs[0]['nodes_drawn']} of {n_fx}")
    return 0 if statistics.median(painted) < 1000 and build_s < 0.5 else 1


if __name__ == "__main__":
    sys.exit(main())
