"""The static HTML export of a multi-rank TraceSet in headless Chromium: the rank picker, the
cross-rank divergence summary, and switching rank or compile id to show another compilation.

The fixture is a 2-rank NCCL job whose ranks diverge (tests/fixtures/torch_trace_nccl/README.md);
what the page must show is read from the TraceSet loaded in Python.
"""

from __future__ import annotations


import pytest

import explorer
import widgets
from tests.paths import FIXTURES

pytestmark = pytest.mark.browser

NCCL = FIXTURES / "torch_trace_nccl"


@pytest.fixture(scope="module")
def traceset():
    return explorer.load_trace(NCCL)


def fx_names(traceset, rank, compile_id):
    graph = traceset[rank][compile_id].to_json()["graphs"][0]
    return {n["name"] for n in graph["fx"]["nodes"]}


def settle(page):
    page.wait_for_selector('.ie-traceset[data-pending="0"] .ie-root[data-pending="0"]', timeout=15_000)


def shown_nodes(page):
    return set(page.eval_on_selector_all(".ie-root g.ie-node", "gs => gs.map(g => g.dataset.name)"))


@pytest.fixture(scope="module")
def page(browser, traceset, tmp_path_factory):
    path = widgets.write_traceset_html(traceset, tmp_path_factory.mktemp("traceset") / "traceset.html")
    page = browser.new_page(viewport={"width": 1300, "height": 900})
    page.errors = []
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    page.on("request", lambda r: page.errors.append(f"network request {r.url}") if not r.url.startswith(("file:", "data:", "blob:")) else None)
    page.goto(path.as_uri())
    page.wait_for_selector(".ie-root g.ie-node", timeout=15_000)
    settle(page)
    yield page
    page.close()


def test_ranks_and_divergence_summary_on_top(page, traceset):
    ranks = list(traceset.ranks)
    assert page.eval_on_selector_all(".ie-rank-picker option", "os => os.map(o => o.value)") == ranks == ["0", "1"]
    assert page.locator(".ie-ts-rank").count() == len(ranks)
    items = page.locator(".ie-ts-div")
    assert items.count() == len(traceset.divergence) > 0
    for i, d in enumerate(traceset.divergence):
        assert items.nth(i).get_attribute("data-kind") == d.kind
        assert d.summary in items.nth(i).inner_text()
    assert f"The ranks diverge ({len(traceset.divergence)})" in page.locator(".ie-ts-divergence > summary").inner_text()
    # the first compile of the first rank is shown first
    bar = page.locator(".ie-traceset-bar")
    assert (bar.get_attribute("data-rank"), bar.get_attribute("data-compile-id")) == ("0", traceset["0"].compile_ids[0])
    assert page.errors == []


def test_switching_rank_and_compile_changes_the_graph(page, traceset):
    compile_id = traceset["0"].compile_ids[0]
    rank0 = fx_names(traceset, "0", compile_id)
    rank1 = fx_names(traceset, "1", compile_id)
    assert rank0 != rank1, "the fixture's ranks compiled different graphs"
    page.select_option(".ie-rank-picker", "0")
    settle(page)
    before = shown_nodes(page)
    assert before and before <= rank0 and not before <= rank1

    page.select_option(".ie-rank-picker", "1")
    settle(page)
    bar = page.locator(".ie-traceset-bar")
    assert (bar.get_attribute("data-rank"), bar.get_attribute("data-compile-id")) == ("1", compile_id)
    after = shown_nodes(page)
    assert after and after <= rank1 and after != before
    assert page.eval_on_selector_all(".ie-compile-picker option", "os => os.map(o => o.value)") == traceset["1"].compile_ids

    other = traceset["1"].compile_ids[1]
    page.select_option(".ie-compile-picker", other)
    settle(page)
    assert bar.get_attribute("data-compile-id") == other
    assert shown_nodes(page) <= fx_names(traceset, "1", other)
    assert page.errors == []


def test_a_divergence_entry_jumps_to_that_rank(page, traceset):
    d = next(d for d in traceset.divergence if d.compile_id and "1" in d.ranks)
    page.select_option(".ie-rank-picker", "0")
    settle(page)
    page.locator(f".ie-ts-div[data-kind='{d.kind}'] .ie-ts-goto[data-rank='1']").first.click()
    settle(page)
    bar = page.locator(".ie-traceset-bar")
    assert (bar.get_attribute("data-rank"), bar.get_attribute("data-compile-id")) == ("1", d.compile_id)
    assert page.errors == []
