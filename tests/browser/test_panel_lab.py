"""%%compile, the toggle panel and `%explorer panel` in a real JupyterLab, driven by headless Chromium.

One notebook: a bf16 cell compiled with %%compile, the side panel opened, then the toggle panel of
the cell's widget clicked (emulate_precision_casts on: a real recompile whose diff shows the changed
C++ kernel; off again: served from the session cache), and a second cell the panel follows.
"""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from explorer.panel import PANEL_MIN_WIDTH_PX
from tests.jupyterlab import cell_output, lab_server, notebook_page, run_cell, wait_idle, write_notebook

pytestmark = pytest.mark.browser

CELLS = [
    "%load_ext explorer\nimport torch\ntorch.manual_seed(0)\nx = torch.randn(64, 128)",
    "%%compile --name bf\ny = (x.bfloat16() * 3 + 1).float() * 2",
    "%explorer panel",
    "%%compile --name second\nz = torch.relu(x).sum(-1)",
    "from explorer import Session\nprint('ENTRIES', [(e.origin, e.label) for e in Session.default()])",
]
TOGGLE = 'input[data-toggle="emulate_precision_casts"]'


def show_toggles(cell) -> None:
    """Open the toggles' disclosure where the view is narrow enough to fold it (the side panel takes
    room from the notebook once it is open)."""
    box = cell.locator(".ie-toggles-box")
    if box.get_attribute("open") is None:
        box.locator("summary").click()
    cell.locator(TOGGLE).wait_for(state="visible")


@pytest.fixture(scope="module")
def notebooks(tmp_path_factory):
    """The lab's root folder, where its kernels run (and write the reproducers)."""
    folder = tmp_path_factory.mktemp("panel-lab") / "notebooks"
    folder.mkdir()
    return folder


@pytest.fixture(scope="module")
def page(notebooks):
    tmp = notebooks.parent
    write_notebook(notebooks / "session.ipynb", CELLS)
    with lab_server(notebooks, tmp) as url, notebook_page(url, "session.ipynb") as page:
        run_cell(page, 0)
        wait_idle(page)
        run_cell(page, 1)
        page.locator(".jp-Cell").nth(1).locator(".ie-root g.ie-node").first.wait_for(timeout=150_000)
        yield page


def test_compile_cell_shows_the_explorer_with_a_toggle_panel(page):
    cell = page.locator(".jp-Cell").nth(1)
    assert cell.locator(".ie-fn").inner_text() == "bf"
    names = cell.locator(".ie-toggles input").evaluate_all("els => els.map(e => e.dataset.toggle)")
    assert "emulate_precision_casts" in names and "loop_ordering_after_fusion" in names
    assert not cell.locator(TOGGLE).is_checked()
    assert cell.locator('input[data-toggle="loop_ordering_after_fusion"]').is_checked()  # Inductor's default


def test_side_panel_opens_and_follows_new_cells(page, tmp_path):
    run_cell(page, 2)
    panel = page.locator("#jp-right-stack .ie-root")
    panel.locator("g.ie-node").first.wait_for(timeout=60_000)
    assert page.locator("#jp-right-stack").is_visible()
    assert panel.locator(".ie-fn").inner_text() == "bf"
    page.screenshot(path=str(tmp_path / "side-panel.png"))

    run_cell(page, 3)
    page.wait_for_function(
        "() => document.querySelector('#jp-right-stack .ie-fn')?.textContent === 'second'", timeout=120_000
    )
    history = page.locator("#jp-right-stack .ie-history option").all_inner_texts()
    assert [h.split(" [")[0] for h in history[-2:]] == ["#0 bf", "#1 second"], history
    assert page.locator("#jp-right-stack .ie-history").input_value() == "1"
    # going back in the panel's history shows the earlier compilation, with the diff between them
    page.locator("#jp-right-stack .ie-history").select_option("0")
    page.wait_for_function("() => document.querySelector('#jp-right-stack .ie-fn')?.textContent === 'bf'", timeout=30_000)
    page.screenshot(path=str(tmp_path / "side-panel-history.png"))
    assert page.outside_requests == []


