"""A diff across torch releases, from two recorded traces (tests/record_version_traces.py: one small block
compiled, profiled and checked on CPU under torch 2.13.0 and 2.14.1), with no compile.

The block's forward has three lines: ``h = torch.relu(self.fc1(x))`` (an extern addmm and a relu kernel),
``y = self.norm(self.fc2(h) + x)`` (an extern addmm, then the residual add and the layer norm) and the
scaled softmax, which both releases fuse with the layer norm into one C++ kernel. Each kernel of one side
must pair with the kernel computing the same user lines on the other, also when the other release names
kernels, FX nodes and post-grad nodes its own way or cuts the program into more graphs (here simulated
by renaming the 2.14.1 trace's ids and adding a graph to it).
"""

from __future__ import annotations

import copy
import gzip
import json
import os
import subprocess
import sys
from typing import Any

import compiler
from tests.paths import FIXTURES, ROOT

A_PATH, B_PATH = FIXTURES / "version_2.13.0.json.gz", FIXTURES / "version_2.14.1.json.gz"
PROGRAM = "tests/record_version_traces.py"  # where the block's lines live (paths neutralized when recorded)


def _trace(path: Any) -> dict[str, Any]:
    return json.loads(gzip.decompress(path.read_bytes()))


def _line(c: Any, text: str) -> int:
    """The line of the block's forward holding ``text``, from the source lines the trace recorded."""
    (line,) = [int(n) for n, code in c.sources[PROGRAM].items() if text in code]
    return line


def _program_lines(kernel: Any) -> set[int]:
    return {line for path, line in kernel.user_lines if path == PROGRAM}


def _kernel(c: Any, graph: str, kernel_id: str) -> Any:
    (found,) = [k for g in c.graphs if g.id == graph for k in g.kernels if k.id == kernel_id]
    return found


def _renamed(value: Any, names: dict[str, str]) -> Any:
    """``value`` with every string (and dict key) equal to a key of ``names`` replaced by its value."""
    if isinstance(value, str):
        return names.get(value, value)
    if isinstance(value, list):
        return [_renamed(v, names) for v in value]
    if isinstance(value, dict):
        return {names.get(k, k): _renamed(v, names) for k, v in value.items()}
    return value


def _other_names(trace: dict[str, Any]) -> dict[str, str]:
    """Every generated kernel's id and name, extern call's id (``extern_kernels.addmm:1``: the function it
    calls stays), FX node and post-grad node (placeholders and outputs aside) -> a new name: what a
    release that names everything its own way would record."""
    names = {}
    for g in trace["graphs"]:
        for stage in ("fx", "post_grad"):
            names.update({n["name"]: f"{n['name']}_r" for n in g[stage]["nodes"] if n["op"].startswith("call_")})
        for k in g["kernels"]:
            extern = k["language"] == "extern"
            names.update({k["id"]: f"{k['id']}0" if extern else f"{k['id']}_r"})
            names.update({} if extern else {k["name"]: f"{k['name']}_r"})
    return names


def _library_lines_moved(value: Any) -> Any:
    """``value`` with every frame in torch's own files 7 lines further down, as a release's edits move them."""
    if isinstance(value, list) and len(value) >= 2 and str(value[0]).startswith("<site-packages>/"):
        return [value[0], value[1] + 7, *value[2:]]
    if isinstance(value, list):
        return [_library_lines_moved(v) for v in value]
    if isinstance(value, dict):
        return {k: _library_lines_moved(v) for k, v in value.items()}
    return value


def _with_other_names() -> Any:
    """The 2.14.1 trace as a release would record it that names kernels and nodes its own way and whose own
    source lines moved."""
    trace = _trace(B_PATH)
    names = _other_names(trace)
    for key in ("graphs", "profiles", "numerics"):
        trace[key] = _renamed(trace[key], names)
    trace["graphs"] = _library_lines_moved(trace["graphs"])
    return compiler.from_json(trace)


