"""The static HTML export in headless Chromium (Debian's package, driven by Playwright).

Opened from disk (file://) with no network: clicks must light up the linked
items of every stage, stages must switch, markup in a trace must stay text.
"""

from __future__ import annotations

import json
import re

import pytest

import widgets
from benchmarks.render import synthetic_trace
from tests.paths import FIXTURES
from tests.unit.test_widgets_payload import evil_trace

pytestmark = pytest.mark.browser

FUSED = "cpp_fused__softmax_add_relu_sum_0"
TRITON = "triton_per_fused__softmax_backward_data_relu_threshold_backward_0"


@pytest.fixture(scope="module")
def sample() -> dict:
    return json.loads((FIXTURES / "widget_sample.json").read_text())


def open_export(browser, trace, tmp_path, name="export.html", color_scheme="light"):
    path = widgets.write_html(trace, tmp_path / name)
    page = browser.new_page(viewport={"width": 1300, "height": 820}, color_scheme=color_scheme)
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("request", lambda r: errors.append(f"network request {r.url}") if not r.url.startswith(("file:", "data:", "blob:")) else None)
    page.goto(path.as_uri())
    page.wait_for_selector(".ie-root g.ie-node", timeout=15_000)
    settle(page)
    page.errors = errors
    return page


def settle(page):
    """Wait until the view has no part loading and no selection being drawn."""
    page.wait_for_selector('.ie-root[data-pending="0"]', timeout=15_000)


def click(page, selector):
    page.click(selector)
    settle(page)


