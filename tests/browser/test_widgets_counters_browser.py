"""Hardware counters in the view, in headless Chromium, on a GPT block measured on an H200
(examples/data/gpt_block.counters.json.gz): the kernels table's bound-by and speed-of-light columns,
stall heat on the kernel's source lines, the per-reason breakdown in the side panel, and the heat
flowing to the post-grad nodes. Every expected figure is read from the trace."""

from __future__ import annotations

import gzip
import json

import pytest

from tests.browser.test_widgets_static_browser import click, heated_node_contrasts, open_export, settle
from tests.paths import EXAMPLES

pytestmark = pytest.mark.browser
TRACE = EXAMPLES / "data" / "gpt_block.counters.json.gz"


@pytest.fixture(scope="module")
def trace() -> dict:
    return json.loads(gzip.decompress(TRACE.read_bytes()))


def newest_counters(trace: dict) -> dict[str, dict]:
    rows: dict[str, dict] = {}
    for report in trace["counters"]:
        rows.update({k["kernel"]: k for k in report["kernels"]})
    return rows


def test_kernels_table_says_what_bounds_each_kernel_and_its_lines_stall_heat(browser, trace, tmp_path):
    counters = newest_counters(trace)
    page = open_export(browser, trace, tmp_path, "counters.html")
    click(page, '.ie-stage-btn[data-stage="kernels"]')
    shown = {row.get_attribute("data-id"): row for row in page.locator(".ie-kitem").all()}
    assert set(counters) <= set(shown)
    for kernel, row in shown.items():
        bound = row.locator(".ie-kcol-bound")
        if kernel not in counters:
            assert bound.count() == 0
            continue
        assert bound.get_attribute("data-bound") == counters[kernel]["bound_by"]
        sol = row.locator(".ie-kcol-sol")
        assert float(sol.get_attribute("data-memory")) == pytest.approx(counters[kernel]["memory_sol"])
        assert float(sol.get_attribute("data-compute")) == pytest.approx(counters[kernel]["compute_sol"])
    assert {b for b in page.locator(".ie-kitem .ie-kcol-bound").evaluate_all("els => els.map(e => e.dataset.bound)")} == \
        {k["bound_by"] for k in counters.values()}

    top = max(counters.values(), key=lambda k: k["samples"])
    click(page, f'.ie-kitem[data-id="{top["kernel"]}"]')
    heat = {int(line.get_attribute("data-line")): float(line.locator(".ie-line-heat").get_attribute("data-samples"))
            for line in page.locator(".ie-kdetail .ie-src-line").all() if line.locator(".ie-line-heat.ie-heat").count()}
    expected = {ln["line"]: ln["samples"] for ln in top["lines"] if ln["file"] is None and ln["samples"]}
    assert heat == pytest.approx(expected)
    side = page.locator(".ie-side")
    assert f'{top["bound_by"]}-bound' in side.locator(".ie-measure-counters").inner_text()
    reasons = side.locator(".ie-stall-reason").evaluate_all("els => els.map(e => [e.dataset.reason, Number(e.dataset.samples)])")
    assert reasons[0] == list(next(iter(top["stalls"].items())))

    # a hot line with provenance: its samples and its reasons in the side panel
    linked = {int(n) for n in next(k for g in trace["graphs"] for k in g["kernels"] if k["id"] == top["kernel"])["line_nodes"]}
    line = max((ln for ln in top["lines"] if ln["file"] is None and ln["line"] in linked), key=lambda ln: ln["samples"])
    click(page, f'.ie-kdetail .ie-src-line[data-line="{line["line"]}"]')
    assert f'{line["samples"]} warp stall samples' in side.locator(".ie-measure-stalls").first.inner_text()
    shown_reasons = dict(side.locator(".ie-stall-reason").evaluate_all("els => els.map(e => [e.dataset.reason, Number(e.dataset.samples)])"))
    assert shown_reasons == dict(sorted(line["stalls"].items(), key=lambda kv: -kv[1])[:6])
    assert page.errors == []


def test_post_grad_nodes_heat_by_stall_samples(browser, trace, tmp_path):
    page = open_export(browser, trace, tmp_path, "stalls.html")
    click(page, '.ie-stage-btn[data-stage="post_grad"]')
    page.select_option('.ie-main [data-stage="post_grad"] .ie-colour-by', "stalls")
    settle(page)
    samples = trace["counters"][-1]["post_grad_samples"][trace["graphs"][0]["id"]]
    heated = page.locator('.ie-main [data-stage="post_grad"] .ie-heat[data-heat]').all()
    shown = {g.get_attribute("data-name"): float(g.get_attribute("data-heat")) for g in heated}
    assert shown and shown == pytest.approx({name: v for name, v in samples.items() if name in shown})
    assert set(shown) == {name for name, v in samples.items() if v > 0} & set(shown)
    assert page.locator('.ie-main [data-stage="post_grad"] .ie-legend[data-heat-kind="stalls"]').count() == 1
    # the text of every heated node reads on it (WCAG AA, 4.5:1): dark on pale cyan, light on the deep blue
    # of the most stalled node (found to draw it)
    hottest = max(samples, key=samples.get)
    page.fill('.ie-main [data-stage="post_grad"] .ie-search', hottest)
    settle(page)
    contrasts = heated_node_contrasts(page, "post_grad")
    assert hottest in contrasts and all(ratio >= 4.5 for _, ratio in contrasts.values()), contrasts
    assert page.errors == []
