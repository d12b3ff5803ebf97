"""The Memory stage, the Triton IR view and the wrapper's FX graph in headless Chromium (static export).

Traces recorded on a GPU (tests/fixtures/gpu_transformer.json: a memory timeline, a wrapper FX graph
and the IR stages of its Triton kernels); what each view must show is read from the same trace.
"""

from __future__ import annotations

import copy
import json
import re

import pytest

from tests.browser.test_widgets_static_browser import click, open_export, settle
from tests.paths import FIXTURES

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def transformer() -> dict:
    return json.loads((FIXTURES / "gpu_transformer.json").read_text())


def selection_label(page) -> str:
    return page.locator(".ie-side .ie-selection-label").inner_text()


def plot_geometry(page) -> dict:
    return page.evaluate(
        """() => { const svg = document.querySelector('.ie-mem-svg'); const box = svg.getBoundingClientRect();
                   return {left: box.left, top: box.top, steps: Number(svg.dataset.steps), x0: Number(svg.dataset.x0),
                           w: Number(svg.dataset.stepWidth), live: svg.querySelector('.ie-mem-live').getAttribute('d'),
                           peak: svg.querySelector('.ie-mem-peak-area').getAttribute('d')}; }"""
    )


def click_step(page, geo, index):
    page.mouse.click(geo["left"] + geo["x0"] + (index + 0.5) * geo["w"], geo["top"] + 100)
    settle(page)


def test_memory_plot_draws_every_step_and_marks_the_peak(browser, transformer, tmp_path):
    memory = transformer["graphs"][0]["memory"]
    page = open_export(browser, transformer, tmp_path)
    click(page, '.ie-stage-btn[data-stage="memory"]')
    assert page.locator('.ie-stage-btn[data-stage="memory"] .ie-count').inner_text() == str(len(memory["steps"]))
    geo = plot_geometry(page)
    n = len(memory["steps"])
    assert geo["steps"] == n
    # one horizontal run per step in each series
    assert geo["live"].count("H") == n and geo["peak"].count("H") == n
    live_y = [float(v) for v in re.findall(r"(?:,|V)(-?[\d.]+) H", geo["live"])]
    # live bytes go down where a step frees more than it allocates (higher bytes = smaller y)
    for i in range(1, n):
        a, b = memory["steps"][i - 1]["live_bytes"], memory["steps"][i]["live_bytes"]
        assert (live_y[i] < live_y[i - 1]) == (b > a) and (live_y[i] == live_y[i - 1]) == (b == a)
    mark = page.locator(".ie-mem-peak-mark")
    assert mark.get_attribute("data-step") == str(memory["peak_step"])
    cx = float(mark.get_attribute("cx"))
    assert geo["x0"] + memory["peak_step"] * geo["w"] < cx < geo["x0"] + (memory["peak_step"] + 1) * geo["w"]
    peak_ys = [float(v) for v in re.findall(r"V(-?[\d.]+) H", geo["peak"])]
    assert abs(float(mark.get_attribute("cy")) - min(peak_ys)) < 0.2  # the marker sits on the highest step
    # reference lines: Inductor's estimate and the measured peak, at their own heights
    assert int(page.get_attribute(".ie-mem-estimate", "data-bytes")) == memory["estimate"]["peak_bytes"]
    assert int(page.get_attribute(".ie-mem-measured", "data-bytes")) == memory["measured"]["peak_bytes"]
    est_y = float(page.locator(".ie-mem-estimate line").get_attribute("y1"))
    assert est_y < float(mark.get_attribute("cy"))  # the estimate (8 MiB) is above the planned 6 MiB peak
    chips = page.locator(".ie-mem-at-peak .ie-mem-buffer-chip").all_inner_texts()
    assert chips == memory["at_peak"]
    # a buffer living in another's storage brings no bytes of its own: the table says so instead of "0 B"
    shared = next(b for b in memory["buffers"] if b["bytes"] == 0 and b["storage"] != b["name"])
    assert page.locator(f'.ie-mem-buffer[data-buffer="{shared["name"]}"] .ie-num').inner_text() == "shared"
    assert "null" not in page.locator(".ie-memory-stage").inner_text()  # absent notes leave nothing behind
    page.screenshot(path=str(tmp_path / "memory.png"))
    # a narrower pane redraws the plot to its width, and steps still map to the pointer
    width = float(page.get_attribute(".ie-mem-svg", "width"))
    page.set_viewport_size({"width": 1000, "height": 820})
    page.wait_for_function(f"Number(document.querySelector('.ie-mem-svg').getAttribute('width')) < {width - 100}")
    narrow = plot_geometry(page)
    assert narrow["steps"] == n and narrow["w"] < geo["w"]
    click_step(page, narrow, memory["peak_step"])
    assert selection_label(page) == f"kernel {memory['steps'][memory['peak_step']]['kernel']}"
    assert page.errors == []