def contrast_ratio(first: str, second: str) -> float:
    """WCAG 2 contrast ratio of two computed CSS colours ("rgb(r, g, b)")."""
    def luminance(css: str) -> float:
        channels = [int(float(c)) / 255 for c in re.findall(r"[\d.]+", css)[:3]]
        r, g, b = (c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels)
        return 0.2126 * r + 0.7152 * g + 0.0722 * b

    light, dark = sorted((luminance(first), luminance(second)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def heated_node_contrasts(page, stage: str) -> dict[str, tuple[float, float]]:
    """Each heated node drawn in ``stage``: (its heat value, the lowest contrast of its text on its fill)."""
    drawn = page.locator(f'.ie-main [data-stage="{stage}"] g.ie-node.ie-heat[data-heat]').evaluate_all(
        """els => els.map(g => [g.dataset.name, Number(g.dataset.heat), getComputedStyle(g.querySelector('rect')).fill,
                               [...g.querySelectorAll('text')].map(t => getComputedStyle(t).fill)])""")
    return {name: (heat, min(contrast_ratio(fill, ink) for ink in inks)) for name, heat, fill, inks in drawn}


def lit_kernel_lines(page, scope=".ie-side .ie-kline"):
    return page.evaluate(
        """(sel) => [...document.querySelectorAll(sel)].filter(e => e.classList.contains('ie-lit'))
                 .map(e => [e.dataset.kernel || '', Number(e.dataset.line)])""",
        scope,
    )


def expected_kernel_lines(graph: dict, fx_name: str) -> dict[str, set[int]]:
    """Reference provenance, from the trace alone: FX node -> post-grad nodes -> kernel lines."""
    fx = next(n for n in graph["fx"]["nodes"] if n["name"] == fx_name)
    pg = set(fx["post_grad"])
    kernels = set(fx["kernels"])
    for node in graph["post_grad"]["nodes"]:
        if node["name"] in pg:
            kernels.update(node["kernels"])
    out = {}
    for k in graph["kernels"]:
        if k["id"] in kernels:
            lines = {int(line) for line, nodes in k["line_nodes"].items() if pg & set(nodes)}
            if lines:
                out[k["id"]] = lines
    return out


def test_fx_node_click_lights_its_kernel_lines_everywhere(browser, sample, tmp_path):
    page = open_export(browser, sample, tmp_path)
    click(page, 'g.ie-node[data-name="add"]')
    assert page.get_attribute('g.ie-node[data-name="add"]', "class").split().count("ie-selected") == 1
    expected = expected_kernel_lines(sample["graphs"][0], "add")
    assert expected == {FUSED: {20, 29, 40}}
    assert {(k, line) for k, line in lit_kernel_lines(page)} == {(FUSED, n) for n in expected[FUSED]}
    side = page.locator(".ie-side")
    assert side.locator('.ie-chip[data-kind="loop_ir"]').all_inner_texts() == ["op1", "op2", "op3"]
    assert side.locator('.ie-chip[data-kind="fused"]').all_inner_texts() == ["op1_op2_op3_op4"]
    assert side.locator(".ie-user-line.ie-lit").evaluate_all("els => els.map(e => e.dataset.line)") == ["26"]
    page.screenshot(path=str(tmp_path / "fx-selected.png"))
    # The kernels stage shows the same lines lit in the full source.
    click(page, '.ie-stage-btn[data-stage="kernels"]')
    in_source = page.locator(".ie-kdetail .ie-src-line.ie-lit").evaluate_all("els => els.map(e => Number(e.dataset.line))")
    assert set(in_source) == expected[FUSED]
    assert page.locator('.ie-kitem.ie-lit[data-id="%s"]' % FUSED).count() == 1
    page.screenshot(path=str(tmp_path / "kernels-lit.png"))
    assert page.errors == []


def test_kernel_line_click_lights_fx_nodes_and_user_source(browser, sample, tmp_path):
    page = open_export(browser, sample, tmp_path)
    click(page, '.ie-stage-btn[data-stage="kernels"]')
    # nothing is selected yet, but the first kernel's source is open: the panel says which one
    first = sample["graphs"][0]["kernels"][0]["id"]
    assert page.locator(".ie-kdetail .ie-kernel-name").inner_text() == first
    assert page.locator(".ie-side .ie-selection-label").inner_text() == "nothing"
    assert page.locator(".ie-side .ie-open-label").inner_text() == f"kernel {first}"
    click(page, ".ie-side .ie-select-open")
    assert page.locator(".ie-side .ie-selection-label").inner_text() == f"kernel {first}"
    assert page.locator(".ie-side .ie-open-label").count() == 0
    click(page, f'.ie-kitem[data-id="{FUSED}"]')
    click(page, '.ie-kdetail .ie-src-line[data-line="31"]')  # tmp4 = tmp3 - tmp_acc0: post-grad `sub`
    assert page.get_attribute('.ie-kdetail .ie-src-line[data-line="31"]', "class").split().count("ie-selected") == 1
    side = page.locator(".ie-side")
    assert side.locator('.ie-chip[data-kind="post_grad"]').all_inner_texts() == ["sub"]
    assert side.locator('.ie-chip[data-kind="fx"]').all_inner_texts() == ["softmax"]
    assert side.locator(".ie-user-line.ie-lit").evaluate_all("els => els.map(e => e.dataset.line)") == ["27"]
    click(page, '.ie-stage-btn[data-stage="fx"]')
    lit = page.locator("g.ie-node.ie-lit").evaluate_all("els => els.map(e => e.dataset.name)")
    assert lit == ["softmax"]
    click(page, '.ie-stage-btn[data-stage="post_grad"]')
    assert page.locator("g.ie-node.ie-lit").evaluate_all("els => els.map(e => e.dataset.name)") == ["sub"]
    page.screenshot(path=str(tmp_path / "kernel-line-selected.png"))
    assert page.errors == []


def test_fused_group_and_wrapper_line_link_to_kernels(browser, sample, tmp_path):
    page = open_export(browser, sample, tmp_path)
    click(page, '.ie-stage-btn[data-stage="fused"]')
    click(page, '.ie-fused[data-name="op1_op2_op3_op4"] .ie-name')
    assert page.locator(".ie-side [data-section=kernels] .ie-chip").all_inner_texts() == [FUSED]
    all_lines = {int(n) for n in sample["graphs"][0]["kernels"][1]["line_nodes"]}
    assert {line for _, line in lit_kernel_lines(page)} == all_lines
    assert sorted(page.locator(".ie-side .ie-chip[data-kind='fx']").all_inner_texts()) == ["add", "relu", "softmax", "sum_1"]
    click(page, '.ie-stage-btn[data-stage="wrapper"]')
    wrapper_lines = sample["graphs"][0]["kernels"][1]["wrapper_lines"]
    lit = page.locator('[data-stage="wrapper"] .ie-src-line.ie-lit').evaluate_all("els => els.map(e => Number(e.dataset.line))")
    assert lit == wrapper_lines
    mm_line = sample["graphs"][0]["kernels"][0]["wrapper_lines"][0]
    click(page, f'[data-stage="wrapper"] .ie-src-line[data-line="{mm_line}"]')
    assert page.locator(".ie-side .ie-chip[data-kind='fx']").all_inner_texts() == ["matmul"]
    assert page.locator(".ie-side .ie-selection-label").inner_text() == f"wrapper line {mm_line}"
    assert page.errors == []


def test_stages_graph_picker_and_sorted_autotune(browser, sample, tmp_path):
    page = open_export(browser, sample, tmp_path)
    for stage in ["fx", "post_grad", "loop_ir", "fused", "kernels", "wrapper", "autotune"]:
        click(page, f'.ie-stage-btn[data-stage="{stage}"]')
        assert page.get_attribute(f'.ie-stage-btn[data-stage="{stage}"]', "aria-selected") == "true"
        assert page.locator(f'.ie-main > [data-stage="{stage}"]').is_visible()
    assert "No autotuning" in page.locator('.ie-main [data-stage="autotune"]').inner_text()
    page.select_option(".ie-graph-picker", label="g1 · backward · Dynamo graph 0")
    settle(page)
    rows = page.locator(".ie-autotune tbody tr")
    assert rows.count() == 6
    assert page.locator(".ie-autotune tr.ie-chosen").count() == 2
    def group_times():
        return [[float(t) for t in table.locator("td.ie-at-time").all_inner_texts()]
                for table in page.locator("table.ie-autotune").all()]

    time_head = '.ie-at-group >> nth=0 >> th[data-sort="time"]'
    click(page, time_head)
    assert all(ts == sorted(ts) for ts in group_times())
    click(page, time_head)
    assert all(ts == sorted(ts, reverse=True) for ts in group_times())
    assert page.get_attribute(time_head, "aria-sort") == "descending"
    click(page, f'.ie-at-group[data-kernel="{TRITON}"] .ie-chip >> nth=0')
    assert page.get_attribute('.ie-stage-btn[data-stage="kernels"]', "aria-selected") == "true"
    assert page.locator(".ie-kdetail .ie-src-line.ie-lit").count() == len(sample["graphs"][1]["kernels"][0]["line_nodes"])
    page.screenshot(path=str(tmp_path / "autotune-to-triton.png"))
    assert page.errors == []


def test_summary_strip_and_search(browser, sample, tmp_path):
    page = open_export(browser, sample, tmp_path)
    summary = page.locator(".ie-summary")
    assert summary.locator(".ie-sum-graphs strong").inner_text() == "2"
    kernels = [k for g in sample["graphs"] for k in g["kernels"]]
    assert summary.locator(".ie-sum-kernels strong").inner_text() == str(len(kernels)) == "4"  # as the tabs count
    assert summary.locator(".ie-sum-externs strong").inner_text() == "2"
    assert "of them extern calls" in summary.locator(".ie-sum-externs").inner_text()
    tab = page.locator('.ie-stage-btn[data-stage="kernels"]')
    assert tab.locator(".ie-count").inner_text() == str(len(sample["graphs"][0]["kernels"]))
    assert tab.get_attribute("title") == "Kernels in the graph shown"
    assert summary.locator(".ie-sum-time strong").inner_text() == "3.21 s"
    assert summary.locator(".ie-sum-toggles .ie-badge").all_inner_texts() == ["deterministic=true", "max_autotune=true"]
    page.fill(".ie-search", "soft")
    settle(page)
    assert page.locator(".ie-search-info").inner_text() == "1 match"
    assert page.locator("g.ie-node.ie-match").evaluate_all("els => els.map(e => e.dataset.name)") == ["softmax"]


def test_markup_in_a_trace_stays_text(browser, sample, tmp_path):
    evil = evil_trace(sample)
    page = open_export(browser, evil, tmp_path, "evil.html")
    kernel = '<img src=x onerror="window.__pwned=1">cpp_fused_0'
    page.locator("g.ie-node", has_text="relu<script>").first.click()
    settle(page)
    for stage in ["post_grad", "loop_ir", "fused", "kernels", "wrapper", "autotune", "fx"]:
        click(page, f'.ie-stage-btn[data-stage="{stage}"]')
    click(page, '.ie-stage-btn[data-stage="kernels"]')
    page.locator(".ie-kitem", has_text="cpp_fused_0").click()
    settle(page)
    page.locator(".ie-kdetail .ie-src-line.ie-has-prov").first.click()
    settle(page)
    page.locator(".ie-side .ie-user-line").first.click()
    settle(page)
    page.wait_for_timeout(300)  # give any injected handler (onerror, onload) the chance to run
    assert page.evaluate("window.__pwned") is None
    assert page.evaluate("document.querySelectorAll('.ie-root img, .ie-root script, .ie-root b').length") == 0
    assert page.evaluate("document.querySelectorAll('.ie-root svg svg').length") == 0
    # ...and the text is shown as written.
    assert page.locator(".ie-summary .ie-fn").inner_text() == "</script><script>window.__pwned=5</script>"
    assert kernel in page.locator(".ie-klist").inner_text()
    assert "/tmp/<img src=x onerror=window.__pwned=3>/model.py" in page.locator(".ie-side .ie-path").all_inner_texts()
    assert page.errors == []


def test_provenance_matches_the_trace_for_every_fx_node(browser, tmp_path):
    traces = [json.loads((FIXTURES / "widget_sample.json").read_text())]
    real = FIXTURES / "cpu_trace.json"
    if real.exists():
        traces.append(json.loads(real.read_text()))
    for i, trace in enumerate(traces):
        page = open_export(browser, trace, tmp_path, f"trace{i}.html")
        for g_index, graph in enumerate(trace["graphs"]):
            got = page.evaluate(
                """async (g) => { const index = await window.inductorExplorer.graphs[g].ensureIndex(); const out = {};
                    for (const n of index.fxNodes) {
                      const links = index.linked({kind: 'fx', id: n.name});
                      out[n.name] = Object.fromEntries([...links.kernelLines].map(([k, v]) => [k, [...v].sort((a, b) => a - b)]));
                    }
                    return out; }""",
                g_index,
            )
            for node in graph["fx"]["nodes"]:
                want = {k: sorted(v) for k, v in expected_kernel_lines(graph, node["name"]).items()}
                assert got[node["name"]] == want, (graph["id"], node["name"])
        page.close()


def test_light_and_dark_schemes_are_readable(browser, sample, tmp_path):
    contrast = """() => {
      const rgb = (c) => c.match(/[\\d.]+/g).slice(0, 3).map(Number);
      const lum = (c) => { const v = rgb(c).map(x => { x /= 255; return x <= 0.03928 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4; });
                           return 0.2126 * v[0] + 0.7152 * v[1] + 0.0722 * v[2]; };
      const ratio = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
      const bg = getComputedStyle(document.querySelector('.ie-root')).backgroundColor;
      const text = getComputedStyle(document.querySelector('g.ie-node text')).fill;
      const label = getComputedStyle(document.querySelector('.ie-stage-btn')).color;
      return {node: ratio(text, bg), label: ratio(label, bg), bg};
    }"""
    for scheme in ["light", "dark"]:
        page = open_export(browser, sample, tmp_path, f"{scheme}.html", color_scheme=scheme)
        result = page.evaluate(contrast)
        assert result["node"] >= 4.5 and result["label"] >= 4.5, (scheme, result)
        page.screenshot(path=str(tmp_path / f"{scheme}.png"))
        page.close()
    assert result["bg"] != "rgb(255, 255, 255)"  # dark really is dark


def test_large_graph_draws_only_what_is_in_view(browser, tmp_path):
    trace = synthetic_trace()
    page = open_export(browser, trace, tmp_path, "large.html")
    root = page.locator(".ie-root")
    page.wait_for_selector(".ie-root[data-painted-at]")
    drawn = page.locator("g.ie-node").count()
    assert 0 < drawn < 300
    assert float(root.get_attribute("data-mount-ms")) < 2000
    # Big graphs start by module: closed modules are boxes with a count, and a click opens one.
    assert "drawn (modules closed)" in page.locator(".ie-graph-info").inner_text()
    click(page, '.ie-graph-toolbar button[title="fit the whole graph"]')
    boxes = page.locator("g.ie-node.ie-op-module")
    assert boxes.count() > 0
    box = boxes.first.get_attribute("data-name")
    path = box.removeprefix("module:")
    target = page.locator(f'g.ie-node[data-name="{box}"]')
    target.dispatch_event("pointerdown", {"button": 0, "pointerId": 1, "bubbles": True})
    target.dispatch_event("pointerup", {"button": 0, "pointerId": 1, "bubbles": True})
    settle(page)
    assert page.locator(f'g.ie-node[data-name="{box}"]').count() == 0
    members = [n["name"] for n in trace["graphs"][0]["fx"]["nodes"] if (n.get("module") or "").startswith(path)]
    page.locator(f'g.ie-node[data-name="{members[0]}"]').wait_for()
    page.fill(".ie-search", "l45_fc2")
    assert page.locator('g.ie-node.ie-match[data-name="l45_fc2"]').count() == 1
    click(page, 'g.ie-node[data-name="l45_fc2"]')
    assert page.locator(".ie-side [data-section=kernels] .ie-chip").all_inner_texts() == ["extern_kernels.mm:727"]


def test_kernels_table_sorts_by_profiled_time_and_filters(browser, tmp_path):
    trace = json.loads((FIXTURES / "gpu_profile.json").read_text())
    page = open_export(browser, trace, tmp_path, "profile.html")
    click(page, '.ie-stage-btn[data-stage="kernels"]')
    time_head = '.ie-khead[data-col="time"]'
    click(page, time_head)  # a time column sorts slowest first
    assert page.get_attribute(time_head, "aria-sort") == "descending"
    ms = [float(m) for m in page.locator(".ie-kitem .ie-kcol-time[data-ms]").evaluate_all("els => els.map(e => e.dataset.ms)")]
    assert len(ms) > 1 and ms == sorted(ms, reverse=True)
    first = page.locator(".ie-kitem >> nth=0").get_attribute("data-id")
    page.fill(".ie-kfilter", first)
    settle(page)
    ids = page.locator(".ie-kitem").evaluate_all("els => els.map(e => e.dataset.id)")
    assert ids and all(first in i for i in ids)
    assert page.errors == []


def test_post_grad_nodes_heat_by_profiled_time(browser, tmp_path):
    trace = json.loads((FIXTURES / "gpu_profile.json").read_text())
    page = open_export(browser, trace, tmp_path, "heat.html")
    click(page, '.ie-stage-btn[data-stage="post_grad"]')
    control = '.ie-main [data-stage="post_grad"] .ie-colour-by'
    page.select_option(control, "time")
    settle(page)
    heated = page.locator('.ie-main [data-stage="post_grad"] .ie-heat[data-heat]')
    assert heated.count() > 0
    post_grad_ms = trace["profiles"][-1]["post_grad_ms"]["g0"]
    shown = {g.get_attribute("data-name"): float(g.get_attribute("data-heat")) for g in heated.all()}
    assert all(ms == pytest.approx(post_grad_ms[name]) for name, ms in shown.items()), shown
    assert page.locator('.ie-main [data-stage="post_grad"] .ie-legend[data-heat-kind="time"]').count() == 1
    # every node's text reads on its heat (WCAG AA, 4.5:1), the hottest red included (found to draw it)
    hottest = max(post_grad_ms, key=post_grad_ms.get)
    page.fill('.ie-main [data-stage="post_grad"] .ie-search', hottest)
    settle(page)
    contrasts = heated_node_contrasts(page, "post_grad")
    assert hottest in contrasts and all(ratio >= 4.5 for _, ratio in contrasts.values()), contrasts
    page.select_option(control, "none")
    settle(page)
    assert heated.count() == 0
    assert page.errors == []


def test_fx_graph_by_module_counts_nodes_kernels_and_time(browser, tmp_path):
    trace = json.loads((FIXTURES / "gpu_profile.json").read_text())
    page = open_export(browser, trace, tmp_path, "modules.html")
    click(page, '.ie-main [data-stage="fx"] .ie-btn[data-view="modules"]')
    nodes = [n for n in trace["graphs"][0]["fx"]["nodes"] if n["op"] not in ("placeholder", "output")]
    fx_ms = trace["profiles"][-1]["fx_node_ms"]["g0"]
    expected = {}
    for n in nodes:
        path = n.get("module") or "(top level)"
        count, kernels, ms = expected.get(path, (0, set(), 0.0))
        expected[path] = (count + 1, kernels | set(n.get("kernels") or []), ms + fx_ms.get(n["name"], 0.0))
    rows = page.locator(".ie-module-row").all()
    shown = {r.get_attribute("data-module"): r for r in rows}
    assert set(shown) == set(expected)
    for path, row in shown.items():
        cells = row.locator("td").all_inner_texts()
        count, kernels, ms = expected[path]
        assert (int(cells[1]), int(cells[2])) == (count, len(kernels)), path
        if row.locator("td[data-ms]").count():
            assert float(row.locator("td[data-ms]").get_attribute("data-ms")) == pytest.approx(ms), path
    times = [float(r.locator("td[data-ms]").get_attribute("data-ms")) for r in rows if r.locator("td[data-ms]").count()]
    assert times == sorted(times, reverse=True)  # where the time goes, first
    click(page, '.ie-modules th[data-sort="nodes"]')
    counts = [int(t) for t in page.locator(".ie-module-row td:nth-child(2)").all_inner_texts()]
    assert counts == sorted(counts, reverse=True)
    first = next(n["name"] for n in nodes if (n.get("module") or "(top level)") == "qkv")
    click(page, '.ie-module-row[data-module="qkv"]')
    assert first in page.locator(".ie-links-head").first.inner_text()
    assert page.errors == []


def test_side_panel_shows_time_of_selected_kernel(browser, tmp_path):
    trace = json.loads((FIXTURES / "gpu_profile.json").read_text())
    page = open_export(browser, trace, tmp_path, "measure.html")
    click(page, '.ie-stage-btn[data-stage="kernels"]')
    click(page, '.ie-khead[data-col="time"]')
    row = page.locator(".ie-kitem >> nth=0")
    ms = float(row.locator(".ie-kcol-time").get_attribute("data-ms"))
    row.click()
    settle(page)
    text = page.locator(".ie-measure-time").first.inner_text()
    assert "ms per run" in text and f"{ms:.3g}"[:3] in text
    # the heat gutter on the user's lines carries each line's profiled time
    line_ms = {(file, line): ms for file, line, ms in trace["profiles"][-1]["line_ms"]}
    heated = {}
    for line in page.locator(".ie-side .ie-user-line").all():
        gutter = line.locator(".ie-heat-gutter.ie-heat")
        if gutter.count():
            heated[(line.get_attribute("data-file"), int(line.get_attribute("data-line")))] = float(gutter.get_attribute("data-ms"))
    assert heated and all(ms == pytest.approx(line_ms[where]) for where, ms in heated.items()), (heated, line_ms)
    assert page.errors == []


def test_autotune_groups_by_kernel_with_ratio_to_best(browser, tmp_path):
    trace = json.loads((FIXTURES / "gpu_max_autotune.json").read_text())
    page = open_export(browser, trace, tmp_path, "autotune.html")
    click(page, '.ie-stage-btn[data-stage="autotune"]')
    groups = page.locator(".ie-at-group").all()
    assert groups
    for group in groups:
        assert group.locator("tr.ie-chosen").count() == 1
        ratios = [float(t.rstrip("×")) for t in group.locator("td.ie-at-ratio").all_inner_texts() if t != "–"]
        assert ratios and min(ratios) == 1.0
        assert group.locator("th[data-sort^='param:']").count() > 0
    assert page.errors == []


def test_first_divergent_badge_selects_that_kernel(browser, tmp_path):
    import torch

    import explorer
    from tests import workloads

    torch.manual_seed(0)
    c = explorer.compile(workloads.bf16_cancellation, torch.randn(32, 16), torch.randn(16, 64))
    report = c.check_numerics()
    graph, kernel = report.first_divergent.split("/", 1) if "/" in report.first_divergent else (None, report.first_divergent)
    page = open_export(browser, c, tmp_path, "numerics.html")
    badge = page.locator(".ie-first-divergent-btn")
    assert badge.get_attribute("data-kernel") == kernel
    badge.click()
    settle(page)
    assert page.get_attribute('.ie-stage-btn[data-stage="kernels"]', "aria-selected") == "true"
    assert kernel in page.locator(".ie-links-head").first.inner_text()
    assert page.locator(f'.ie-kitem[data-id="{kernel}"] .ie-first-divergent').count() == 1
    # an error outside tolerance is heated; one within tolerance is calm (no heat behind it)
    styles = {k: page.locator(f'.ie-kitem[data-id="{k}"] .ie-kcol-error .ie-num').get_attribute("style") or ""
              for k in (row.kernel for row in report.kernels.values() if row.ok is not None)}
    assert "background" in styles[kernel]
    calm = [k for k, row in ((r.kernel, r) for r in report.kernels.values()) if row.ok is True]
    assert calm and all("background" not in styles[k] for k in calm), styles
    error = page.locator(".ie-side .ie-measure-error").first
    assert "ie-err-diverges" in error.get_attribute("class") and "outside tolerance" in error.inner_text()
    assert f"max rel {report.kernels[report.first_divergent].max_rel:.2e}".replace("e-0", "e-") in error.inner_text()
    # post-grad nodes coloured by the error of the kernel computing them
    click(page, '.ie-stage-btn[data-stage="post_grad"]')
    page.select_option('.ie-main [data-stage="post_grad"] .ie-colour-by', "error")
    settle(page)
    heated = page.locator('.ie-main [data-stage="post_grad"] .ie-heat[data-heat]').all()
    shown = {g.get_attribute("data-name"): float(g.get_attribute("data-heat")) for g in heated}
    assert shown and shown == pytest.approx(report.post_grad_error["g0"]), shown
    assert page.errors == []


def test_an_error_only_carried_in_is_marked_propagated_and_left_calm(browser, tmp_path):
    import torch

    import explorer
    from tests import workloads

    torch.manual_seed(0)
    args = ((torch.rand(32, 64) + 1).bfloat16(), torch.randn(64, 48).bfloat16())
    c = explorer.compile(workloads.bf16_amplified_then_cancelled, *args)
    report = c.check_numerics()
    (mm,) = [k.id for k in c.kernels if k.language == "extern"]
    cancel = report.first_divergent
    assert report.kernels[mm].ok is False and report.kernels[cancel].divergence.value == "local"
    page = open_export(browser, c, tmp_path, "local.html")
    assert page.locator(".ie-first-divergent-btn").get_attribute("data-kernel") == cancel
    click(page, '.ie-stage-btn[data-stage="kernels"]')
    cell = {k: page.locator(f'.ie-kitem[data-id="{k}"] .ie-kcol-error') for k in (mm, cancel)}
    assert cell[mm].get_attribute("data-divergence") == "propagated" and "prop." in cell[mm].inner_text()
    assert cell[cancel].get_attribute("data-divergence") == "local" and "local" in cell[cancel].inner_text()
    # the kernel that made the error is heated; the matmul that only carried it in is not
    assert "background" in (cell[cancel].locator(".ie-num").get_attribute("style") or "")
    assert "background" not in (cell[mm].locator(".ie-num").get_attribute("style") or "")
    click(page, f'.ie-kitem[data-id="{mm}"]')
    assert "max rel 0 · max abs 0 · within tolerance" in page.locator(".ie-side .ie-measure-local").first.inner_text()
    assert "(propagated)" in page.locator(".ie-side .ie-measure-divergence").first.inner_text()
    # with no kernel whose own error leaves tolerance, the strip names where the accumulated error does
    calm = explorer.compile(workloads.bf16_rounding_amplified, *args)
    assert calm.check_numerics().first_divergent is None
    page = open_export(browser, calm, tmp_path, "accumulated.html")
    assert page.locator(".ie-first-divergent-btn").count() == 0 and page.locator(".ie-numerics-ok").count() == 0
    badge = page.locator(".ie-accumulated-btn")
    assert badge.get_attribute("data-kernel") == mm and "no kernel's own error leaves tolerance" in badge.inner_text()
    badge.click()
    settle(page)
    assert mm in page.locator(".ie-links-head").first.inner_text()
    assert page.errors == []


def test_kernel_detail_shows_launch_facts_as_a_table_and_folds_the_rest(browser, tmp_path):
    trace = json.loads((FIXTURES / "gpu_transformer.json").read_text())
    kernel = next(k for k in trace["graphs"][0]["kernels"] if k["language"] == "triton")
    page = open_export(browser, trace, tmp_path, "facts.html")
    click(page, '.ie-stage-btn[data-stage="kernels"]')
    click(page, f'.ie-kitem[data-id="{kernel["id"]}"]')
    settle(page)
    facts = dict(page.locator(".ie-kdetail .ie-kfacts tr").evaluate_all(
        "rows => rows.map(r => [r.dataset.fact, r.querySelector('td').textContent])"))
    meta = kernel["meta"]
    assert facts["num_warps"] == str(meta["num_warps"]) and facts["registers"] == str(meta["registers"])
    assert facts["grid"] == " x ".join(str(g) for g in meta["grid"]) and facts["heuristic"] == meta["heuristic"]
    assert all(facts[name] == str(size) for name, size in meta["config"].items())  # block sizes, one row each
    raw = page.locator(".ie-kdetail details.ie-kraw")
    assert raw.count() == 1 and raw.get_attribute("open") is None  # folded
    assert "stack_traces" in raw.locator("pre").text_content() and "stack_traces" not in facts
    assert page.errors == []


@pytest.mark.parametrize("width", [360, 420])
def test_narrow_pages_never_scroll_sideways(browser, tmp_path, width):
    """Down to 360 px the panes stack and wide tables and code scroll inside their stage; the page itself
    never scrolls sideways, whatever stage is open (a profiled trace adds the widest controls)."""
    trace = json.loads((FIXTURES / "gpu_profile.json").read_text())
    path = widgets.write_html(trace, tmp_path / f"narrow{width}.html")
    page = browser.new_page(viewport={"width": width, "height": 800})
    page.goto(path.as_uri())
    page.wait_for_selector(".ie-root[data-painted-at]", timeout=60_000)
    overflow = {}
    for stage in [None, *page.locator(".ie-stage-btn").evaluate_all("els => els.map(e => e.dataset.stage)")]:
        if stage:
            page.click(f'.ie-stage-btn[data-stage="{stage}"]')
            settle(page)
        overflow[stage] = page.evaluate("() => document.scrollingElement.scrollWidth - document.documentElement.clientWidth")
    assert page.locator(".ie-root.ie-narrow").count() == 1
    assert all(px <= 0 for px in overflow.values()), overflow
    page.close()


def test_a_large_graph_is_drawn_from_its_outline_then_gains_its_full_part(browser, tmp_path):
    """Past OUTLINE_MIN_NODES (app.js) the first drawing reads the graph's outline; the full part comes
    behind the first frame, and the drawn nodes, the code and the modules table then read it."""
    trace = synthetic_trace(80)
    path = widgets.write_html(trace, tmp_path / "outline.html")
    page = browser.new_page(viewport={"width": 1300, "height": 820})
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.add_init_script("globalThis.inductorExplorerMarks = true")
    page.goto(path.as_uri())
    page.wait_for_selector(".ie-root[data-painted-at]", timeout=30_000)
    page.wait_for_selector('.ie-root[data-pending="0"]', timeout=30_000)
    marks = page.evaluate("() => performance.getEntriesByType('mark').map((m) => m.name)")
    order = [m for m in marks if m in ("ie:request g0/fx_outline", "ie:first frame", "ie:request g0/fx")]
    assert order == ["ie:request g0/fx_outline", "ie:first frame", "ie:request g0/fx"]
    assert "ie:request g0/post_grad_outline" not in marks  # only the stage on screen has its outline read
    # the drawn nodes now carry every field: their tooltips show their args
    tips = dict(page.evaluate("""() => [...document.querySelectorAll('g.ie-node:not(.ie-op-module)')]
        .map((g) => [g.dataset.name, g.querySelector('title').textContent])"""))
    args = {n["name"]: n["args"] for n in trace["graphs"][0]["fx"]["nodes"]}
    assert len(tips) > 10 and all(args[name] in tip for name, tip in tips.items())
    click(page, '.ie-stage[data-stage="fx"] .ie-btn[data-view="code"]')
    assert "def forward" in page.locator(".ie-code-box").inner_text()
    click(page, '.ie-stage[data-stage="fx"] .ie-btn[data-view="modules"]')
    assert page.locator(".ie-modules-box").inner_text().count("layers.") > 10
    # the post-grad part came with the provenance index: that stage is drawn from it, no outline asked for
    click(page, '.ie-stage-btn[data-stage="post_grad"]')
    page.wait_for_selector('.ie-stage[data-stage="post_grad"] g.ie-node')
    assert not page.evaluate("() => performance.getEntriesByType('mark').some((m) => m.name === 'ie:request g0/post_grad_outline')")
    assert "drawn (modules closed)" in page.locator('.ie-stage[data-stage="post_grad"] .ie-graph-info').inner_text()
    page.fill('.ie-stage[data-stage="post_grad"] .ie-search', "mm_45_fc2")
    click(page, 'g.ie-node[data-name="mm_45_fc2"]')
    assert page.locator(".ie-side [data-section=kernels] .ie-chip").all_inner_texts() == ["extern_kernels.mm:727"]
    assert errors == []
    page.close()
