"""The Dynamo stage of the static HTML export in headless Chromium: guards by kind, a guard's user
line in the side panel, graph-break markers, the symbols of a dynamic-shape capture.

Expected values come from the trace itself (its ``dynamo`` key and ``sources``), never typed in.
"""

from __future__ import annotations

import json

import pytest
import torch

import explorer
import widgets
from tests import workloads
from tests.browser.test_widgets_static_browser import click, open_export
from tests.paths import FIXTURES

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def dynamic_trace():
    """branch_on_size compiled with dynamic shapes for 8 rows, then recompiled on 3 rows."""
    c = explorer.compile(workloads.branch_on_size, torch.randn(8, 3), dynamic=True)
    c.recompile(torch.randn(3, 3))
    return c.to_json()


def open_dynamo(browser, trace, tmp_path):
    page = open_export(browser, trace, tmp_path)
    click(page, ".ie-stage-btn[data-stage=dynamo]")
    page.wait_for_selector(".ie-dynamo-stage", timeout=15_000)
    return page


def test_guards_grouped_by_kind_and_a_guard_shows_its_user_line(browser, tmp_path):
    trace = json.loads((FIXTURES / "gpu_default.json").read_text())
    guards = trace["dynamo"]["guards"]
    page = open_dynamo(browser, trace, tmp_path)
    groups = page.locator(".ie-dyn-guard-group")
    shown = {groups.nth(i).get_attribute("data-guard-kind"): int(groups.nth(i).locator(".ie-guard-count").inner_text())
             for i in range(groups.count())}
    assert shown == {kind: len(group) for kind, group in guards.items()}
    total = sum(len(group) for group in guards.values())
    assert page.locator(".ie-dyn-section[data-section=guards] > summary .ie-count").inner_text() == str(total)
    assert page.locator(".ie-stage-btn[data-stage=dynamo] .ie-count").inner_text() == f"{total} guards"  # says what

    # the first guard whose user line the trace holds the text of
    kind, index, guard = next((k, i, g) for k, group in guards.items() for i, g in enumerate(group)
                              if g.get("user_line") and str(g["user_line"][1]) in trace["sources"].get(g["user_line"][0], {}))
    file, line = guard["user_line"]
    assert page.locator(f".ie-dyn-guard[data-guard-kind='{kind}']").count() == 0  # rows are built when a group opens
    page.locator(f".ie-dyn-guard-group[data-guard-kind='{kind}'] > summary").click()
    click(page, f".ie-dyn-guard[data-guard-kind='{kind}'][data-index='{index}']")
    assert page.locator(".ie-dyn-guard.ie-selected").get_attribute("data-index") == str(index)
    assert page.locator(".ie-dyn-guard-code").inner_text() == guard["code"]
    detail = page.locator(".ie-dyn-guard-detail").inner_text()
    assert ("user code" in detail) == bool(guard.get("user_code")) and "null" not in detail.split("\n")
    side_line = page.locator(f".ie-side .ie-user-line[data-line='{line}']")
    assert side_line.get_attribute("data-file") == file
    assert "ie-lit" in side_line.get_attribute("class")
    assert side_line.locator(".ie-code-text").inner_text() == trace["sources"][file][str(line)]

    # a guard Dynamo recorded no user code for shows just its code
    kind, index = next((k, i) for k, group in guards.items() for i, g in enumerate(group) if not g.get("user_code"))
    page.locator(f".ie-dyn-guard-group[data-guard-kind='{kind}'] > summary").click()
    click(page, f".ie-dyn-guard[data-guard-kind='{kind}'][data-index='{index}']")
    detail = page.locator(".ie-dyn-guard-detail").inner_text()
    assert guards[kind][index]["code"] in detail and "user code" not in detail and "null" not in detail.split("\n")
    assert page.errors == []


def test_trace_without_a_dynamo_stage_says_so(browser, tmp_path):
    trace = json.loads((FIXTURES / "widget_sample.json").read_text())
    assert "dynamo" not in trace
    page = open_dynamo(browser, trace, tmp_path)
    assert "no Dynamo stage" in page.locator(".ie-dyn-empty").inner_text()
    assert page.locator(".ie-stage-btn[data-stage=dynamo] .ie-count").inner_text() == "–"
    assert page.errors == []