def test_memory_step_click_selects_its_kernel_and_buffer_click_shows_its_range(browser, transformer, tmp_path):
    graph = transformer["graphs"][0]
    memory = graph["memory"]
    page = open_export(browser, transformer, tmp_path)
    click(page, '.ie-stage-btn[data-stage="memory"]')
    geo = plot_geometry(page)
    for index in (memory["peak_step"], 0):  # an extern call and a Triton kernel
        step = memory["steps"][index]
        click_step(page, geo, index)
        assert selection_label(page) == f"kernel {step['kernel']}"
        assert page.get_attribute(".ie-mem-sel", "data-steps") == str(index)
        assert page.locator(".ie-mem-readout").get_attribute("data-step") == str(index)
        # the buffers the step allocates are lit in the table
        lit = page.locator(".ie-mem-buffer.ie-lit").evaluate_all("els => els.map(e => e.dataset.buffer)")
        assert lit == step["allocated"]
    # the same kernel, selected in the Kernels stage
    click(page, '.ie-stage-btn[data-stage="kernels"]')
    assert page.locator(f'.ie-kitem.ie-selected[data-id="{memory["steps"][0]["kernel"]}"]').count() == 1
    click(page, '.ie-stage-btn[data-stage="memory"]')
    # a buffer's live range: from its allocating step through its freeing step
    buffer = next(b for b in memory["buffers"] if b["kind"] == "reuse" and b["free_step"] is not None)
    click(page, f'.ie-mem-buffer[data-buffer="{buffer["name"]}"]')
    rng = page.locator(f'.ie-mem-range[data-buffer="{buffer["name"]}"]')
    x, width = float(rng.get_attribute("x")), float(rng.get_attribute("width"))
    assert abs(x - (geo["x0"] + buffer["alloc_step"] * geo["w"])) < 0.5
    assert abs(x + width - (geo["x0"] + (buffer["free_step"] + 1) * geo["w"])) < 0.5
    assert page.locator(f'.ie-mem-buffer.ie-selected[data-buffer="{buffer["name"]}"]').count() == 1
    # an output is live to the end
    out = next(b for b in memory["buffers"] if b["output"])
    click(page, f'.ie-mem-at-peak .ie-mem-buffer-chip[data-buffer="{memory["at_peak"][0]}"]')
    click(page, f'.ie-mem-buffer[data-buffer="{out["name"]}"]')
    rng = page.locator(f'.ie-mem-range[data-buffer="{out["name"]}"]')
    assert abs(float(rng.get_attribute("x")) + float(rng.get_attribute("width")) - (geo["x0"] + geo["steps"] * geo["w"])) < 0.5
    assert page.locator(".ie-mem-range").count() == 1
    # a step number in the table selects that step's kernel
    click(page, f'.ie-mem-buffer[data-buffer="{buffer["name"]}"] .ie-link-btn[data-step="{buffer["alloc_step"]}"]')
    assert selection_label(page) == f"kernel {memory['steps'][buffer['alloc_step']]['kernel']}"
    assert page.errors == []


def test_memory_stage_says_when_a_graph_has_no_timeline(browser, tmp_path):
    sample = json.loads((FIXTURES / "widget_sample.json").read_text())
    assert all("memory" not in g for g in sample["graphs"])
    page = open_export(browser, sample, tmp_path)
    click(page, '.ie-stage-btn[data-stage="memory"]')
    assert "No memory timeline" in page.locator(".ie-main .ie-mem-none").inner_text()
    assert page.locator(".ie-mem-svg").count() == 0
    assert page.errors == []


