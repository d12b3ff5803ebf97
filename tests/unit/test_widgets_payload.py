"""Python side of the widgets: payloads, the widget's synced state, the HTML export's escaping."""

from __future__ import annotations

import base64
import copy
import gzip
import html.parser
import json
import subprocess
import sys

import pytest

import widgets
from benchmarks.render import synthetic_trace
from widgets.payload import TraceError
from tests.paths import FIXTURES, ROOT


@pytest.fixture(scope="module")
def sample() -> dict:
    return json.loads((FIXTURES / "widget_sample.json").read_text())


def test_widgets_never_import_torch():
    code = "import sys, widgets, widgets.widget, widgets.html; w = widgets.ExplorerWidget; sys.exit('torch' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr or "widgets imported torch"


def test_parts_keep_what_views_read_and_drop_the_rest(sample):
    parts = widgets.TraceParts(sample)
    fx = parts.get("g0/fx")
    node = next(n for n in fx["nodes"] if n["name"] == "matmul")
    assert node["post_grad"] == ["mm"] and node["kernels"] == ["extern_kernels.mm"]
    assert "users" not in node and "stack" not in node
    kernels = parts.get("g0/kernels")
    assert kernels[1]["line_nodes"] == sample["graphs"][0]["kernels"][1]["line_nodes"]
    assert "source" not in kernels[1]  # heavy fields come with the kernel's own part
    assert parts.get(f"g0/kernel/{kernels[1]['id']}") == {"source": sample["graphs"][0]["kernels"][1]["source"]}
    assert parts.get("sources") == sample["sources"]
    assert "body" not in parts.get("g0/loop_ir")[0]
    assert parts.get("g0/loop_ir_bodies")[sample["graphs"][0]["loop_ir"][0]["name"]] == sample["graphs"][0]["loop_ir"][0]["body"]
    assert set(parts.keys()) >= {"sources", "g0/fx", "g1/autotune", f"g0/kernel/{kernels[1]['id']}"}
    assert all(json.loads(parts.encoded(key)) == parts.get(key) for key in parts.keys())
    assert "users" in sample["graphs"][0]["fx"]["nodes"][0]  # the trace itself is untouched


def test_summary_is_small_and_counts_every_stage(sample):
    summary = widgets.TraceParts(sample).summary()
    assert [g["kind"] for g in summary["graphs"]] == ["forward", "backward"]
    g0, raw = summary["graphs"][0], sample["graphs"][0]
    assert g0["counts"]["fx"] == len(raw["fx"]["nodes"]) and g0["counts"]["kernels"] == len(raw["kernels"])
    assert g0["counts"]["externs"] == sum(k["language"] == "extern" for k in raw["kernels"])
    assert summary["meta"] == sample["meta"] and summary["parts"] == ["sources"]
    assert len(json.dumps(summary)) < len(json.dumps(sample)) / 5


def test_parts_of_unknown_keys_and_missing_parts():
    trace = {"schema": "inductor-explorer/trace", "version": 1, "future_field": 1,
             "graphs": [{"id": "g0", "kind": "inference", "dynamo_graph": 0, "novel": {"x": 1}}]}
    parts = widgets.TraceParts(trace)
    summary = parts.summary()
    assert summary["parts"] == ["future_field"] and summary["graphs"][0]["parts"] == ["novel"]
    assert parts.get("future_field") == 1 and parts.get("g0/novel") == {"x": 1}
    assert parts.get("g0/fx") == {"code": "", "nodes": []} and summary["meta"] == {}
    with pytest.raises(widgets.parts.PartError, match="no part 'g0/nothing'"):
        parts.get("g0/nothing")
    with pytest.raises(widgets.parts.PartError, match="no kernel 'k9'"):
        parts.get("g0/kernel/k9")


def test_parts_refuse_newer_versions_and_non_traces(sample):
    newer = dict(sample, version=widgets.SCHEMA_VERSION + 1)
    with pytest.raises(TraceError, match=f"schema version {widgets.SCHEMA_VERSION + 1}, newer than this inductor-explorer reads"):
        widgets.TraceParts(newer)
    with pytest.raises(TraceError, match="schema"):
        widgets.TraceParts(dict(sample, schema="something/else"))
    with pytest.raises(TraceError, match="not list"):
        widgets.TraceParts([1, 2])


def test_parts_accept_objects_with_to_json(sample):
    class FakeCompilation:
        def to_json(self):
            return sample

    assert widgets.TraceParts(FakeCompilation()).summary() == widgets.TraceParts(sample).summary()


