"""The Export tab of an AOT compilation (explorer.export) in headless Chromium, on a static export of a
recorded CPU trace (tests/record_export_fixture.py): everything it shows is read from the trace's
``export`` record, and a JIT compilation shows no Export tab."""

from __future__ import annotations

import json

import pytest

import explorer
from tests.browser.test_widgets_static_browser import click, open_export, settle
from tests.paths import FIXTURES


@pytest.fixture(scope="module")
def exported():
    return explorer.load(FIXTURES / "export_dynamic.json.gz")


def test_the_export_tab_shows_the_signature_ranges_and_graph_of_the_trace(browser, tmp_path, exported):
    trace = exported.to_json()
    record = trace["export"]
    page = open_export(browser, trace, tmp_path, "export_tab.html")
    click(page, '.ie-stage-btn[data-stage="export"]')
    settle(page)
    shown = page.locator(".ie-exp-inputs .ie-exp-spec").evaluate_all(
        "rows => rows.map(r => [r.dataset.kind, r.dataset.name])")
    assert shown == [[s["kind"], s["name"]] for s in record["inputs"]]
    assert ["USER_INPUT", "x"] in shown and any(kind == "PARAMETER" for kind, _ in shown)
    outputs = page.locator(".ie-exp-outputs .ie-exp-spec").evaluate_all("rows => rows.map(r => r.dataset.kind)")
    assert outputs == [s["kind"] for s in record["outputs"]]
    ranges = page.locator(".ie-exp-range").evaluate_all(
        "rows => rows.map(r => [r.dataset.symbol, ...Array.from(r.cells).slice(1).map(c => Number(c.textContent))])")
    assert ranges == [[sym, lo, hi] for sym, (lo, hi) in record["range_constraints"].items()]
    assert ranges and ranges[0][1:] == [2, 64]
    assert page.locator(".ie-exp-graph").inner_text().strip() == record["graph"].strip()
    assert page.locator(".ie-exp-dynamic").inner_text() == record["dynamic_shapes"]
    assert page.locator(".ie-exp-strict").inner_text() == "non-strict (Python)"
    assert page.errors == []


def test_a_jit_compilation_has_no_export_tab(browser, tmp_path):
    trace = json.loads((FIXTURES / "widget_sample.json").read_text())
    page = open_export(browser, trace, tmp_path, "jit.html")
    assert page.locator('.ie-stage-btn[data-stage="export"]').count() == 0
    assert page.locator('.ie-stage-btn[data-stage="kernels"]').count() == 1
    assert page.errors == []