def _with_a_graph_before() -> Any:
    """The 2.14.1 trace cut into two graphs: a new g0 tracing other lines, then the block as g1."""
    trace = _trace(B_PATH)
    block = _renamed(trace["graphs"][0], {"g0": "g1"})
    block["index"] = 1
    other = _renamed(copy.deepcopy(trace["graphs"][0]), {PROGRAM: "tests/other_program.py", **_other_names(trace)})
    trace["graphs"] = [other, block]
    for key in ("profiles", "numerics"):
        trace[key] = _renamed(trace[key], {"g0": "g1"})
    return compiler.from_json(trace)


def test_each_release_loads_the_others_trace():
    a, b = compiler.load(A_PATH), compiler.load(B_PATH)
    assert a.torch.split("+")[0] == "2.13.0" and b.torch.split("+")[0] == "2.14.1"
    for c in (a, b):
        (graph,) = c.graphs
        assert [k.language for k in graph.kernels] == ["extern", "cpp", "extern", "cpp"]
        assert len(c.profiles) == 1 and len(c.numerics) == 1
        assert set(c.profiles[0].kernels) == set(c.numerics[0].kernels) == {k.id for k in graph.kernels}


def test_kernels_pair_by_the_user_lines_they_compute():
    a, b = compiler.load(A_PATH), compiler.load(B_PATH)
    relu, norm, softmax = _line(a, "torch.relu("), _line(a, "self.norm("), _line(a, "torch.softmax(")
    assert (relu, norm, softmax) == (_line(b, "torch.relu("), _line(b, "self.norm("), _line(b, "torch.softmax("))
    d = compiler.diff(a, b)
    assert d.torch == (a.torch, b.torch)
    assert (d.counts()["added"], d.counts()["removed"], len(d.kernels)) == (0, 0, 4)
    (g,) = d.graphs
    assert (g.graph_a, g.graph_b, g.ids) == ("g0", "g0", "g0")
    pairs = [(k.a_language, _program_lines(_kernel(a, "g0", k.a)), _program_lines(_kernel(b, "g0", k.b)))
             for k in g.kernels]
    assert pairs == [("extern", {relu}, {relu}), ("cpp", {relu}, {relu}), ("extern", {norm}, {norm}),
                     ("cpp", {norm, softmax}, {norm, softmax})]
    assert [k.lines for k in g.kernels] == [[(PROGRAM, relu)], [(PROGRAM, relu)], [(PROGRAM, norm)],
                                            [(PROGRAM, norm), (PROGRAM, softmax)]]  # torch's own lines aside
    assert sorted(k.a for k in g.kernels) == sorted(k.id for k in a.graphs[0].kernels)
    assert sorted(k.b for k in g.kernels) == sorted(k.id for k in b.graphs[0].kernels)


def test_the_diff_names_both_releases_and_each_pairs_time_and_error():
    a, b = compiler.load(A_PATH), compiler.load(B_PATH)
    d = compiler.diff(a, b)
    assert d.summary.startswith(f"torch {a.torch} -> {b.torch}; same toggles; kernels ")
    assert d.run_ms == (a.profiles[0].total_ms, b.profiles[0].total_ms)
    assert f"run {a.profiles[0].total_ms:.3g} ms -> {b.profiles[0].total_ms:.3g} ms" in d.summary
    for k in d.kernels:
        assert (k.ms_a, k.ms_b) == (a.profiles[0].kernel_ms[k.a], b.profiles[0].kernel_ms[k.b])
        assert (k.error_a, k.error_b) == (a.numerics[0].kernels[k.a].max_rel, b.numerics[0].kernels[k.b].max_rel)
    back = compiler.diff(b, a)
    assert back.summary.startswith(f"torch {b.torch} -> {a.torch}; ")
    data = d.to_json()
    assert data["torch"] == [a.torch, b.torch] and data["run_ms"] == list(d.run_ms)
    assert {(k["ms_a"], k["ms_b"]) for k in data["graphs"][0]["kernels"]} == {(k.ms_a, k.ms_b) for k in d.kernels}
    assert f"Block[defaults] (torch {a.torch}) &rarr; Block[defaults] (torch {b.torch})" in d._repr_html_()


