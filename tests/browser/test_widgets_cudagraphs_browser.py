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