def test_side_panel_is_wide_enough_and_stacks_its_panes(page, tmp_path):
    """The panel opens at least PANEL_MIN_WIDTH_PX wide (JupyterLab's default is ~220 px), the view in
    it takes the narrow layout (graph above the linked pane) and nothing overflows sideways."""
    panel = page.locator("#jp-right-stack .ie-root")
    panel.locator("g.ie-node").first.wait_for(timeout=60_000)
    geometry = page.evaluate(
        """() => { const q = (s) => document.querySelector(s); const box = (e) => e.getBoundingClientRect();
                   const root = q('#jp-right-stack .ie-root');
                   return {stack: box(q('#jp-right-stack')).width, root: [root.scrollWidth, root.clientWidth],
                           narrow: root.classList.contains('ie-narrow'),
                           main: box(root.querySelector('.ie-main')), side: box(root.querySelector('.ie-side'))}; }"""
    )
    page.screenshot(path=str(tmp_path / "side-panel-width.png"))
    assert geometry["stack"] >= PANEL_MIN_WIDTH_PX, geometry
    assert geometry["narrow"], geometry
    assert geometry["side"]["top"] >= geometry["main"]["bottom"] - 1, geometry
    assert geometry["root"][0] <= geometry["root"][1], geometry
    # The session bar's toggles fold into a disclosure in the narrow view.
    toggles = page.locator("#jp-right-stack .ie-toggles-box")
    assert toggles.locator("summary").is_visible()
    assert toggles.get_attribute("open") is None


def test_toggle_round_trip_in_the_browser(page, tmp_path):
    cell = page.locator(".jp-Cell").nth(1)
    status = cell.locator(".ie-status")
    show_toggles(cell)
    cell.locator(TOGGLE).check()
    page.wait_for_function(
        "() => { const s = document.querySelectorAll('.jp-Cell')[1].querySelector('.ie-status');"
        " return s && s.dataset.state === 'idle' && s.textContent.includes('recompiled'); }",
        timeout=120_000,
    )
    assert "emulate_precision_casts=True" in status.inner_text()
    changed = cell.locator('.ie-diff-kernel[data-status="changed"]')
    assert changed.count() == 1
    assert "cpp_fused" in changed.inner_text()
    assert "emulate_precision_casts" in cell.locator(".ie-badge").all_inner_texts()[0]
    cell.locator(".ie-diff-kernel details summary").first.click()
    assert "convert<" in cell.locator(".ie-diff-src").first.inner_text()
    page.screenshot(path=str(tmp_path / "toggle-on.png"))

    show_toggles(cell)  # a redraw keeps the disclosure as it was
    cell.locator(TOGGLE).uncheck()
    page.wait_for_function(
        "() => document.querySelectorAll('.jp-Cell')[1].querySelector('.ie-status').textContent.includes('from the session cache')",
        timeout=30_000,
    )
    assert not cell.locator(TOGGLE).is_checked()
    assert cell.locator(".ie-sum-toggles").inner_text().endswith("defaults")

    run_cell(page, 4)
    page.wait_for_function("() => document.querySelectorAll('.jp-Cell')[4].innerText.includes('ENTRIES')", timeout=30_000)
    out = cell_output(page, 4)
    assert out.count("'toggle'") == 1, out  # switching back compiled nothing new
    assert "emulate_precision_casts=True" in out


def test_the_reproducer_button_writes_a_script_that_runs(page, notebooks):
    """Cell 3's graph (the bf16 cell's compiled graph differs from eager by design: Inductor keeps the
    intermediate in float32, so its script reports that mismatch)."""
    run_cell(page, 3)
    cell = page.locator(".jp-Cell").nth(3)
    cell.locator(".ie-repro").click(timeout=150_000)
    status = "document.querySelectorAll('.jp-Cell')[3].querySelector('.ie-status').textContent"
    page.wait_for_function(f"() => /wrote repros|no reproducer/.test({status})", timeout=60_000)
    text = cell.locator(".ie-status").inner_text()
    assert "wrote repros/" in text, text
    script = notebooks / re.search(r"wrote (\S+\.py)", text)[1]
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and "match" in done.stdout, done.stdout + done.stderr[-2000:]
