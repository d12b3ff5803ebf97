"""CUDA graphs in the static HTML export, in headless Chromium: the post-grad graph coloured by partition,
the banner naming each cause with its node, kernels and line, the Kernels stage's column, and the side
panel's mark on the line whose work no CUDA graph holds.

The trace is a real GPU compilation (tests/fixtures/gpu_default.json) given a ``cudagraphs`` record made
from its own kernels, nodes and lines (one partition captured, one left out for a CPU op); every expected
value is read from that record, never typed in.
"""

from __future__ import annotations

import json

import pytest

from tests.browser.test_widgets_static_browser import click, open_export
from tests.paths import FIXTURES

pytestmark = pytest.mark.browser


def _with_partitions() -> dict:
    trace = json.loads((FIXTURES / "gpu_default.json").read_text())
    graph = trace["graphs"][0]
    fused = {f["name"]: f for f in graph["fused"]}
    kernels = {k["id"]: k for k in graph["kernels"]}
    captured, left_out = fused["op1"], fused["op0"]  # the gelu kernel in a CUDA graph, the mm left out
    kernel = kernels[left_out["kernels"][0]]
    graph["cudagraphs"] = {
        "device": "cuda:0", "state": "partial",
        "partitions": [
            {"index": 0, "captured": False, "replays": False, "function": None, "nodes": [left_out["name"]],
             "kernels": list(left_out["kernels"]), "launches": list(left_out["kernels"]),
             "post_grad_nodes": list(left_out["origins"]),
             "reasons": [{"node": left_out["name"], "reason": "cpu ops", "op": "aten.mm.default",
                          "post_grad": left_out["origins"][0], "kernels": list(left_out["kernels"]),
                          "line": kernel["user_lines"][0]}]},
            {"index": 1, "captured": True, "replays": True, "function": "partition_0", "nodes": [captured["name"]],
             "kernels": list(captured["kernels"]), "launches": list(captured["kernels"]),
             "post_grad_nodes": list(captured["origins"]), "reasons": []},
        ],
        "skip": None, "events": [], "user_inputs": {}, "notes": [],
    }
    return trace


@pytest.fixture(scope="module")
def trace():
    return _with_partitions()


def test_post_grad_nodes_are_coloured_by_partition_and_the_banner_names_the_cause(browser, tmp_path, trace):
    record = trace["graphs"][0]["cudagraphs"]
    page = open_export(browser, trace, tmp_path)
    click(page, ".ie-stage-btn[data-stage=post_grad]")
    page.wait_for_selector('.ie-main [data-stage="post_grad"] g.ie-node', timeout=15_000)
    banner = page.locator('.ie-main [data-stage="post_grad"] .ie-cg-banner')
    assert banner.get_attribute("data-state") == "partial"
    assert "1 of 2 partitions" in banner.locator("strong").inner_text()
    cause = banner.locator(".ie-cg-cause[data-cause=partition]")
    reason = record["partitions"][0]["reasons"][0]
    assert cause.get_attribute("data-partition") == "0"
    assert cause.locator(".ie-chip-post_grad").get_attribute("data-id") == reason["post_grad"]
    assert cause.locator(".ie-chip-kernel").get_attribute("data-id") == reason["kernels"][0]
    assert page.locator(".ie-main .ie-colour-by").input_value() == "CUDA graph"  # the only colouring this trace has

    heats = dict(page.locator('.ie-main [data-stage="post_grad"] g.ie-node.ie-heat').evaluate_all(
        "els => els.map(g => [g.dataset.name, g.dataset.heat])"))
    expected = {name: f"partition {p['index']}: " + ("in a CUDA graph (partition_0)" if p["replays"] else
                                                      "not in a CUDA graph (cpu ops)")
                for p in record["partitions"] for name in p["post_grad_nodes"]}
    assert heats == expected  # every computing node, and nothing else (placeholders, output)

    # the cause's line chip selects your line, marked as the one no CUDA graph holds
    file, line = reason["line"]
    click(page, ".ie-main .ie-cg-cause[data-cause=partition] .ie-chip-user_line")
    side = page.locator(f".ie-side .ie-user-line[data-file='{file}'][data-line='{line}']")
    assert side.get_attribute("data-cudagraph") == "true"
    assert "cpu ops" in side.locator(".ie-cg-mark").get_attribute("title")
    assert page.errors == []


