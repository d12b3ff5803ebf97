"""Search everything, keyboard navigation and the narrow layout, in the static export in Chromium.

The expected search hits are worked out here from the trace itself (same matching rule as the
view: a query matches an item's id or its description, case-insensitively).
"""

from __future__ import annotations

import json

import pytest

from benchmarks.render import synthetic_trace
from tests.browser.test_widgets_static_browser import open_export, settle
from tests.paths import FIXTURES

pytestmark = pytest.mark.browser

FUSED = "cpp_fused__softmax_add_relu_sum_0"
PER_KIND = 8  # hits the dropdown lists per kind (search.js)


@pytest.fixture(scope="module")
def sample() -> dict:
    return json.loads((FIXTURES / "widget_sample.json").read_text())


def searchable(graph: dict) -> dict[str, list[str]]:
    """Per kind, the strings each item of a graph is found by (id and description joined)."""
    buffers: dict[str, str] = {}
    for op in graph["loop_ir"]:
        for b in op["buffers"]:
            buffers.setdefault(b, op["name"])
    return {
        "fx": [f"{n['name']} {n.get('target', '')}" for n in graph["fx"]["nodes"]],
        "post_grad": [f"{n['name']} {n.get('target', '')}" for n in graph["post_grad"]["nodes"]],
        "loop_ir": [f"{op['name']} {' '.join(op['buffers'])}" for op in graph["loop_ir"]],
        "buffer": list(buffers),
        "fused": [f["name"] for f in graph["fused"]],
        "kernel": [f"{k['id']} {k.get('name', '')}" for k in graph["kernels"]],
        "autotune": [f"{r['choice']} {r['kernel']}" for r in graph["autotune"]],
    }


def expected_counts(graph: dict, sources: dict, query: str) -> dict[str, int]:
    q = query.lower()
    items = searchable(graph)
    items["source"] = [f"{file}:{line} {code}" for file, lines in sources.items() for line, code in lines.items()]
    counts = {kind: sum(q in text.lower() for text in texts) for kind, texts in items.items()}
    return {kind: n for kind, n in counts.items() if n}


def search(page, query):
    page.fill(".ie-gsearch-input", query)
    page.wait_for_selector(".ie-gsearch-pop:not([hidden]) :is(.ie-gsearch-group, .ie-gsearch-note:not(:has-text('indexing')))")
    settle(page)


def dropdown(page) -> dict[str, int]:
    return dict(
        page.evaluate(
            """() => [...document.querySelectorAll('.ie-gsearch-group')]
                   .map(g => [g.dataset.kind, Number(g.querySelector('.ie-count').textContent)])"""
        )
    )


def selection_label(page) -> str:
    return page.locator(".ie-side .ie-selection-label").inner_text()


def active_stage(page) -> str:
    return page.get_attribute('.ie-stage-btn[aria-selected="true"]', "data-stage")


def test_search_groups_hits_by_kind_and_counts_other_graphs(browser, sample, tmp_path):
    page = open_export(browser, sample, tmp_path)
    for query in ["relu", "buf3", "model.py:26", "mm"]:
        search(page, query)
        want = expected_counts(sample["graphs"][0], sample["sources"], query)
        got = dropdown(page)
        assert got == want, query
        order = ["fx", "post_grad", "loop_ir", "buffer", "fused", "kernel", "source", "autotune"]
        assert list(got) == [k for k in order if k in got]  # grouped, in the stages' order
        other = sum(expected_counts(sample["graphs"][1], {}, query).values())
        others = page.locator('.ie-gsearch-others [data-graph="g1"]')
        assert (others.inner_text() if others.count() else None) == (f"g1 ({other})" if other else None), query
    combobox = page.locator(".ie-gsearch-input")
    assert combobox.get_attribute("aria-expanded") == "true"
    active = combobox.get_attribute("aria-activedescendant")
    assert page.get_attribute(f"#{active}", "aria-selected") == "true"
    assert page.errors == []


