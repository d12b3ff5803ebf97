"""The Compile time stage and the Kernels stage's roofline in headless Chromium, on static exports.

The compile-time report is a real one (a CPU compile with a graph break: two graphs); every expected
width, graph and line is read from the report. The roofline runs on a GPT block measured on an H200
(examples/data/gpt_block.counters.json.gz: a profile and Nsight Compute counters); its expected points
are the trace's own part.
"""

from __future__ import annotations

import copy
import gzip
import json

import pytest

from compiler.model import datasheet
from tests.browser.test_widgets_static_browser import click, open_export, settle
from tests.paths import EXAMPLES, FIXTURES
from widgets.compile_time_parts import chart, chrome_trace
from widgets.roofline import roofline

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def trace(graph_break_compilation) -> dict:
    return graph_break_compilation[0].to_json()


def open_compile_time(browser, trace, tmp_path, name="ct.html"):
    page = open_export(browser, trace, tmp_path, name)
    click(page, '.ie-stage-btn[data-stage="compile_time"]')
    page.wait_for_selector(".ie-ct-svg", timeout=15_000)
    return page


def blocks(page) -> dict[str, dict]:
    return {b["id"]: b for b in page.evaluate("""() => [...document.querySelectorAll('.ie-ct-block')].map(g => {
        const r = g.querySelector('rect').getBBox(); const m = g.transform.baseVal.consolidate().matrix;
        return {id: g.dataset.id, x: m.e, w: r.width, depth: Number(g.dataset.depth), seconds: Number(g.dataset.seconds),
                cls: g.getAttribute('class'), hatched: !!g.querySelector('.ie-ct-hatch'), title: g.querySelector('title').textContent};
    })""")}


def test_icicle_blocks_are_as_wide_as_their_seconds_and_nest_under_their_parents(browser, trace, tmp_path):
    report = trace["compile_time"]
    page = open_compile_time(browser, trace, tmp_path)
    svg = page.locator(".ie-ct-svg")
    width = float(svg.get_attribute("data-width"))
    shown = blocks(page)
    expected = {b["id"]: b for b in chart(report)["blocks"]}
    assert len(shown) + int(svg.get_attribute("data-hidden")) == len(expected)
    px_per_s = width / report["seconds"]
    for bid, b in shown.items():
        assert b["w"] == pytest.approx(expected[bid]["seconds"] * px_per_s, abs=0.02)
        assert b["x"] == pytest.approx(expected[bid]["x_s"] * px_per_s, abs=0.02)
        assert f"{100 * expected[bid]['share']:.1f}%" in b["title"]

    def children(phase):
        for child in phase.get("children") or []:
            yield phase, child
            yield from children(child)

    for parent, child in children(report["root"]):
        if child["id"] in shown:  # a child lies inside its parent's span, one row down
            p, c = shown[parent["id"]], shown[child["id"]]
            assert c["depth"] == p["depth"] + 1 and p["x"] - 0.02 <= c["x"] and c["x"] + c["w"] <= p["x"] + p["w"] + 0.05
    explorer_rows = [b for b in shown.values() if "ie-ct-cat-explorer" in b["cls"]]
    assert explorer_rows and all(b["hatched"] for b in explorer_rows)
    assert not any(b["hatched"] for b in shown.values() if "ie-ct-cat-explorer" not in b["cls"])
    assert page.errors == []