def test_kernels_say_whether_each_replays_from_a_cuda_graph(browser, tmp_path, trace):
    record = trace["graphs"][0]["cudagraphs"]
    page = open_export(browser, trace, tmp_path)
    click(page, ".ie-stage-btn[data-stage=kernels]")
    page.wait_for_selector(".ie-kernels-stage .ie-kitem", timeout=15_000)
    assert page.locator(".ie-khead[data-col=cudagraph]").count() == 1
    cells = dict(page.locator(".ie-kernels-stage .ie-kitem").evaluate_all(
        "rows => rows.map(r => [r.dataset.id, r.querySelector('.ie-kcol-cudagraph').dataset.captured])"))
    assert cells == {k: str(p["replays"]).lower() for p in record["partitions"] for k in p["kernels"]}
    left_out = record["partitions"][0]["kernels"][0]
    cell = page.locator(f".ie-kernels-stage .ie-kitem[data-id='{left_out}'] .ie-kcol-cudagraph")
    assert cell.inner_text() == "✗ cpu ops" and "not in a CUDA graph" in cell.get_attribute("title")
    assert page.locator(".ie-kernels-stage .ie-cg-banner").get_attribute("data-state") == "partial"
    assert page.errors == []


def test_a_trace_without_cuda_graphs_shows_none_of_it(browser, tmp_path):
    trace = json.loads((FIXTURES / "gpu_default.json").read_text())
    page = open_export(browser, trace, tmp_path)
    click(page, ".ie-stage-btn[data-stage=kernels]")
    page.wait_for_selector(".ie-kernels-stage .ie-kitem", timeout=15_000)
    assert page.locator(".ie-khead[data-col=cudagraph]").count() == 0
    assert page.locator(".ie-cg-banner").count() == 0
    assert page.errors == []


def test_a_recorded_skip_names_its_node_kernels_and_line(browser, tmp_path):
    """The mutated-input trace recorded on a GPU (tests/record_cudagraph_fixtures.py)."""
    trace = json.loads((FIXTURES / "gpu_cudagraphs_mutation.json").read_text())
    skip = trace["graphs"][0]["cudagraphs"]["skip"]
    page = open_export(browser, trace, tmp_path)
    click(page, ".ie-stage-btn[data-stage=kernels]")
    page.wait_for_selector(".ie-kernels-stage .ie-cg-banner", timeout=15_000)
    banner = page.locator(".ie-kernels-stage .ie-cg-banner")
    assert banner.get_attribute("data-state") == "skipped"
    cause = banner.locator(".ie-cg-cause[data-cause=skip]")
    assert cause.locator(".ie-cg-skip").inner_text() == f"skipped: {skip['kind']}"
    assert cause.locator(".ie-chip-post_grad").get_attribute("data-id") == skip["node"]
    assert [cause.locator(".ie-chip-kernel").nth(i).get_attribute("data-id")
            for i in range(cause.locator(".ie-chip-kernel").count())] == skip["kernels"]
    file, line = skip["line"]
    click(page, ".ie-kernels-stage .ie-cg-cause[data-cause=skip] .ie-chip-user_line")
    side = page.locator(f".ie-side .ie-user-line[data-file='{file}'][data-line='{line}']")
    assert side.get_attribute("data-cudagraph") == "true"
    assert page.errors == []


# ------------------------------------------------------------------------------- the live watch view

_WATCH_PAGE = """<!DOCTYPE html><html><head><meta charset="utf-8"><link rel="stylesheet" href="explorer.css"></head>
<body><div id="w"></div><script type="module">
import widget from "./explorer.js";
const traits = {...JSON.parse(document.getElementById("payload").textContent), selected: ""};
const handlers = {};
const model = {  // what anywidget hands a render: traits read and set, changes listened to
  get: (k) => traits[k], set: (k, v) => { traits[k] = v; }, save_changes() {}, send() {},
  on: (e, f) => { (handlers[e] ||= []).push(f); }, off: (e, f) => { handlers[e] = (handlers[e] || []).filter((g) => g !== f); },
};
window.showPayload = (payload) => {  // WatchWidget.show: every trait at once
  for (const [k, v] of Object.entries(payload)) { traits[k] = v; (handlers[`change:${k}`] || []).forEach((f) => f()); }
};
widget.render({ model, el: document.getElementById("w") });
</script><script type="application/json" id="payload">PAYLOAD</script></body></html>"""