def test_enter_and_click_jump_to_the_stage_and_select(browser, sample, tmp_path):
    page = open_export(browser, sample, tmp_path)
    search(page, "softmax_add")
    assert dropdown(page) == {"kernel": 1}
    page.press(".ie-gsearch-input", "Enter")
    settle(page)
    assert active_stage(page) == "kernels"
    assert page.locator(".ie-kitem.ie-selected").evaluate_all("els => els.map(e => e.dataset.id)") == [FUSED]
    assert selection_label(page) == f"kernel {FUSED}"
    assert page.locator(".ie-gsearch-pop").is_hidden()

    # Arrows walk the hits across groups: buf3 is a loop-IR node's buffer and a buffer of its own.
    search(page, "buf3")
    page.press(".ie-gsearch-input", "ArrowDown")
    assert page.locator('.ie-gsearch-hit[aria-selected="true"]').get_attribute("data-kind") == "buffer"
    page.press(".ie-gsearch-input", "Enter")
    settle(page)
    assert active_stage(page) == "loop_ir"
    assert page.locator(".ie-ir.ie-selected").evaluate_all("els => els.map(e => e.dataset.name)") == ["op3"]

    # A source line selects that line: its FX node lights up in the graph.
    search(page, "model.py:26")
    page.click('.ie-gsearch-hit[data-kind="source"]')
    settle(page)
    assert selection_label(page) == "/home/user/project/model.py:26"
    page.click('.ie-stage-btn[data-stage="fx"]')
    settle(page)
    assert page.locator("g.ie-node.ie-lit").evaluate_all("els => els.map(e => e.dataset.name).sort()") == ["add", "relu"]

    # Nothing here, one hit in g1: its button switches graph and the autotune hit opens that table.
    search(page, "BLOCK_M=32")
    assert dropdown(page) == {}
    page.click('.ie-gsearch-others [data-graph="g1"]')
    settle(page)
    assert page.input_value(".ie-graph-picker") == "1"
    page.wait_for_selector('.ie-gsearch-group[data-kind="autotune"]')
    page.press(".ie-gsearch-input", "Enter")
    settle(page)
    assert active_stage(page) == "autotune"
    assert page.errors == []


def test_keyboard_slash_arrows_enter_escape(browser, sample, tmp_path):
    page = open_export(browser, sample, tmp_path)
    assert page.get_attribute(".ie-gsearch-input", "aria-keyshortcuts") == "/"
    page.keyboard.press("/")
    assert page.evaluate("document.activeElement.classList.contains('ie-gsearch-input')")
    page.keyboard.press("Escape")
    page.click('.ie-stage-btn[data-stage="kernels"]')
    settle(page)
    klist = page.locator(".ie-klist")
    assert klist.get_attribute("role") == "listbox"
    ids = [k["id"] for k in sample["graphs"][0]["kernels"]]
    klist.focus()
    page.keyboard.press("ArrowDown")
    cursor = klist.get_attribute("aria-activedescendant")
    assert page.get_attribute(f"#{cursor}", "data-id") == ids[1]
    assert "ie-cursor" in page.get_attribute(f"#{cursor}", "class").split()
    assert selection_label(page) == "nothing"  # arrows move the cursor; Enter selects
    page.keyboard.press("Enter")
    settle(page)
    assert selection_label(page) == f"kernel {ids[1]}"
    page.keyboard.press("ArrowUp")
    page.keyboard.press("Enter")
    settle(page)
    assert page.locator(".ie-kitem.ie-selected").evaluate_all("els => els.map(e => e.dataset.id)") == [ids[0]]
    page.keyboard.press("Escape")
    settle(page)
    assert selection_label(page) == "nothing"
    assert page.locator(".ie-kitem.ie-selected").count() == 0
    # "/" from a list focuses the search box; Escape there closes its dropdown first.
    page.keyboard.press("/")
    page.keyboard.type("relu")
    page.wait_for_selector(".ie-gsearch-pop:not([hidden]) .ie-gsearch-group")
    page.keyboard.press("Escape")
    assert page.locator(".ie-gsearch-pop").is_hidden()
    # Fused groups and loop-IR nodes: the same list keys (End goes to the last row).
    for stage, kind, rows in [("fused", "fused", "ie-fused"), ("loop_ir", "loop_ir", "ie-ir")]:
        page.click(f'.ie-stage-btn[data-stage="{stage}"]')
        settle(page)
        names = [item["name"] for item in (sample["graphs"][0]["fused"] if kind == "fused" else sample["graphs"][0]["loop_ir"])]
        page.focus(".ie-fused-list" if kind == "fused" else ".ie-irlist")
        page.keyboard.press("End")
        page.keyboard.press("Enter")
        settle(page)
        assert page.locator(f".{rows}.ie-selected").evaluate_all("els => els.map(e => e.dataset.name)") == [names[-1]], stage
        page.keyboard.press("Escape")
        settle(page)
    # Graph nodes in order: arrows select the next node of the graph.
    page.click('.ie-stage-btn[data-stage="fx"]')
    settle(page)
    names = [n["name"] for n in sample["graphs"][0]["fx"]["nodes"]]
    page.click(f'g.ie-node[data-name="{names[4]}"]')
    settle(page)
    page.focus(".ie-graph-svg")
    page.keyboard.press("ArrowDown")
    settle(page)
    assert selection_label(page) == f"Dynamo FX node {names[5]}"
    page.keyboard.press("ArrowUp")
    page.keyboard.press("ArrowUp")
    settle(page)
    assert selection_label(page) == f"Dynamo FX node {names[3]}"
    assert page.errors == []


