"""`%%compile --export --dynamic` and `%explorer panel` in a real JupyterLab, driven by headless Chromium.

One notebook: a cell exported with a dynamic batch and compiled with AOTInductor, the side panel opened
on it, then a JIT compile of the same code that the panel follows, and a cell that prints what the
kernel holds (the exported graph, the wrapper's language). The live widget reads the Export stage
through the kernel's comm, not from an embedded trace as the static page does
(test_widgets_export_browser.py), so both paths are checked against the same record.
"""

from __future__ import annotations

import json

import pytest

from tests.jupyterlab import cell_output, lab_server, notebook_page, run_cell, settle, wait_idle, write_notebook

pytestmark = pytest.mark.browser

CODE = "h = torch.relu(x @ w)\nout = h.sum(-1) * 2"
CELLS = [
    "%load_ext explorer\nimport torch\ntorch.manual_seed(0)\nx, w = torch.randn(8, 16), torch.randn(16, 4)",
    f"%%compile --export --dynamic --name aot\n{CODE}",
    "%explorer panel",
    f"%%compile --name jit\n{CODE}",
    "import json\ng = aot.graphs[0]\nprint('KERNEL ' + json.dumps({'graph': aot.export.graph, 'language': g.wrapper.language,"
    " 'inputs': [[s['kind'], s['name']] for s in aot.export.inputs],"
    " 'ranges': {k: list(v) for k, v in aot.export.range_constraints.items()}}))",
]
EXPORT_BTN = '.ie-stage-btn[data-stage="export"]'
PANEL = "#jp-right-stack .ie-root"


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("export-lab")
    notebooks = tmp / "notebooks"
    notebooks.mkdir()
    write_notebook(notebooks / "export.ipynb", CELLS)
    with lab_server(notebooks, tmp) as url, notebook_page(url, "export.ipynb") as page:
        page.errors = []
        page.on("pageerror", lambda error: page.errors.append(str(error)))
        run_cell(page, 0)
        wait_idle(page)
        run_cell(page, 1)  # an AOT compile: the C++ wrapper's build takes most of it
        page.locator(".jp-Cell").nth(1).locator(f".ie-root {EXPORT_BTN}").wait_for(timeout=240_000)
        wait_idle(page)
        run_cell(page, 4)
        page.wait_for_function("() => document.querySelectorAll('.jp-Cell')[4].innerText.includes('KERNEL ')", timeout=30_000)
        page.kernel = json.loads(cell_output(page, 4).split("KERNEL ", 1)[1].strip())
        yield page


def open_export(root) -> None:
    root.locator(EXPORT_BTN).click()
    root.locator(".ie-exp-graph").wait_for(timeout=30_000)


def test_the_export_cell_shows_its_signature_dynamic_batch_and_graph(page, tmp_path):
    kernel = page.kernel
    assert kernel["language"] == "cpp"
    cell = page.locator(".jp-Cell").nth(1).locator(".ie-root")
    assert cell.locator(".ie-fn").inner_text() == "aot"
    open_export(cell)
    settle(page)
    shown = cell.locator(".ie-exp-inputs .ie-exp-spec").evaluate_all("rows => rows.map(r => [r.dataset.kind, r.dataset.name])")
    assert shown == kernel["inputs"]
    # the cell's two tensor inputs, named as the cell names them
    assert sorted(name for kind, name in shown if kind == "USER_INPUT") == ["w", "x"], shown
    ranges = cell.locator(".ie-exp-range").evaluate_all(
        "rows => rows.map(r => [r.dataset.symbol, ...Array.from(r.cells).slice(1).map(c => c.textContent)])")
    assert ranges == [[sym, str(lo), str(hi)] for sym, (lo, hi) in kernel["ranges"].items()]
    assert ranges and ranges[0][1] == "2"  # Dim.AUTO on dim 0: any batch from 2 up
    graph = cell.locator(".ie-exp-graph").inner_text().strip()
    assert graph and graph == kernel["graph"].strip()
    page.screenshot(path=str(tmp_path / "export-cell.png"))
    assert page.errors == []


def test_the_side_panel_shows_the_aot_compilation_then_follows_a_jit_one(page, tmp_path):
    run_cell(page, 2)
    panel = page.locator(PANEL)
    panel.locator(EXPORT_BTN).wait_for(timeout=60_000)
    assert panel.locator(".ie-fn").inner_text() == "aot"
    # the Wrapper tab holds the package's C++ wrapper
    panel.locator('.ie-stage-btn[data-stage="wrapper"]').click()
    panel.locator(".ie-wrapper-stage .ie-code").first.wait_for(timeout=30_000)
    wrapper = panel.locator(".ie-wrapper-stage").inner_text()
    assert "AOTInductorModel" in wrapper and "run_impl" in wrapper, wrapper[:2000]
    open_export(panel)
    assert panel.locator(".ie-exp-graph").inner_text().strip() == page.kernel["graph"].strip()
    page.screenshot(path=str(tmp_path / "export-panel.png"))

    # A JIT compile of the same code: the panel follows it, with no Export tab, and falls back to a
    # stage that compilation has.
    run_cell(page, 3)
    page.wait_for_function("() => document.querySelector('#jp-right-stack .ie-fn')?.textContent === 'jit'", timeout=180_000)
    settle(page)
    assert panel.locator(EXPORT_BTN).count() == 0
    assert panel.locator(".ie-stage-btn.ie-active").get_attribute("data-stage") == "fx"
    panel.locator("g.ie-node").first.wait_for(timeout=30_000)
    # its diff against the AOT compilation before it: the shim call of the package and the JIT extern
    # call pair up as one changed kernel
    diff = page.locator("#jp-right-stack .ie-diff")
    assert "(AOT) → jit" in diff.locator("summary").first.inner_text()
    changed = diff.locator('.ie-diff-kernel[data-status="changed"]').all_inner_texts()
    assert any("aoti_torch_cpu_mm_out" in row and "extern_kernels.mm" in row for row in changed), changed
    history = page.locator("#jp-right-stack .ie-history option").all_inner_texts()
    assert [h.split(" [")[0] for h in history[-2:]] == ["#0 aot", "#1 jit"], history

    # back to the AOT compilation through the history picker: the Export tab is there again
    page.locator("#jp-right-stack .ie-history").select_option("0")
    page.wait_for_function("() => document.querySelector('#jp-right-stack .ie-fn')?.textContent === 'aot'", timeout=30_000)
    open_export(panel)
    assert panel.locator(".ie-exp-range").count() == len(page.kernel["ranges"])
    page.screenshot(path=str(tmp_path / "export-panel-history.png"))
    assert page.errors == []
    assert page.outside_requests == []