def test_graph_break_is_listed_and_marked_in_the_picker_and_the_source(browser, graph_break_compilation, tmp_path):
    trace = graph_break_compilation[0].to_json()
    (graph_break,) = trace["dynamo"]["graph_breaks"]
    file, line = graph_break["user_line"]
    page = open_dynamo(browser, trace, tmp_path)

    card = page.locator(".ie-dyn-break")
    assert card.count() == 1
    assert graph_break["reason"] in card.inner_text()
    assert graph_break["explanation"] in card.locator(".ie-dyn-explanation").inner_text()
    assert card.locator(".ie-dyn-hints li").count() == len(graph_break["hints"])

    # the graph picker marks the graphs that run after the break, and only those
    marked = page.eval_on_selector_all(".ie-graph-picker option[data-after-break]", "os => os.map(o => o.dataset.graph)")
    assert marked == graph_break["graphs_after"]
    assert "after graph break" in page.locator(f".ie-graph-picker option[data-graph='{marked[0]}']").inner_text()

    # selecting the break's line shows it in the side panel with the break marker
    click(page, ".ie-dyn-break .ie-chip-user_line")
    side_line = page.locator(f".ie-side .ie-user-line[data-line='{line}']")
    assert side_line.get_attribute("data-break") == "true"
    assert side_line.locator(".ie-break-mark").count() == 1
    assert side_line.locator(".ie-code-text").inner_text() == trace["sources"][file][str(line)]
    assert "ie-lit" in card.get_attribute("class")
    assert page.errors == []


def test_symbols_and_recompiles_of_a_dynamic_shape_capture(browser, dynamic_trace, tmp_path):
    dynamo = dynamic_trace["dynamo"]
    assert dynamo["symbols"], "a dynamic-shape capture records its symbols"
    page = open_dynamo(browser, dynamic_trace, tmp_path)
    rows = page.locator(".ie-dyn-symbols tbody tr")
    assert rows.count() == len(dynamo["symbols"])
    for i, symbol in enumerate(dynamo["symbols"]):
        cells = rows.nth(i).locator("td").all_inner_texts()
        assert cells[0] == symbol["name"] and cells[1] == symbol["source"] and cells[2] == str(symbol["value"])
        for guard in symbol.get("guards") or []:
            assert guard["expr"] in cells[5]
    assert page.locator(".ie-dyn-recompile").count() == len(dynamo["recompiles"]) > 0
    reasons = page.locator(".ie-dyn-recompile .ie-dyn-reason").all_inner_texts()
    assert reasons == [reason for r in dynamo["recompiles"] for reason in r["reasons"]]
    assert page.errors == []


def test_a_skipped_frame_is_marked_as_run_eagerly(browser, tmp_path):
    trace = explorer.compile(workloads.print_in_loop, torch.randn(8)).to_json()
    [frame] = trace["dynamo"]["frames"]
    [graph_break] = trace["dynamo"]["graph_breaks"]
    assert frame["skipped"] and graph_break["frame_skipped"] == frame["skipped"] and trace["graphs"] == []
    alone = browser.new_page()  # nothing was compiled: the view says which frame ran eagerly, and why
    alone.goto(widgets.write_html(trace, tmp_path / "alone.html").as_uri())
    alone.wait_for_selector(".ie-root", timeout=15_000)
    alone.wait_for_function("document.body.innerText.includes('ran eagerly')", timeout=15_000)
    assert f"print_in_loop: {frame['skipped']}" in alone.inner_text("body")
    # with a graph beside it (a later frame compiled), the Dynamo stage marks the skipped one
    trace["graphs"] = json.loads((FIXTURES / "widget_sample.json").read_text())["graphs"]
    page = open_dynamo(browser, trace, tmp_path)
    row = page.locator(".ie-dyn-frame[data-skipped=true]")
    assert row.count() == 1 and "ran eagerly" in row.inner_text() and frame["skipped"] in row.inner_text()
    card = page.locator(".ie-dyn-break")
    assert card.locator(".ie-skip-badge").inner_text() == "frame skipped"
    assert graph_break["frame_skipped"] in card.locator(".ie-dyn-skip-why").inner_text()
    assert graph_break["reason"] == "Failed to trace builtin operator" and graph_break["reason"] in card.inner_text()
    assert page.locator(".ie-stage-btn[data-stage=dynamo] .ie-count").inner_text().endswith("1 ran eagerly")
    assert page.errors == []