def ir_rows(page) -> dict[int, tuple[str, bool]]:
    """Built rows of the open IR stage: line -> (text, lit)."""
    rows = page.locator(".ie-ir-lines .ie-ir-line").evaluate_all(
        "els => els.map(e => [Number(e.dataset.line), e.querySelector('.ie-code-text').textContent, e.classList.contains('ie-lit')])"
    )
    return {n: (text, lit) for n, text, lit in rows}


def test_ir_tab_shows_ptx_and_lines_link_both_ways(browser, transformer, tmp_path):
    kernel = next(k for k in transformer["graphs"][0]["kernels"] if k["id"] == "triton_poi_fused_addmm_gelu_view_2")
    ir = kernel["ir"]
    ptx = ir["stages"]["ptx"].split("\n")
    line_map = ir["line_map"]["ptx"]
    page = open_export(browser, transformer, tmp_path)
    click(page, '.ie-stage-btn[data-stage="kernels"]')
    click(page, f'.ie-kitem[data-id="{kernel["id"]}"]')
    tabs = page.locator(".ie-ir-tab").evaluate_all("els => els.map(e => e.dataset.irStage)")
    assert tabs == list(ir["stages"])
    assert page.locator(".ie-ir-lines").count() == 0  # nothing drawn before a tab is opened
    assert page.locator(".ie-ir-meta-registers strong").inner_text() == str(ir["meta"]["registers"])
    assert page.locator(".ie-ir-meta-num_warps strong").inner_text() == str(ir["meta"]["num_warps"])
    assert page.locator(".ie-ir-notes").inner_text() == "\n".join(ir["notes"])
    click(page, '.ie-ir-tab[data-ir-stage="ptx"]')
    rows = ir_rows(page)
    assert 0 < len(rows) < len(ptx)  # a virtual list: only rows near the view are built
    assert all(rows[n][0] == ptx[n - 1] for n in rows)

    # IR line -> kernel source line (and on to its post-grad nodes)
    target = next(i + 1 for i, line in enumerate(line_map) if i + 1 in rows and str(line) in kernel["line_nodes"])
    source_line = line_map[target - 1]
    click(page, f'.ie-ir-line[data-line="{target}"]')
    assert selection_label(page) == f"line {source_line} of {kernel['id']}"
    source = page.locator(f'.ie-ksource > pre.ie-code .ie-src-line[data-line="{source_line}"]')
    assert "ie-selected" in source.get_attribute("class").split()
    assert page.locator(".ie-side [data-section=post_grad] .ie-chip").all_inner_texts() == kernel["line_nodes"][str(source_line)]
    rows = ir_rows(page)
    assert {n for n, (_, lit) in rows.items() if lit} == {n for n in rows if line_map[n - 1] == source_line}
    assert "ie-selected" in page.get_attribute(f'.ie-ir-line[data-line="{target}"]', "class").split()

    # kernel source line -> the PTX lines made from it
    other = next(int(n) for n in sorted(kernel["line_nodes"], key=int) if int(n) != source_line and int(n) in line_map)
    click(page, f'.ie-ksource > pre.ie-code .ie-src-line[data-line="{other}"]')
    want = {i + 1 for i, line in enumerate(line_map) if line == other}
    rows = ir_rows(page)
    lit = {n for n, (_, is_lit) in rows.items() if is_lit}
    assert lit and lit == want & set(rows)
    assert min(want) in rows  # scrolled to the first of them
    page.screenshot(path=str(tmp_path / "ir-ptx.png"))
    assert page.errors == []


def test_kernels_without_ir_say_why(browser, tmp_path):
    sample = json.loads((FIXTURES / "widget_sample.json").read_text())
    triton = sample["graphs"][1]["kernels"][0]
    assert triton["language"] == "triton" and "ir" not in triton
    page = open_export(browser, sample, tmp_path)
    page.select_option(".ie-graph-picker", label="g1 · backward · Dynamo graph 0")
    settle(page)
    click(page, '.ie-stage-btn[data-stage="kernels"]')
    click(page, f'.ie-kitem[data-id="{triton["id"]}"]')
    assert "No Triton IR in this trace" in page.locator(".ie-kdetail .ie-ir-none").inner_text()
    cpp = sample["graphs"][0]["kernels"][1]
    page.select_option(".ie-graph-picker", label="g0 · forward · Dynamo graph 0")
    settle(page)
    click(page, f'.ie-kitem[data-id="{cpp["id"]}"]')
    assert page.locator(".ie-kdetail .ie-ir").count() == 0
    assert page.errors == []