class _Unread(dict):
    """A record the summary may count but must not read: reading each one would walk the whole graph."""

    def _refuse(self, *args, **kwargs):
        raise AssertionError("the summary read a node record: it must only count them")

    __getitem__ = get = items = keys = values = __iter__ = __contains__ = _refuse


def test_summary_of_a_20000_node_graph_counts_its_nodes_without_reading_one():
    """The first message a view gets is the summary: its cost must not grow with what a graph holds."""
    trace = synthetic_trace(530)
    graph = trace["graphs"][0]
    expected = {"fx": len(graph["fx"]["nodes"]), "post_grad": len(graph["post_grad"]["nodes"]),
                "loop_ir": len(graph["loop_ir"])}
    assert expected["post_grad"] >= 20000
    for stage in ("fx", "post_grad"):
        graph[stage]["nodes"] = [_Unread(node) for node in graph[stage]["nodes"]]
    graph["loop_ir"] = [_Unread(node) for node in graph["loop_ir"]]
    summary = widgets.TraceParts(trace).summary()
    assert {k: summary["graphs"][0]["counts"][k] for k in expected} == expected
    assert len(json.dumps(summary)) < 10_000


def test_widget_state_is_small_and_validated(sample):
    w = widgets.ExplorerWidget(sample)
    assert (w.graph, w.stage, w.selection) == ("g0", "fx", {})
    w.select("fx", "matmul")
    assert w.selection == {"kind": "fx", "id": "matmul"}
    w.select("kernel_line", "cpp_fused__softmax_add_relu_sum_0", line=20)
    assert w.selection == {"kind": "kernel_line", "id": "cpp_fused__softmax_add_relu_sum_0", "line": 20}
    with pytest.raises(ValueError, match="needs line="):
        w.select("wrapper_line", "x")
    with pytest.raises(Exception, match="Selection kind must be one of"):
        w.selection = {"kind": "bogus", "id": "x"}
    with pytest.raises(Exception, match="No graph 'g9'"):
        w.graph = "g9"
    with pytest.raises(Exception):
        w.stage = "assembly"
    w.stage, w.graph = "kernels", "g1"
    w.clear_selection()
    assert w.selection == {}
    assert repr(w) == "ExplorerWidget(function='model.f', graphs=2, graph='g1', stage='kernels', selection=None)"
    with pytest.raises(ValueError, match="graphs are"):
        widgets.ExplorerWidget(sample, graph="g7")


def test_widget_syncs_a_summary_and_serves_parts_on_request(sample):
    w = widgets.ExplorerWidget(sample)
    synced = set(w.keys)
    assert {"summary", "revision", "graph", "stage", "selection", "_esm", "_css"} <= synced
    assert "payload" not in synced
    assert w.get_state()["summary"]["graphs"][0]["id"] == "g0"
    assert widgets.widget.BUNDLE_JS.read_text() == w._esm
    sent = []
    w.send = lambda content, buffers=None: sent.append((content, buffers))
    w._on_message(w, {"type": "part", "key": "g0/fx", "id": 3, "revision": 0}, [])
    (reply, buffers), = sent
    assert reply == {"type": "part", "key": "g0/fx", "id": 3, "revision": 0}
    assert json.loads(bytes(buffers[0])) == widgets.TraceParts(sample).get("g0/fx")
    w._on_message(w, {"type": "part", "key": "g9/fx", "id": 4, "revision": 0}, [])
    assert "no part 'g9/fx'" in sent[-1][0]["error"] and sent[-1][1] is None
    w.show_payload(sample)
    assert w.revision == 1
    w._on_message(w, {"type": "part", "key": "g0/fx", "id": 5, "revision": 0}, [])
    assert sent[-1][0]["error"] == "the widget shows another compilation now"


def test_showing_a_jit_compilation_leaves_the_export_stage(sample):
    """The side panel follows the session: an AOT compilation shown on its Export stage, then a JIT one
    (no Export stage) is shown on its FX graph; an AOT one keeps the stage."""
    aot = {**sample, "export": {"inputs": [], "outputs": [], "range_constraints": {}, "graph": ""}}
    w = widgets.ExplorerWidget(aot, stage="export")
    w.show_payload(aot)
    assert w.stage == "export"
    w.show_payload(sample)
    assert w.stage == "fx"


def _script_blocks(document: str) -> list[tuple[dict, str]]:
    """(attributes, text) of every <script> as an HTML parser sees them."""

    class Collector(html.parser.HTMLParser):
        def __init__(self):
            super().__init__()
            self.blocks, self._attrs, self._text = [], None, []

        def handle_starttag(self, tag, attrs):
            if tag == "script":
                self._attrs, self._text = dict(attrs), []

        def handle_data(self, data):
            if self._attrs is not None:
                self._text.append(data)

        def handle_endtag(self, tag):
            if tag == "script" and self._attrs is not None:
                self.blocks.append((self._attrs, "".join(self._text)))
                self._attrs = None

    parser = Collector()
    parser.feed(document)
    return parser.blocks