def test_narrow_view_stacks_its_panes_without_overflow(browser, sample, tmp_path):
    page = open_export(browser, sample, tmp_path)
    root = page.locator(".ie-root")
    assert "ie-narrow" not in root.get_attribute("class").split()
    page.set_viewport_size({"width": 300, "height": 900})
    page.wait_for_selector(".ie-root.ie-narrow")
    page.click('g.ie-node[data-name="add"]')
    settle(page)
    geometry = """() => {
      const box = (sel) => document.querySelector(sel).getBoundingClientRect();
      const root = document.querySelector('.ie-root');
      const wide = [...root.querySelectorAll('.ie-summary, .ie-toolbar, .ie-main, .ie-side, .ie-gsearch')]
        .filter(e => e.getBoundingClientRect().right > box('.ie-root').right + 1).map(e => e.className);
      return {main: box('.ie-main'), side: box('.ie-side'), page: document.documentElement.scrollWidth,
              root: [root.scrollWidth, root.clientWidth], wide};
    }"""
    for stage in ["fx", "kernels"]:
        page.click(f'.ie-stage-btn[data-stage="{stage}"]')
        settle(page)
        g = page.evaluate(geometry)
        assert g["side"]["top"] >= g["main"]["bottom"] - 1, (stage, g)  # the linked pane is below
        assert g["side"]["left"] == pytest.approx(g["main"]["left"], abs=1)
        assert g["page"] <= 300 and g["root"][0] <= g["root"][1], (stage, g)
        assert g["wide"] == [], stage
    # The kernel list sits above the kernel's source.
    klist = page.locator(".ie-klist").bounding_box()
    detail = page.locator(".ie-kdetail").bounding_box()
    assert detail["y"] >= klist["y"] + klist["height"] - 1
    page.screenshot(path=str(tmp_path / "narrow.png"), full_page=True)
    page.set_viewport_size({"width": 1300, "height": 820})
    page.wait_for_selector(".ie-root:not(.ie-narrow)")
    side, main = page.locator(".ie-side").bounding_box(), page.locator(".ie-main").bounding_box()
    assert side["x"] >= main["x"] + main["width"] - 1  # side by side again
    assert page.errors == []


def test_search_on_a_large_trace_is_capped_and_answered_from_its_index(browser, tmp_path):
    """Once the index is built, a keystroke is answered inside its own input event, from the index: no part
    is loaded and nothing indexed again, and the dropdown holds at most PER_KIND hits a kind however many
    match. How long that takes is a figure for benchmarks/render.py, not an assertion here."""
    trace = synthetic_trace()
    page = open_export(browser, trace, tmp_path, "large.html")
    search(page, "fc")  # builds the index
    answered = page.evaluate(
        """() => { const input = document.querySelector('.ie-gsearch-input');
                   input.value = 'l4'; input.dispatchEvent(new Event('input'));
                   const fx = document.querySelector('.ie-gsearch-group[data-kind="fx"] .ie-count');
                   return {pending: document.querySelector('.ie-root').dataset.pending,
                           fx: fx && Number(fx.textContent),
                           hits: document.querySelectorAll('.ie-gsearch-hit').length,
                           notes: [...document.querySelectorAll('.ie-gsearch-note')].map(n => n.textContent)}; }"""
    )
    fx_total = sum("l4" in n["name"].lower() or "l4" in str(n.get("target", "")).lower() for n in trace["graphs"][0]["fx"]["nodes"])
    assert answered == {"pending": "0", "fx": fx_total, "hits": answered["hits"], "notes": []}, answered
    assert fx_total > PER_KIND
    counts = dropdown(page)
    assert counts["fx"] == fx_total
    assert page.locator('.ie-gsearch-group[data-kind="fx"] .ie-gsearch-hit').count() == PER_KIND
    assert answered["hits"] == page.locator(".ie-gsearch-hit").count() <= PER_KIND * 8
    assert page.errors == []