def _watched_under_cuda_graphs():
    """A watch report with the CUDA graph tree's events of a frame recompiled at step 5 (what
    tests/gpu/test_gpu_cudagraphs.py's watch sees on a GPU), read into the view's payload."""
    from compiler.io.watch import watch_payload
    from compiler.model.cudagraphs import EventKind
    from compiler.model.watch import CompileEvent, FrameStats, Step, WatchReport
    from compiler.model.watch_cudagraphs import CudaGraphStepEvent

    events = [CudaGraphStepEvent(0, "0/0", EventKind.WARMUP, "call", "inference"),
              CudaGraphStepEvent(1, "0/0", EventKind.RECORD, "call", "inference")]
    events += [CudaGraphStepEvent(step, "0/0", EventKind.REPLAY, "call", "inference") for step in (2, 3, 4)]
    events += [CudaGraphStepEvent(5, "0/1", EventKind.WARMUP, "call", "inference"),
               CudaGraphStepEvent(6, "0/1", EventKind.RERECORD, "call", "inference", 1, "static input data pointer changed"),
               CudaGraphStepEvent(7, "0/1", EventKind.REPLAY, "call", "inference", 2)]
    frame = FrameStats("0", "step_fn", "train.py", 3, ["0/0", "0/1"], calls=9, recompiles=1,
                       cudagraph_replays=5, cudagraph_skips=0)
    return watch_payload(WatchReport(
        steps=[Step(i, 0.001, {"0/0" if i < 5 else "0/1": 1}) for i in range(9)],
        compiles=[CompileEvent("0/0", "step_fn", step=0), CompileEvent("0/1", "step_fn", step=5, reasons=["0/0: x"])],
        frames=[frame], cudagraph_events=events))


def _watch_page(browser, payload):
    from widgets._bundle import BUNDLE_CSS, BUNDLE_JS
    from widgets.html import embed_json

    files = {"explorer.js": (BUNDLE_JS.read_bytes(), "text/javascript"),
             "explorer.css": (BUNDLE_CSS.read_bytes(), "text/css"),
             "watch.html": (_WATCH_PAGE.replace("PAYLOAD", embed_json(payload)).encode(), "text/html")}
    page = browser.new_page(viewport={"width": 1300, "height": 900})
    page.errors = []
    page.on("pageerror", lambda e: page.errors.append(str(e)))

    def serve(route):  # the page and the bundle from memory: a module script does not load from file://
        body, kind = files[route.request.url.rsplit("/", 1)[1]]
        route.fulfill(body=body, content_type=kind)

    page.route("http://watch.test/**", serve)
    page.goto("http://watch.test/watch.html")
    page.wait_for_selector(".ie-watchview .ie-watch-frames", timeout=15_000)
    return page


def test_the_watch_view_lists_the_trees_events_and_each_frames_replays(browser):
    payload = _watched_under_cuda_graphs()
    page = _watch_page(browser, payload)
    rows = page.locator(".ie-watch-cudagraphs tbody tr").evaluate_all(
        "rs => rs.map(r => [Number(r.dataset.step), r.dataset.compile, r.dataset.kind, "
        "r.querySelector('[data-col=count]').textContent, r.querySelector('.ie-watch-reason').textContent])")
    assert rows == [[e["step"], e["compile"], e["kind"], str(e["count"]), e["reason"]] for e in payload["cudagraphs"]]
    [frame] = payload["frames"]
    assert page.locator('.ie-watch-frames [data-col="cudagraph_replays"]').inner_text() == str(frame["cudagraph_replays"])
    assert page.locator('.ie-watch-frames [data-col="cudagraph_skips"]').inner_text() == "0"

    # the same view handed a run without CUDA graphs shows neither the table nor the frames' columns
    page.evaluate("p => window.showPayload(p)", {**payload, "cudagraphs": [],
                                                 "frames": [{**frame, "cudagraph_replays": 0, "cudagraph_skips": 0}]})
    assert page.locator(".ie-watch-cudagraphs").count() == 0
    assert page.locator('.ie-watch-frames [data-col="cudagraph_replays"]').count() == 0
    assert page.locator('.ie-watch-frames [data-col="calls"]').inner_text() == "9"
    assert page.errors == []