def evil_trace(sample: dict) -> dict:
    """The sample with markup in kernel names, node names, sources and file paths."""
    evil = copy.deepcopy(sample)
    mapping = {
        "cpp_fused__softmax_add_relu_sum_0": '<img src=x onerror="window.__pwned=1">cpp_fused_0',
        "relu": "relu<script>window.__pwned=2</script>",
        "/home/user/project/model.py": "/tmp/<img src=x onerror=window.__pwned=3>/model.py",
        "op1_op2_op3_op4": "<svg onload=window.__pwned=4>op1_op2_op3_op4",
        "model.f": "</script><script>window.__pwned=5</script>",
    }
    evil = _replace_strings(evil, mapping)
    kernel = evil["graphs"][0]["kernels"][1]
    kernel["source"] += '// </script><img src=x onerror="window.__pwned=6">\n'
    evil["sources"][mapping["/home/user/project/model.py"]]["26"] = '    z = "<img src=x onerror=window.__pwned=7>"'
    evil["meta"]["toggles"] = {"<b onmouseover=window.__pwned=8>x</b>": "</style><script>window.__pwned=9</script>"}
    return evil


def _replace_strings(obj, mapping):
    if isinstance(obj, str):
        return mapping.get(obj, obj)
    if isinstance(obj, list):
        return [_replace_strings(x, mapping) for x in obj]
    if isinstance(obj, dict):
        return {mapping.get(k, k): _replace_strings(v, mapping) for k, v in obj.items()}
    return obj


def test_html_export_embeds_payload_inertly(sample, tmp_path):
    evil = evil_trace(sample)
    document = widgets.render_html(evil)
    blocks = _script_blocks(document)
    # Exactly the JSON block and the bundle: markup in the trace opened no element of its own.
    assert [a.get("type") for a, _ in blocks] == ["application/json", "application/json", "module"]
    summary, parts = blocks[0][1], blocks[1][1]
    for embedded in (summary, parts):
        assert "<" not in embedded and ">" not in embedded and "&" not in embedded
    assert json.loads(summary) == widgets.TraceParts(evil).summary()
    decoded = {k: json.loads(gzip.decompress(base64.b64decode(v))) for k, v in json.loads(parts).items()}
    assert decoded == {k: widgets.TraceParts(evil).get(k) for k in widgets.TraceParts(evil).keys()}
    assert "</script><script>window.__pwned=5" not in document.split("<title>", 1)[1].split("</title>", 1)[0]
    assert document.count("<script") == 3
    assert "</script" not in blocks[2][1]
    path = widgets.write_html(evil, tmp_path / "sub" / "x.html")
    assert path.read_text() == document


def test_embed_json_round_trips_every_character():
    data = {"s": "</script><!-- & \u2028 \u2029 é ✓ \\ \" '", "n": [1, 2.5, None, True]}
    text = widgets.embed_json(data)
    assert not set("<>&\u2028\u2029") & set(text)
    assert json.loads(text) == data


class _CountedList(list):
    """A list that counts how often it is walked."""

    walks = 0

    def __iter__(self):
        _CountedList.walks += 1
        return super().__iter__()


@pytest.mark.parametrize("layers", [20, 80])
def test_a_static_export_walks_the_kernel_list_a_fixed_number_of_times(tmp_path, layers):
    """Exporting embeds every kernel's part: each must be found without walking all kernels again, or
    the export grows with the square of the model (100,000 nodes took minutes)."""
    from benchmarks.render import synthetic_trace

    trace = synthetic_trace(layers)
    graph = trace["graphs"][0]
    graph["kernels"] = _CountedList(graph["kernels"])
    _CountedList.walks = 0
    widgets.write_html(trace, tmp_path / "export.html")
    assert len(graph["kernels"]) >= 5 * layers and _CountedList.walks <= 6