def test_wrapper_fx_graph_links_kernel_nodes_to_kernels(browser, transformer, tmp_path):
    fx = transformer["graphs"][0]["wrapper"]["fx"]
    page = open_export(browser, transformer, tmp_path)
    click(page, '.ie-stage-btn[data-stage="wrapper"]')
    assert page.locator('[data-stage="wrapper"] .ie-code-virtual, [data-stage="wrapper"] pre.ie-code').first.is_visible()
    click(page, '.ie-wrapper-fx-stage button[data-view="graph"]')
    page.wait_for_selector('svg[data-graph-kind="wrapper"] g.ie-node')
    click(page, '.ie-wrapper-graph button[title="fit the whole graph"]')  # draws every node
    for kind in ("kernel", "extern", "alloc"):
        drawn = page.locator(f'svg[data-graph-kind="wrapper"] g.ie-node.ie-op-{kind}').evaluate_all("els => els.map(e => e.dataset.name)")
        assert sorted(drawn) == sorted(n["name"] for n in fx["nodes"] if n["kind"] == kind)
    node = next(n for n in fx["nodes"] if n["kind"] == "kernel")
    g = page.locator(f'svg[data-graph-kind="wrapper"] g.ie-node[data-name="{node["name"]}"]')
    g.dispatch_event("pointerdown", {"button": 0, "pointerId": 1, "bubbles": True})
    g.dispatch_event("pointerup", {"button": 0, "pointerId": 1, "bubbles": True})
    settle(page)
    assert selection_label(page) == f"kernel {node['kernel']}"
    assert "ie-selected" in g.get_attribute("class").split()
    # selecting an extern kernel elsewhere lights its node here
    extern = next(n for n in fx["nodes"] if n["kind"] == "extern" and n["kernel"])
    page.locator(f'.ie-side .ie-chip[data-kind="kernel"][data-id="{node["kernel"]}"]').first.click()
    settle(page)
    click(page, f'.ie-kitem[data-id="{extern["kernel"]}"]')
    click(page, '.ie-stage-btn[data-stage="wrapper"]')
    assert "ie-selected" in page.get_attribute(f'svg[data-graph-kind="wrapper"] g.ie-node[data-name="{extern["name"]}"]', "class").split()
    page.screenshot(path=str(tmp_path / "wrapper-graph.png"))
    click(page, '.ie-wrapper-fx-stage button[data-view="code"]')
    assert page.locator('svg[data-graph-kind="wrapper"]').is_hidden()
    assert page.errors == []


def test_wrapper_without_fx_graph_shows_the_reason(browser, transformer, tmp_path):
    trace = copy.deepcopy(transformer)
    trace["graphs"][0]["wrapper"]["fx"] = {"status": "unsupported", "reason": "NotImplementedError: cpp wrapper", "nodes": []}
    page = open_export(browser, trace, tmp_path)
    click(page, '.ie-stage-btn[data-stage="wrapper"]')
    assert page.locator(".ie-wrapper-fx-note").inner_text() == "No FX graph of the wrapper (unsupported: NotImplementedError: cpp wrapper)."
    assert page.locator('.ie-main button[data-view="graph"]').count() == 0
    assert page.errors == []