def test_double_click_zooms_into_a_block_and_the_button_shows_the_whole_compile_again(browser, trace, tmp_path):
    report = trace["compile_time"]
    page = open_compile_time(browser, trace, tmp_path, "zoom.html")
    width = float(page.get_attribute(".ie-ct-svg", "data-width"))
    expected = {b["id"]: b for b in chart(report)["blocks"]}
    focus = max((p for p in _walk(report["root"]) if p.get("graph") and p.get("children")), key=lambda p: len(list(_walk(p))))
    page.locator(f'.ie-ct-block[data-id="{focus["id"]}"]').dispatch_event("dblclick")
    assert page.get_attribute(".ie-ct-svg", "data-focus") == focus["id"]
    shown = blocks(page)
    inside = {p["id"] for p in _walk(focus)}
    ancestors = {b for b in expected if expected[b]["depth"] < expected[focus["id"]]["depth"]
                 and expected[b]["x_s"] <= expected[focus["id"]]["x_s"] < expected[b]["x_s"] + expected[b]["seconds"]}
    assert set(shown) <= inside | ancestors and len(set(shown) & inside) > 1
    px_per_s = width / focus["seconds"]
    for bid in set(shown) & inside:  # the focus fills the width, its phases keep their proportions
        assert shown[bid]["w"] == pytest.approx(expected[bid]["seconds"] * px_per_s, abs=0.02)
        assert shown[bid]["x"] == pytest.approx((expected[bid]["x_s"] - expected[focus["id"]]["x_s"]) * px_per_s, abs=0.02)
    assert all(shown[a]["w"] == pytest.approx(width, abs=0.02) for a in ancestors if a in shown)
    page.click(".ie-ct-zoom-out")
    assert page.get_attribute(".ie-ct-svg", "data-focus") is None
    assert len(blocks(page)) + int(page.get_attribute(".ie-ct-svg", "data-hidden")) == len(expected)
    assert page.errors == []


def test_a_line_bar_selects_the_line_and_a_node_bar_its_graph_and_node(browser, trace, tmp_path):
    report = trace["compile_time"]
    page = open_compile_time(browser, trace, tmp_path, "links.html")
    file, line = report["lines"][0]["line"]
    bar = f'.ie-ct-bar[data-file="{file}"][data-line="{line}"]'
    click(page, bar)
    assert page.evaluate("() => window.inductorExplorer.selection") == {"kind": "user_line", "id": file, "line": line}
    assert "ie-selected" in page.get_attribute(bar, "class")
    assert trace["sources"][file][str(line)].strip() in page.locator(".ie-side").inner_text()

    other = next(n for n in report["nodes"] if not n["key"].startswith(trace["graphs"][0]["id"] + "/"))
    graph, node = other["key"].split("/", 1)
    click(page, f'.ie-ct-bar[data-graph="{graph}"][data-node="{node}"]')
    settle(page)
    assert page.evaluate("() => [window.inductorExplorer.gd.id, window.inductorExplorer.selection]") == \
        [graph, {"kind": "fx", "id": node}]
    click(page, '.ie-stage-btn[data-stage="fx"]')
    assert "ie-selected" in page.get_attribute(f'g.ie-node[data-name="{node}"]', "class")
    assert page.errors == []


def test_a_block_naming_a_graph_shows_it_and_one_naming_a_kernel_selects_it(browser, trace, tmp_path):
    # A CPU compile times no kernel on its own; a GPU autotuning phase names its kernel. Give one phase of
    # the second graph's compile the kernel id of that graph, as such a phase would carry it.
    trace = copy.deepcopy(trace)
    target = trace["graphs"][1]
    kernel = next(k["id"] for k in target["kernels"])
    phase = max((p for p in _walk(trace["compile_time"]["root"]) if p.get("graph") == target["id"] and not p.get("children")),
                key=lambda p: p["seconds"])  # wide enough to be drawn
    phase["kernel"] = kernel
    page = open_compile_time(browser, trace, tmp_path, "kernel.html")
    assert page.evaluate("() => window.inductorExplorer.gd.id") == trace["graphs"][0]["id"]
    page.locator(f'.ie-ct-block[data-kernel="{kernel}"]').dispatch_event("click")
    settle(page)
    assert page.evaluate("() => [window.inductorExplorer.gd.id, window.inductorExplorer.selection]") == \
        [target["id"], {"kind": "kernel", "id": kernel}]
    assert "ie-selected" in page.get_attribute(f'.ie-ct-block[data-kernel="{kernel}"]', "class")
    click(page, '.ie-stage-btn[data-stage="kernels"]')
    assert "ie-selected" in page.get_attribute(f'.ie-kitem[data-id="{kernel}"]', "class")

    click(page, '.ie-stage-btn[data-stage="compile_time"]')
    page.wait_for_selector(".ie-ct-svg")
    first = trace["graphs"][0]["id"]
    page.locator(f'.ie-ct-block[data-graph="{first}"][data-name="inductor_compile"]').first.dispatch_event("click")
    settle(page)
    assert page.evaluate("() => window.inductorExplorer.gd.id") == first
    assert page.errors == []