def test_a_graph_outline_holds_what_a_first_drawing_reads():
    """A big graph is drawn first from its outline: the fields a drawing reads, as columns, a fraction of
    the full part (which the view loads right behind it)."""
    from widgets.parts import CODED_FIELDS, GRAPH_STAGES, OUTLINE_FIELDS

    trace = synthetic_trace(60)
    parts = widgets.TraceParts(trace)
    keys = set(parts.keys())
    assert "g0/fx_outline" in keys and "g0/post_grad_outline" not in keys  # an export embeds the first stage's
    for stage in GRAPH_STAGES:
        full = parts.get(f"g0/{stage}")
        outline = json.loads(parts.encoded(f"g0/{stage}_outline"))
        assert outline["count"] == len(full["nodes"]) > 2000
        assert set(outline["columns"]) == set(OUTLINE_FIELDS)
        assert set(outline["tables"]) == {"op", "target", "shape", "dtype", "module"}
        assert decoded(outline) == [{k: n.get(k) for k in OUTLINE_FIELDS} for n in full["nodes"]]
        assert len(parts.encoded(f"g0/{stage}_outline")) * 4 < len(parts.encoded(f"g0/{stage}"))
    assert widgets.TraceParts({"graphs": [{"id": "g0"}]}).get("g0/fx_outline") == {
        "count": 0, "columns": {field: [] for field in OUTLINE_FIELDS}, "tables": {field: [] for field in CODED_FIELDS}}


def decoded(outline: dict) -> list[dict]:
    """Node records from an outline, as app.js outlineNodes reads it."""
    out = [{} for _ in range(outline["count"])]
    for field, column in outline["columns"].items():
        table = outline["tables"].get(field)
        for node, value in zip(out, column):
            node[field] = table[value] if table is not None else value
    return out


def test_an_outline_codes_only_values_it_gives_back_exactly():
    """1, 1.0 and True are one dict key: a column holding anything but strings, None and lists of ints
    and strings stays as it is."""
    from widgets.parts import OUTLINE_FIELDS, outline

    nodes = [{"name": "a", "op": "call_function", "target": 1, "shape": [2, "s0"], "dtype": None, "module": "m.n",
              "inputs": []},
             {"name": "b", "op": "call_function", "target": True, "shape": [2, "s0"], "dtype": "torch.float16",
              "inputs": ["a", "zz"]},
             {"name": "c", "op": "output", "target": 1.0, "shape": [[1], 2], "dtype": "torch.float16", "module": "m.n",
              "inputs": ["b"]}]
    out = outline({"nodes": nodes})
    assert set(out["tables"]) == {"op", "dtype", "module"}
    assert out["tables"]["op"] == ["call_function", "output"] and out["columns"]["op"] == [0, 0, 1]
    assert out["columns"]["target"] == [1, True, 1.0] and out["columns"]["shape"] == [[2, "s0"], [2, "s0"], [[1], 2]]
    assert json.loads(json.dumps(decoded(out))) == [{k: n.get(k) for k in OUTLINE_FIELDS} for n in nodes]


class _LazyGraph(dict):
    """A graph mapping that can be watched (like compiler.io.trace.LazyGraph), shown by several widgets."""


def test_a_graph_outline_is_encoded_once(monkeypatch):
    import gc

    import widgets.parts as parts_module

    made = []
    real = parts_module.outline
    monkeypatch.setattr(parts_module, "outline", lambda part: made.append(1) or real(part))
    trace = synthetic_trace(3)
    parts = widgets.TraceParts(trace)
    first = parts.encoded("g0/fx_outline")
    assert parts.encoded("g0/fx_outline") is first and len(made) == 1
    # A graph object that outlives its widget keeps its outline for the next one, and drops it with the graph.
    graph = _LazyGraph(trace["graphs"][0])
    for _ in range(3):
        again = widgets.TraceParts({**trace, "graphs": [graph]})
        assert json.loads(again.encoded("g0/post_grad_outline"))["count"] == len(graph["post_grad"]["nodes"])
    assert len(made) == 2
    kept = len(parts_module._OUTLINES)
    del graph, again
    gc.collect()
    assert len(parts_module._OUTLINES) == kept - 1


def test_the_widget_serves_outlines(sample):
    w = widgets.ExplorerWidget(sample)
    sent = []
    w.send = lambda content, buffers=None: sent.append((content, buffers))
    w._on_message(w, {"type": "part", "key": "g1/fx_outline", "id": 7, "revision": 0}, [])
    (reply, buffers), = sent
    assert reply == {"type": "part", "key": "g1/fx_outline", "id": 7, "revision": 0}
    assert json.loads(bytes(buffers[0])) == widgets.parts.outline(sample["graphs"][1]["fx"])


def test_making_a_part_leaves_the_collector_as_it_was():
    import gc

    parts = widgets.TraceParts(synthetic_trace(2))
    assert gc.isenabled()
    parts.encoded("g0/fx")
    parts.get("g0/kernels")
    assert gc.isenabled()
    gc.disable()
    try:
        parts.encoded("g0/post_grad_outline")
        assert not gc.isenabled()
    finally:
        gc.enable()