def test_memory_stage_stays_small_on_a_long_timeline(browser, tmp_path):
    """50,000 steps and buffers: one path per series, a few dozen table rows, and steps still link."""
    sample = json.loads((FIXTURES / "widget_sample.json").read_text())
    graph = sample["graphs"][0]
    kernels = [k["id"] for k in graph["kernels"]]
    n = 50_000
    steps = [{"index": i, "call": "call", "kernel": kernels[i % len(kernels)], "wrapper_line": 10 + i,
              "allocated": [f"buf{i}"], "freed": [f"buf{i - 1}"] if i else [],
              "peak_bytes": 1024 * (1 + i % 97), "live_bytes": 512 * (1 + i % 97)} for i in range(n)]
    buffers = [{"name": f"buf{i}", "bytes": 1024, "dtype": "torch.float32", "shape": [256], "kind": "alloc",
                "alloc_step": i, "free_step": i + 1 if i + 1 < n else None, "storage": f"buf{i}",
                "reuses": None, "reused_by": None, "output": i + 1 == n} for i in range(n)]
    peak_step = max(range(n), key=lambda i: steps[i]["peak_bytes"])
    graph["memory"] = {"steps": steps, "buffers": buffers, "peak_bytes": steps[peak_step]["peak_bytes"],
                       "peak_step": peak_step, "at_peak": [f"buf{peak_step}"], "input_bytes": 0,
                       "output_bytes": 1024, "estimate": None, "measured": None, "mismatches": [], "notes": []}
    page = open_export(browser, sample, tmp_path)
    click(page, '.ie-stage-btn[data-stage="memory"]')
    geo = plot_geometry(page)
    assert geo["steps"] == n and geo["live"].count("H") == n
    assert page.locator(".ie-mem-svg path").count() == 4  # lit, selected, peak area, live: no element per step
    assert 0 < page.locator(".ie-mem-buffer").count() < 80
    index = n - 3
    click_step(page, geo, index)
    step_at = int(page.locator(".ie-mem-readout").get_attribute("data-step") or -1)
    assert abs(step_at - index) <= 1  # 50,000 steps in ~700 px: a pixel spans several of them
    assert selection_label(page) == f"kernel {steps[step_at]['kernel']}"
    # a chip of the buffers at the peak scrolls the virtual table to its row
    click(page, f'.ie-mem-at-peak .ie-mem-buffer-chip[data-buffer="buf{peak_step}"]')
    assert page.locator(f'.ie-mem-buffer.ie-selected[data-buffer="buf{peak_step}"]').count() == 1
    assert page.errors == []


def test_ir_without_text_shows_resources_and_notes_and_cut_stages_say_so(browser, tmp_path):
    trace = json.loads((FIXTURES / "gpu_block_ptr.json").read_text())
    kernel = next(k for k in trace["graphs"][0]["kernels"] if k.get("ir"))
    kernel["ir"]["stages"] = {}  # as a kernel recorded from a cache entry that held only the binary has
    kernel["ir"]["notes"] = ["the cache entry held only the binary"]
    kernel["ir"]["meta"]["num_warps"] = None  # and no launch metadata
    page = open_export(browser, trace, tmp_path)
    click(page, '.ie-stage-btn[data-stage="kernels"]')
    click(page, f'.ie-kitem[data-id="{kernel["id"]}"]')
    assert page.locator(".ie-ir-tab").count() == 0
    assert "no IR text" in page.locator(".ie-ir-body").inner_text()
    assert page.locator(".ie-ir-meta-registers strong").inner_text() == str(kernel["ir"]["meta"]["registers"])
    assert page.locator(".ie-ir-meta-num_warps").count() == 0  # null resources are left out, not shown as "null"
    assert page.locator(".ie-ir-notes").inner_text() == "\n".join(kernel["ir"]["notes"])
    assert page.errors == []

    transformer = json.loads((FIXTURES / "gpu_transformer.json").read_text())
    kernel = next(k for k in transformer["graphs"][0]["kernels"] if k.get("ir"))
    full = kernel["ir"]["stages"]["ptx"]
    kernel["ir"]["stages"]["ptx"] = full[:2000]
    kernel["ir"]["truncated"] = {"ptx": len(full)}
    page = open_export(browser, transformer, tmp_path, name="cut.html")
    click(page, '.ie-stage-btn[data-stage="kernels"]')
    click(page, f'.ie-kitem[data-id="{kernel["id"]}"]')
    tab = page.locator('.ie-ir-tab[data-ir-stage="ptx"]')
    assert tab.inner_text() == "PTX (cut)" and f"{len(full):,}" in tab.get_attribute("title")
    assert page.locator('.ie-ir-tab[data-ir-stage="ttir"]').inner_text() == "TTIR"
    assert page.errors == []
