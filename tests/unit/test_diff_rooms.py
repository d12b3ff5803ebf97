"""A diff is compiler's own: ``compiler.diff``, its renderings and its JSON, and ``Sweep.diff``, all work in a
process that never imports explorer (or widgets), on two recorded GPU traces (no compile)."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.paths import FIXTURES, ROOT

SCRIPT = f"""
import json, sys
from rich.console import Console

import compiler
from compiler.sweeps import Sweep, SweepRow

fixtures = {str(FIXTURES)!r}
a = compiler.load(fixtures + "/gpu_default.json")
b = compiler.load(fixtures + "/gpu_native_matmul.json")
d = compiler.diff(a, b)
console = Console(width=200, record=True, color_system=None, file=open("/dev/null", "w"))
console.print(d)
texts = [open(fixtures + "/gpu_default.json").read(), open(fixtures + "/gpu_native_matmul.json").read()]
sweep = Sweep("block", "cuda", "local", [SweepRow(0, {{}}), SweepRow(1, {{"native_matmul": True}})], texts)
print(json.dumps({{
    "type": type(d).__module__ + "." + type(d).__name__,
    "summary": d.summary,
    "rich": console.export_text(),
    "html": d._repr_html_(),
    "json": d.to_json(),
    "sweep": sweep.diff(0, 1).to_json(),
    "imported": sorted(m for m in ("explorer", "widgets") if m in sys.modules),
}}))
"""


def test_diff_renders_and_serializes_with_compiler_alone():
    result = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    out = json.loads(result.stdout.splitlines()[-1])
    assert out["imported"] == []
    assert out["type"] == "compiler.model.diff.Diff"
    assert "native_matmul: default -> True" in out["summary"]
    # the rich table and the HTML come from compiler/render/diff.py, not the model's repr fallback
    assert "kernel a" in out["rich"] and "status" in out["rich"] and out["summary"][:40] in out["rich"]
    assert out["html"].startswith("<div><p><strong>") and "<th>kernel a</th>" in out["html"]
    data = out["json"]
    assert data["summary"] == out["summary"] and data["toggles"] == [{"name": "native_matmul", "a": None, "b": True}]
    statuses = {k["status"] for g in data["graphs"] for k in g["kernels"]}
    assert "changed" in statuses and {"a", "b", "timings", "outputs", "graphs"} <= set(data)
    assert data["outputs"]["compared"] is False  # loaded traces carry no outputs
    assert out["sweep"]["graphs"] == data["graphs"]  # Sweep.diff is the same diff of the same two traces
