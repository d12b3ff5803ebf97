"""A bisect's culprit in the view of the compilation it blamed (``r.to_html``, headless Chromium): its levels
sit above the stages, and selecting one lights what it names in every stage. The program draws random numbers
(``rand_like``) that Inductor generates unless ``fallback_random``: the config change must light the kernel
that draws them, the FX and post-grad nodes of ``rand_like``, that kernel's lines computing them and the
user's line of ``rand_like``, and nothing of the line before it, which the same kernel also computes."""

from __future__ import annotations

import pytest
import torch

import explorer
from tests.browser.test_widgets_static_browser import lit_kernel_lines, settle

pytestmark = pytest.mark.browser


def noisy(x):
    y = x * 2
    return y + torch.rand_like(y)  # LINE: rand_like


def _line(marker: str) -> int:
    source = open(__file__).read().splitlines()
    return next(i for i, text in enumerate(source, 1) if text.rstrip().endswith(f"# LINE: {marker}"))


@pytest.fixture(scope="module")
def culprit(tmp_path_factory):
    r = explorer.bisect(noisy, torch.ones(4, 4), fusion=False, progress_display=False)
    return r, r.to_html(tmp_path_factory.mktemp("culprit") / "culprit.html")


def _lit(page, selector: str, attribute: str) -> list[str]:
    return page.locator(selector).evaluate_all(f"els => els.filter(e => e.classList.contains('ie-lit'))"
                                               f".map(e => e.getAttribute('{attribute}'))")


def test_selecting_the_config_change_lights_its_kernel_nodes_and_line_in_every_stage(browser, culprit):
    r, path = culprit
    (changed,) = r.setting.kernels
    graph = r.compilation.graph(changed.graph)
    kernel = graph.kernel(changed.kernel)
    page = browser.new_page(viewport={"width": 1300, "height": 820})
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(path.as_uri())
    page.wait_for_selector(".ie-root g.ie-node", timeout=15_000)
    settle(page)

    levels = page.locator(".ie-culprits .ie-culprit")
    assert levels.all_inner_texts() == [f"{level} {what}" for level, what in r.culprit_lines()]
    assert page.locator('.ie-culprits span.ie-culprit[data-level="backend"]').count() == 1  # names nothing here
    page.click('.ie-culprits button.ie-culprit[data-level="config change"]')
    settle(page)
    assert page.get_attribute('.ie-culprits button[data-level="config change"]', "aria-pressed") == "true"
    assert page.locator(".ie-side .ie-selection-label").inner_text() == "culprit: config change inductor_fallback_random"

    assert _lit(page, "g.ie-node", "data-name") == ["rand_like"]  # the FX stage: not y, not add
    side = page.locator(".ie-side")
    assert side.locator(".ie-user-line.ie-lit").evaluate_all("els => els.map(e => Number(e.dataset.line))") == [
        _line("rand_like")]
    expected_lines = {(kernel.id, line) for line, nodes in kernel.line_nodes.items()
                      if set(nodes) & set(changed.post_grad_nodes)}
    assert expected_lines and {(k, n) for k, n in lit_kernel_lines(page)} == expected_lines

    page.click('.ie-stage-btn[data-stage="post_grad"]')
    settle(page)
    assert sorted(_lit(page, "g.ie-node", "data-name")) == sorted(changed.post_grad_nodes)
    page.click('.ie-stage-btn[data-stage="kernels"]')
    settle(page)
    assert _lit(page, ".ie-kitem", "data-id") == [kernel.id]
    in_source = page.locator(".ie-kdetail .ie-src-line.ie-lit").evaluate_all("els => els.map(e => Number(e.dataset.line))")
    assert {(kernel.id, n) for n in in_source} == expected_lines

    page.click('.ie-culprits button.ie-culprit[data-level="lines"]')  # a line alone lights what it made
    settle(page)
    assert page.get_attribute('.ie-culprits button[data-level="config change"]', "aria-pressed") == "false"
    assert kernel.id in _lit(page, ".ie-kitem", "data-id")
    assert errors == []
