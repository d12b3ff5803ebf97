"""A saved trace opens without building its graphs' stages: explorer.load reads the JSON and checks what
a file must pass (the header, loop-IR expressions), and the first view (the summary, the FX stage and
its outline) reads the JSON as the file holds it. Every part a view reads is what the built compilation
gives, and a stage that does not load says where when it is first read. On recorded traces."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys

import pytest

import explorer
from compiler.io.trace import stored_graph
from compiler.model.stages import GraphCapture
from compiler.render.core import html_summary
from tests.paths import FIXTURES, ROOT
from widgets import TraceParts

TRACES = ["gpu_training.json", "gpu_transformer.json", "gpu_max_autotune.json", "export_dynamic.json.gz",
          "trace_v1.json", "version_2.14.1.json.gz"]


def _unbuilt(c) -> bool:
    return all(g.pending is not None for g in c.graphs)


@pytest.mark.parametrize("name", TRACES)
def test_every_part_is_what_the_built_compilation_gives(name):
    lazy, built = explorer.load(FIXTURES / name), explorer.load(FIXTURES / name)
    for graph in built.graphs:
        graph.complete()
    lazy_parts, built_parts = TraceParts(lazy.trace_view()), TraceParts(built.trace_view())
    first = ["", *(f"{g.id}/{stage}" for g in built.graphs for stage in ("fx", "post_grad", "fx_outline"))]
    for key in first:  # the first view's parts, the lazy graphs still unbuilt
        assert (lazy_parts.encoded(key) if key else lazy_parts.summary()) == (
            built_parts.encoded(key) if key else built_parts.summary()), key
    assert repr(lazy) == repr(built) and html_summary(lazy) == html_summary(built)
    # a file of an older version has its FX stages made from the built objects (keys it lacks get defaults)
    assert _unbuilt(lazy) == (name != "trace_v1.json")
    keys = list(built_parts.keys())
    assert list(lazy_parts.keys()) == keys and len(keys) > 10
    assert all(lazy_parts.encoded(key) == built_parts.encoded(key) for key in keys)
    assert not _unbuilt(lazy) and lazy.to_json() == built.to_json()


STAGES = sorted(GraphCapture._lazy_fields)


def _read(path) -> dict:
    return json.loads(gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_text())


@pytest.mark.parametrize("name", [n for n in TRACES if n != "trace_v1.json"])
def test_a_stage_read_after_the_first_view_is_what_an_eager_load_builds(name):
    c, data = explorer.load(FIXTURES / name), _read(FIXTURES / name)
    parts = TraceParts(c.trace_view())
    parts.summary(), parts.encoded(f"{c.graphs[0].id}/fx_outline"), repr(c), html_summary(c)
    assert _unbuilt(c)
    for i, graph in enumerate(c.graphs):
        eager = stored_graph(data["graphs"][i])  # every stage of the graph's JSON built at once
        assert eager.pending is None and graph.pending is not None
        assert graph.counts() == eager.counts()  # counted in the JSON, unbuilt
        assert graph.pending is not None and graph.kernels == eager.kernels
        assert graph.pending is None and all(g.pending is not None for g in c.graphs[i + 1:])  # this graph only
        assert all(k.graph is graph for k in graph.kernels) and graph.compilation is c
        for stage in STAGES:
            assert getattr(graph, stage) == getattr(eager, stage), (name, i, stage)


def test_a_stage_that_does_not_load_says_where_when_first_read(tmp_path):
    data = json.loads((FIXTURES / "gpu_transformer.json").read_text())
    del data["graphs"][0]["kernels"][1]["language"]
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(data))
    c = explorer.load(path)
    assert c.graphs[0].counts()["kernels"] == len(data["graphs"][0]["kernels"])
    with pytest.raises(explorer.TraceFormatError, match=r"malformed trace: graphs\[0\]: KeyError: 'language'"):
        c.graphs[0].kernels
    with pytest.raises(explorer.TraceFormatError, match=r"graphs\[0\]"):  # and again, not half built
        c.graphs[0].fx


_FIRST_VIEW = """
import sys
import explorer, widgets
c = explorer.load(sys.argv[1])
parts = widgets.TraceParts(c.trace_view())
parts.summary(), parts.encoded(f"{c.graphs[0].id}/fx_outline"), repr(c)
print("sympy" in sys.modules, [g.pending is not None for g in c.graphs])
c.graphs[0].loop_ir[0].indexing
print("sympy" in sys.modules, [g.pending is not None for g in c.graphs])
"""


def test_opening_a_trace_and_its_first_view_import_no_sympy():
    out = subprocess.run([sys.executable, "-c", _FIRST_VIEW, str(FIXTURES / "gpu_training.json")], cwd=ROOT,
                         capture_output=True, text=True, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.split("\n")[:2] == ["False [True, True]", "True [False, True]"]