def test_chrome_trace_button_downloads_the_report_as_a_chrome_trace(browser, trace, tmp_path):
    page = open_compile_time(browser, trace, tmp_path, "chrome.html")
    with page.expect_download() as download:
        page.click(".ie-ct-chrome")
    assert json.loads(open(download.value.path()).read()) == chrome_trace(trace["compile_time"])
    assert page.errors == []


def test_a_trace_without_a_report_says_so(browser, tmp_path):
    trace = json.loads((FIXTURES / "widget_sample.json").read_text())
    page = open_export(browser, trace, tmp_path, "none.html")
    assert page.locator('.ie-stage-btn[data-stage="compile_time"] .ie-count').inner_text() == "–"
    click(page, '.ie-stage-btn[data-stage="compile_time"]')
    assert "no compile-time report" in page.locator(".ie-ct-empty").inner_text()


# ------------------------------------------------------------------------------------------ roofline


def _walk(phase):
    yield phase
    for child in phase.get("children") or []:
        yield from _walk(child)


def open_roofline(browser, trace, tmp_path, name):
    page = open_export(browser, trace, tmp_path, name)
    click(page, '.ie-stage-btn[data-stage="kernels"]')
    page.click(".ie-roofline-box > summary")
    # the panel loads its part on <details>' toggle event, which the browser queues after the click: wait for
    # what it draws (points, or the how-to), not only for no part pending
    page.wait_for_selector(".ie-roof-point, .ie-roof-howto", timeout=15_000)
    settle(page)
    return page


def test_roofline_points_are_the_kernels_on_record_and_a_click_selects_one(browser, tmp_path):
    trace = json.loads(gzip.decompress((EXAMPLES / "data" / "gpt_block.counters.json.gz").read_bytes()))
    trace["meta"]["device_peaks"] = datasheet.peaks_json(trace["meta"]["device_name"])  # as c.to_json() writes it
    part = roofline(trace, trace["graphs"][0])
    page = open_roofline(browser, trace, tmp_path, "roof.html")
    shown = page.locator(".ie-roof-point").evaluate_all(
        "els => els.map(e => [e.dataset.kernel, Number(e.dataset.intensity), Number(e.dataset.flopsPerS), Number(e.getAttribute('cy'))])")
    assert [s[0] for s in shown] == [p["kernel"] for p in part["points"]] and len(shown) >= 2
    assert [v for s in shown for v in s[1:3]] == pytest.approx([v for p in part["points"] for v in (p["intensity"], p["flops_per_s"])])
    faster = sorted(shown, key=lambda s: s[2])  # more FLOP/s is higher up: smaller y
    assert [s[3] for s in faster] == sorted((s[3] for s in faster), reverse=True)
    assert float(page.get_attribute(".ie-roof-bandwidth", "data-bandwidth")) == pytest.approx(part["roofs"]["bandwidth"])
    compute_y = float(page.get_attribute(".ie-roof-compute", "y1"))
    assert float(page.get_attribute(".ie-roof-compute", "data-compute")) == part["roofs"]["compute"] == 66.9e12
    assert all(s[3] > compute_y for s in shown)  # every kernel below the compute roof
    assert "float32 peak, datasheet (H200, dense)" in page.locator(".ie-roof-notes").inner_text()

    kernel = part["points"][-1]["kernel"]
    page.locator(f'.ie-roof-point[data-kernel="{kernel}"]').dispatch_event("click")
    settle(page)
    assert page.evaluate("() => window.inductorExplorer.selection") == {"kind": "kernel", "id": kernel}
    assert "ie-selected" in page.get_attribute(f'.ie-roof-point[data-kernel="{kernel}"]', "class")
    assert "ie-selected" in page.get_attribute(f'.ie-kitem[data-id="{kernel}"]', "class")
    assert page.errors == []


def test_roofline_without_times_says_what_to_run(browser, tmp_path):
    trace = json.loads((FIXTURES / "widget_sample.json").read_text())
    page = open_roofline(browser, trace, tmp_path, "roof_none.html")
    assert page.locator(".ie-roof-point").count() == 0
    text = page.locator(".ie-roof-howto").inner_text()
    assert "c.profile()" in text and "c.counters()" in text and "k.bench()" in text
