"""The static HTML export of a sweep in headless Chromium: the table with the best point marked and
heat on time, memory and error, sorting by a column, a click opening that point's explorer view, and
two ticked rows showing their diff. What the page must show is read from the Sweep in Python."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser


def settle(page):
    page.wait_for_selector('.ie-sweep[data-pending="0"] .ie-root[data-pending="0"]', timeout=15_000)


def shown_order(page):
    return [int(p) for p in page.eval_on_selector_all(".ie-sweep-row", "rs => rs.map(r => r.dataset.point)")]


@pytest.fixture(scope="module")
def page(browser, local_sweep, tmp_path_factory):
    result, _ = local_sweep
    path = result.to_html(tmp_path_factory.mktemp("sweep") / "sweep.html")
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.errors = []
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    page.on("request", lambda r: page.errors.append(f"network request {r.url}") if not r.url.startswith(("file:", "data:", "blob:")) else None)
    page.goto(path.as_uri())
    page.wait_for_selector(".ie-sweep-row", timeout=15_000)
    settle(page)
    yield page
    page.close()


def test_table_marks_the_best_and_the_failed_point_and_heats_time(page, local_sweep):
    result, _ = local_sweep
    assert shown_order(page) == list(range(len(result)))
    best = page.locator(".ie-sweep-best")
    assert best.count() == 1 and best.get_attribute("data-point") == str(result.best)
    assert "★" in best.locator('td[data-col="index"]').inner_text()
    failed = page.locator('.ie-sweep-row[data-status="failed"]')
    assert failed.count() == 1 and "use_block_ptr" in failed.locator('td[data-col="error"]').inner_text()
    slowest = max((r for r in result.rows if r.run_ms is not None), key=lambda r: r.run_ms).index
    heat = page.locator(f'.ie-sweep-row[data-point="{slowest}"] td[data-col="run_ms"]').get_attribute("data-heat")
    assert heat == "1.000"
    assert page.locator('.ie-sweep-row[data-point="3"] td[data-col="run_ms"][data-heat]').count() == 0
    assert page.locator(".ie-sweep-bar").get_attribute("data-point") == str(result.best)  # the best opens first
    assert page.errors == []


def test_sorting_by_run_time(page, local_sweep):
    result, _ = local_sweep
    ran = sorted((r for r in result.rows if r.run_ms is not None), key=lambda r: r.run_ms)
    page.click('th[data-col="run_ms"]')
    assert shown_order(page) == [r.index for r in ran] + [3]  # a point without a time sorts last
    page.click('th[data-col="run_ms"]')
    assert shown_order(page) == [r.index for r in reversed(ran)] + [3]
    page.click('th[data-col="index"]')
    assert shown_order(page) == list(range(len(result)))


def test_click_opens_the_point_and_two_ticks_show_their_diff(page, local_sweep):
    result, _ = local_sweep
    other = next(r.index for r in result.rows if r.status == "ok" and r.index != result.best)
    page.click(f'.ie-sweep-row[data-point="{other}"] td[data-col="settings"]')
    settle(page)
    assert page.locator(".ie-sweep-bar").get_attribute("data-point") == str(other)
    assert page.locator(f'.ie-sweep-row[data-point="{other}"]').get_attribute("class").count("ie-selected") == 1
    page.check('.ie-sweep-row[data-point="0"] .ie-sweep-tick')
    page.check('.ie-sweep-row[data-point="2"] .ie-sweep-tick')
    settle(page)
    summary = page.locator(".ie-sweep-diffbox .ie-diff > summary").inner_text()
    assert summary == "diff " + f"{result.diff(0, 2).a} → {result.diff(0, 2).b}"
    assert page.locator(".ie-sweep-bar").get_attribute("data-point") == "2"
    assert page.errors == []