def test_pairing_ignores_the_names_a_release_gives_kernels_and_nodes():
    a, b = compiler.load(A_PATH), _with_other_names()
    assert not {k.id for k in a.graphs[0].kernels} & {k.id for k in b.graphs[0].kernels}
    assert not {n.name for n in a.graphs[0].post_grad.nodes if n.op == "call_function"} & \
        {n.name for n in b.graphs[0].post_grad.nodes}
    d = compiler.diff(a, b)
    (g,) = d.graphs
    renamed = [f"{k.id}0" if k.language == "extern" else f"{k.id}_r" for k in a.graphs[0].kernels]
    assert [(k.status, k.a, k.b) for k in g.kernels] == [("same", k.id, r) for k, r in zip(a.graphs[0].kernels, renamed)]
    assert not g.fused_only_a and not g.fused_only_b  # fused groups compared by the FX nodes they compute
    assert all(k.ms_b is not None and k.error_b is not None for k in g.kernels)  # b's reports under b's names


def test_a_release_that_cuts_more_graphs_pairs_them_by_their_lines():
    a, b = compiler.load(A_PATH), _with_a_graph_before()
    assert [g.id for g in b.graphs] == ["g0", "g1"]
    d = compiler.diff(a, b)
    block, other = d.graphs
    assert (block.graph_a, block.graph_b, block.ids) == ("g0", "g1", "g0 -> g1")
    assert [(k.status, k.a, k.b) for k in block.kernels] == [("same", k.id, k.id) for k in a.graphs[0].kernels]
    assert [k.ms_b for k in block.kernels] == [b.profiles[0].kernel_ms[k.b] for k in block.kernels]  # under g1
    assert (other.graph_a, other.graph_b) == (None, "g0")
    assert {k.status for k in other.kernels} == {"added"} and len(other.kernels) == 4


# `python -m explorer diff A B` as test_cli_startup.py runs a command: a fresh interpreter that reports
# which torch modules it imported
_RUN = """
import json, runpy, sys
sys.argv = ["explorer", *{argv!r}]
try:
    runpy.run_module("explorer", run_name="__main__", alter_sys=True)
except SystemExit as done:
    code = done.code
else:
    code = 0
print(json.dumps({{"code": code, "torch": sorted(m for m in sys.modules if m.split(".")[0] == "torch")}}))
"""


def test_the_diff_command_prints_the_release_pair_and_imports_no_torch():
    a, b = compiler.load(A_PATH), compiler.load(B_PATH)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "400"}  # the summary on one line
    done = subprocess.run([sys.executable, "-c", _RUN.format(argv=["diff", str(A_PATH), str(B_PATH)])], cwd=ROOT,
                          capture_output=True, text=True, timeout=300, env=env)
    assert done.stderr == ""
    *printed, last = done.stdout.strip().splitlines()
    assert json.loads(last) == {"code": 0, "torch": []}
    assert printed[0].startswith(f"torch {a.torch} -> {b.torch}; same toggles; kernels ")
    assert f"Block[defaults] (torch {a.torch}) -> Block[defaults] (torch {b.torch})" in printed[1]
    assert f"compile {a.timings['total']:.3g} s -> {b.timings['total']:.3g} s" in done.stdout
    rows = [row for row in printed[2:] if "│ g0" in row]
    assert len(rows) == 4
    for row, k in zip(rows, compiler.diff(a, b).kernels):  # each pair on its row, with the user's lines it computes
        lines = ", ".join(str(line) for _, line in k.lines)
        assert f"{k.a} {k.a_language}" in row and f"{k.b} {k.b_language}" in row
        assert f"record_version_traces.py:{lines}" in row
