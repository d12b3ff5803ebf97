"""ExplorerWidget inside a real JupyterLab 4, driven by headless Chromium.

The test starts its own `jupyter lab` on 127.0.0.1 (free port, no token, every
Jupyter directory under tmp), opens a notebook that displays the widget for a
trace fixture, runs it, then clicks in the rendered widget and checks both the
page and the kernel-side state (selection synced back to Python, and Python
driving the view).
"""

from __future__ import annotations

import json
import shutil

import pytest

from tests.jupyterlab import (cell_output, lab_server, notebook_page, open_notebook, run_cell, settle, wait_idle,
                              write_notebook)
from tests.browser.test_widgets_static_browser import expected_kernel_lines
from tests.paths import FIXTURES

pytestmark = pytest.mark.browser

FUSED = "cpp_fused__softmax_add_relu_sum_0"


EXPLORE_CELLS = [
    "import json\nfrom widgets import ExplorerWidget\nw = ExplorerWidget(json.load(open('trace.json')))\nw",
    "print('SELECTION', json.dumps(w.selection, sort_keys=True))",
    f"w.stage = 'kernels'\nw.select('kernel_line', {FUSED!r}, line=44)",
]


LIVE_CELL = """\
import torch, explorer
def f(x):
    y = torch.relu(x * 2 + 1)
    return y.sum(-1)
c = explorer.compile(f, torch.randn(8, 16))
c.save('live.json')
explorer.show(c)"""


# A synthesized 80-layer transformer (3,000 nodes per stage): big enough to be drawn from its outlines.
LARGE_CELLS = [
    "from benchmarks.render import synthetic_trace\nfrom widgets import ExplorerWidget\ntrace = synthetic_trace(80)",
    "ExplorerWidget(trace, stage='post_grad')",
]


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """A JupyterLab server on loopback; yields its base URL."""
    tmp = tmp_path_factory.mktemp("lab")
    notebooks = tmp / "notebooks"
    notebooks.mkdir()
    shutil.copy(FIXTURES / "widget_sample.json", notebooks / "trace.json")
    write_notebook(notebooks / "explore.ipynb", EXPLORE_CELLS)
    write_notebook(notebooks / "live.ipynb", [LIVE_CELL, *UNFUSE_WATCH_CELLS])  # one kernel, Inductor warmed once
    shutil.copy(FIXTURES / "gpu_profile.json", notebooks / "profile.json")
    write_notebook(notebooks / "profile.ipynb",
                   ["import json\nfrom widgets import ExplorerWidget\nExplorerWidget(json.load(open('profile.json')))"])
    write_notebook(notebooks / "large.ipynb", LARGE_CELLS)
    for width in (360, 420):  # one notebook per narrow test: no other tab runs or saves it
        write_notebook(notebooks / f"narrow{width}.ipynb",
                       ["import json\nfrom widgets import ExplorerWidget\nExplorerWidget(json.load(open('profile.json')))"])
    with lab_server(notebooks, tmp) as url:
        yield url, notebooks


@pytest.fixture(scope="module")
def page(lab):
    with notebook_page(lab[0], "explore.ipynb") as page:
        yield page


def test_widget_renders_and_links_in_jupyterlab(page, tmp_path):
    run_cell(page, 0)
    widget = page.locator(".jp-OutputArea .ie-root")
    widget.locator("g.ie-node").first.wait_for(timeout=60_000)
    settle(page)
    widget.locator('g.ie-node[data-name="add"]').click()
    settle(page)
    lit = widget.locator(".ie-side .ie-kline.ie-lit").evaluate_all("els => els.map(e => [e.dataset.kernel, Number(e.dataset.line)])")
    assert sorted(lit) == [[FUSED, 20], [FUSED, 29], [FUSED, 40]]
    page.screenshot(path=str(tmp_path / "lab-fx-selected.png"))

    # The click reached the kernel: w.selection is the FX node.
    run_cell(page, 1)
    page.wait_for_function("() => document.querySelectorAll('.jp-Cell')[1].innerText.includes('SELECTION')", timeout=30_000)
    assert 'SELECTION {"id": "add", "kind": "fx"}' in cell_output(page, 1)

    # Click a kernel line: its FX node lights up.
    widget.locator('.ie-stage-btn[data-stage="kernels"]').click()
    settle(page)
    widget.locator('.ie-kdetail .ie-src-line[data-line="31"]').click()
    settle(page)
    widget.locator('.ie-stage-btn[data-stage="fx"]').click()
    settle(page)
    assert widget.locator("g.ie-node.ie-lit").evaluate_all("els => els.map(e => e.dataset.name)") == ["softmax"]

    # Python drives the view: stage and selection set from the kernel.
    run_cell(page, 2)
    page.wait_for_function("() => document.querySelector('.ie-stage-btn[data-stage=\"kernels\"]').getAttribute('aria-selected') === 'true'", timeout=30_000)
    page.wait_for_function("() => document.querySelector('.ie-kdetail .ie-src-line[data-line=\"44\"]')?.classList.contains('ie-selected')", timeout=30_000)
    settle(page)
    assert widget.locator(".ie-side [data-section=post_grad] .ie-chip").all_inner_texts() == ["div"]
    page.screenshot(path=str(tmp_path / "lab-python-driven.png"))
    assert page.outside_requests == []


def test_compiling_in_the_notebook_shows_linked_views(lab, page, tmp_path):
    """A small function compiled by explorer.compile inside the notebook, displayed and clicked."""
    url, notebooks = lab
    live = open_notebook(page.context.browser.new_page(viewport={"width": 1400, "height": 1000}), url, "live.ipynb", workspace="live")
    try:
        page = live
        run_cell(page, 0)
        widget = page.locator(".jp-OutputArea .ie-root")
        widget.locator('g.ie-node[data-name="y"]').wait_for(timeout=180_000)
        settle(page)
        trace = json.loads((notebooks / "live.json").read_text())
        expected = expected_kernel_lines(trace["graphs"][0], "y")
        assert expected and all(expected.values())
        widget.locator('g.ie-node[data-name="y"]').click()
        settle(page)
        lit = widget.locator(".ie-side .ie-kline.ie-lit").evaluate_all(
            "els => els.map(e => [e.dataset.kernel, Number(e.dataset.line)])")
        assert {(k, line) for k, line in lit} == {(k, n) for k, lines in expected.items() for n in lines}
        page.screenshot(path=str(tmp_path / "lab-live-compile.png"))
        # and back: a kernel line that computes the relu lights the FX node y
        kernel, lines = next(iter(expected.items()))
        widget.locator('.ie-stage-btn[data-stage="kernels"]').click()
        settle(page)
        widget.locator(f'.ie-kdetail .ie-src-line[data-line="{min(lines)}"]').click()
        settle(page)
        widget.locator('.ie-stage-btn[data-stage="fx"]').click()
        settle(page)
        assert "y" in widget.locator("g.ie-node.ie-lit").evaluate_all("els => els.map(e => e.dataset.name)")
        assert page.outside_requests == []
    finally:
        live.close()


def test_widget_is_readable_in_the_dark_theme(page, tmp_path):
    page.evaluate("() => window.jupyterapp.commands.execute('apputils:change-theme', {theme: 'JupyterLab Dark'})")
    page.wait_for_function("() => document.body.dataset.jpThemeLight === 'false'", timeout=30_000)
    page.locator('.jp-OutputArea .ie-stage-btn[data-stage="fx"]').click()
    page.locator(".jp-OutputArea .ie-root g.ie-node").first.wait_for(timeout=30_000)
    ratios = page.evaluate(
        """() => {
          const rgb = (c) => c.match(/[\\d.]+/g).slice(0, 3).map(Number);
          const lum = (c) => { const v = rgb(c).map(x => { x /= 255; return x <= 0.03928 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4; });
                               return 0.2126 * v[0] + 0.7152 * v[1] + 0.0722 * v[2]; };
          const ratio = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
          const root = document.querySelector('.ie-root');
          const bg = getComputedStyle(root).backgroundColor;
          return {bg, node: ratio(getComputedStyle(root.querySelector('g.ie-node text')).fill, bg),
                  label: ratio(getComputedStyle(root.querySelector('.ie-stage-btn')).color, bg)};
        }"""
    )
    page.screenshot(path=str(tmp_path / "lab-dark.png"))
    assert lum_is_dark(ratios["bg"]), ratios
    assert ratios["node"] >= 4.5 and ratios["label"] >= 4.5, ratios


def lum_is_dark(css_color: str) -> bool:
    r, g, b = (float(x) for x in css_color[css_color.index("(") + 1 : css_color.index(")")].split(",")[:3])
    return (r + g + b) / 3 < 80


def test_live_widget_shows_the_profiled_time_column(lab, page):
    """A GPU profile rendered by the live widget: the Kernels table has its time column."""
    tab = open_notebook(page.context.browser.new_page(viewport={"width": 1400, "height": 1000}), lab[0], "profile.ipynb",
                        workspace="profile")
    try:
        run_cell(tab, 0)
        widget = tab.locator(".jp-OutputArea .ie-root")
        widget.locator('.ie-stage-btn[data-stage="kernels"]').wait_for(timeout=60_000)
        widget.locator('.ie-stage-btn[data-stage="kernels"]').click()
        settle(tab)
        assert widget.locator('.ie-khead[data-col="time"]').count() == 1
        times = widget.locator(".ie-kitem .ie-kcol-time[data-ms]")
        assert times.count() > 0 and all(float(t.get_attribute("data-ms")) > 0 for t in times.all())
        assert tab.outside_requests == []
    finally:
        tab.close()


def test_a_large_trace_is_drawn_from_its_outline_in_jupyterlab(lab, page):
    """The first message answered for a big graph is its outline; the full part follows the first frame
    and the drawn nodes then carry every field (their tooltips show their args)."""
    tab = open_notebook(page.context.browser.new_page(viewport={"width": 1400, "height": 1000}), lab[0], "large.ipynb",
                        workspace="large")
    try:
        run_cell(tab, 0)
        wait_idle(tab)
        tab.evaluate("() => { globalThis.inductorExplorerMarks = true; performance.clearMarks(); }")
        run_cell(tab, 1)
        widget = tab.locator(".jp-OutputArea .ie-root")
        widget.locator('.ie-stage[data-stage="post_grad"] g.ie-node').first.wait_for(timeout=120_000)
        settle(tab)
        marks = tab.evaluate("() => performance.getEntriesByType('mark').map((m) => m.name)")
        requests = [m.removeprefix("ie:request ") for m in marks if m.startswith("ie:request g0/")]
        assert requests[0] == "g0/post_grad_outline" and "g0/fx_outline" not in requests
        assert marks.index("ie:first frame") < marks.index("ie:request g0/post_grad")
        assert "drawn (modules closed)" in widget.locator(".ie-graph-info").inner_text()
        tips = widget.locator("g.ie-node:not(.ie-op-module) title").evaluate_all("els => els.map((e) => e.textContent)")
        assert len(tips) > 10 and all("(" in tip.splitlines()[1] for tip in tips)  # target (args)
        assert tab.outside_requests == []
    finally:
        tab.close()


@pytest.mark.parametrize("width", [360, 420])
def test_the_live_widget_fits_a_narrow_lab(lab, page, width):
    """In JupyterLab too, down to 360 px the widget stacks its panes and scrolls wide tables and code inside
    its stages: whatever stage is open, it stays inside its output area and scrolls nothing sideways."""
    tab = open_notebook(page.context.browser.new_page(viewport={"width": width, "height": 800}), lab[0],
                        f"narrow{width}.ipynb", workspace=f"narrow{width}")
    try:
        # a phone-wide lab leaves the notebook almost no room beside its side panels: close them
        tab.evaluate("() => { window.jupyterapp.shell.collapseLeft(); window.jupyterapp.shell.collapseRight(); }")
        run_cell(tab, 0)
        widget = tab.locator(".jp-OutputArea .ie-root")
        widget.locator("g.ie-node").first.wait_for(timeout=60_000)
        settle(tab)
        assert widget.evaluate("e => e.classList.contains('ie-narrow')")
        measure = """(root) => {
            const area = root.closest('.jp-OutputArea-output').getBoundingClientRect();
            return [Math.round(root.getBoundingClientRect().right - area.right), root.scrollWidth - root.clientWidth];
        }"""
        overflow = {}
        for stage in [None, *widget.locator(".ie-stage-btn").evaluate_all("els => els.map(e => e.dataset.stage)")]:
            if stage:
                widget.locator(f'.ie-stage-btn[data-stage="{stage}"]').click()
                settle(tab)
            overflow[stage] = widget.evaluate(measure)
        wider = {stage: px for stage, px in overflow.items() if max(px) > 0}
        assert overflow and not wider, wider
        assert tab.outside_requests == []
    finally:
        tab.close()


# "What if" and the live watch: cells 1 and 2 of live.ipynb, whose kernel compiled LIVE_CELL already (the
# first compile of a kernel pays for Inductor's start). A softmax feeding a matmul (a fused group of two
# nodes and an extern call), then a loop watched while it runs.
UNFUSE_WATCH_CELLS = [
    """\
import torch, explorer
from widgets import ExplorerWidget
def softmax_mm(x, w):
    s = x.sum(-1, keepdim=True)
    return (x / s) @ w
c = explorer.compile(softmax_mm, torch.rand(64, 128) + 1, torch.rand(128, 32))
ExplorerWidget(c, stage='fused')""",
    """\
import time, torch, explorer
@torch.compile
def step_fn(x, n):
    return (x * n).relu().sum()
with explorer.watch() as w:
    display(w)
    for i in range(40):
        step_fn(torch.randn(8, 8), 4 if i < 20 else 5)
        time.sleep(0.1)
        w.step()""",
    """def lines(x):
    a = x.sin()
    b = a * 2 + 1
    return b.cos()
ExplorerWidget(explorer.compile(lines, torch.rand(64, 64)), stage='fused')""",
]


@pytest.fixture(scope="module")
def unfuse_watch_tab(lab, page):
    tab = open_notebook(page.context.browser.new_page(viewport={"width": 1400, "height": 1000}), lab[0],
                        "live.ipynb", workspace="unfuse_watch")
    yield tab
    tab.close()


def test_unfuse_in_the_fused_view_compares_beside_the_group(unfuse_watch_tab, tmp_path):
    """Select the fused group, press unfuse: Python runs c.what_if(unfuse=group) and the comparison shows
    under the groups; the extern call's refusal is a message; the compilation shown stays as it was."""
    tab = unfuse_watch_tab
    run_cell(tab, 1)
    widget = tab.locator(".jp-Notebook .jp-Cell").nth(1).locator(".ie-root")
    widget.locator('.ie-fused[data-name="op0_op1"] .ie-name').wait_for(timeout=180_000)
    settle(tab)
    kernels_before = widget.locator(".ie-sum-kernels strong").inner_text()
    box = widget.locator(".ie-whatif")
    assert box.locator(".ie-whatif-unfuse").is_disabled()  # nothing selected yet
    widget.locator('.ie-fused[data-name="op0_op1"] .ie-name').click()
    settle(tab)
    box.locator(".ie-whatif-unfuse").click()
    box.locator('.ie-whatif-result[data-group="op0_op1"]').wait_for(timeout=120_000)
    assert box.get_attribute("data-state") == "done"
    assert box.locator(".ie-whatif-verdict").inner_text().startswith("unfusing op0_op1")
    rows = box.locator(".ie-whatif-kernels tbody tr").evaluate_all(
        "els => els.map(e => [e.dataset.status, e.querySelector('.ie-whatif-before').textContent, e.querySelector('.ie-whatif-after').textContent])")
    assert ["changed", "cpp_fused_div_sum_0", "cpp_fused_sum_0"] in rows and ["added", "", "cpp_fused_div_1"] in rows
    assert box.locator('.ie-whatif-totals [data-total="kernels"] td').all_inner_texts() == ["2", "3"]
    tab.screenshot(path=str(tmp_path / "lab-what-if.png"))

    widget.locator('.ie-fused[data-name="op2"] .ie-name').click()  # the extern call: nothing to unfuse, said at once
    settle(tab)
    assert box.locator(".ie-whatif-unfuse").is_disabled()
    assert box.locator(".ie-whatif-unfuse").get_attribute("data-action") == "none"
    assert "this group is an extern call (a library kernel), never fused" in box.locator(".ie-whatif-why").inner_text()
    widget.locator('.ie-fused[data-name="op0_op1"] .ie-name').click()  # its comparison is kept
    settle(tab)
    assert box.locator('.ie-whatif-result[data-group="op0_op1"] .ie-whatif-verdict').count() == 1
    assert widget.locator(".ie-fused").count() == 2 and widget.locator(".ie-sum-kernels strong").inner_text() == kernels_before
    assert tab.outside_requests == []


def test_a_loop_of_three_lines_is_offered_cut_at_its_lines(unfuse_watch_tab):
    """One scheduler node holding three user lines (Inductor inlined them while lowering): the box offers to cut
    it, and c.what_if(unfuse=group) answers with one kernel per line."""
    tab = unfuse_watch_tab
    run_cell(tab, 3)
    widget = tab.locator(".jp-Notebook .jp-Cell").nth(3).locator(".ie-root")
    widget.locator('.ie-fused[data-name="op0"] .ie-name').wait_for(timeout=180_000)
    settle(tab)
    widget.locator('.ie-fused[data-name="op0"] .ie-name').click()
    settle(tab)
    box = widget.locator(".ie-whatif")
    button = box.locator(".ie-whatif-unfuse")
    assert (button.inner_text(), button.get_attribute("data-action"), button.is_disabled()) == ("cut at lines", "cut", False)
    assert box.locator(".ie-whatif-head").inner_text().startswith("What if op0 were cut at its lines?")
    button.click()
    box.locator('.ie-whatif-result[data-group="op0"]').wait_for(timeout=120_000)
    assert box.locator(".ie-whatif-verdict").inner_text().startswith("cutting op0 (cos, add, mul, sin) at your lines")
    assert box.locator('.ie-whatif-totals [data-total="kernels"] td').all_inner_texts() == ["1", "3"]


def test_the_watch_widget_follows_a_running_loop(unfuse_watch_tab, tmp_path):
    """`display(w)` inside the loop: the timeline grows while the cell runs, the recompile is marked at its
    step, and a click on the mark shows its reason, guard and the value that broke it."""
    tab = unfuse_watch_tab
    # run_cell's command resolves when the cell has finished: start it without waiting, to watch it run
    tab.evaluate("""() => { const panel = window.jupyterapp.shell.currentWidget;
                      panel.content.activeCellIndex = 2;
                      window.jupyterapp.commands.execute('notebook:run-cell'); }""")
    view = tab.locator(".jp-Notebook .jp-Cell").nth(2).locator(".ie-watchview")
    view.wait_for(timeout=120_000)
    running = "([v, n]) => v.dataset.active === 'true' && Number(v.dataset.steps) >= n"
    tab.wait_for_function(running, arg=[view.element_handle(), 3], timeout=120_000)
    seen = int(view.get_attribute("data-steps"))
    tab.wait_for_function(running, arg=[view.element_handle(), seen + 1], timeout=60_000)  # grew while running
    tab.wait_for_function("v => v.dataset.active === 'false'", arg=view.element_handle(), timeout=120_000)
    wait_idle(tab)
    assert view.get_attribute("data-steps") == "40" and view.locator(".ie-watch-bar").count() == 40
    marks = view.locator(".ie-watch-mark").evaluate_all("els => els.map(e => [e.dataset.kind, Number(e.dataset.step)])")
    assert marks == [["compile", 0], ["recompile", 20]]
    view.locator('.ie-watch-mark[data-kind="recompile"]').click()
    detail = view.locator(".ie-watch-detail")
    assert detail.locator('[data-field="value"] .ie-v').inner_text() == "5"
    assert "n == 4" in detail.locator('[data-field="reason"] .ie-v').inner_text()
    assert "== 4" in detail.locator('[data-field="guard"] .ie-v').inner_text()
    assert view.locator('.ie-watch-frames [data-col="calls"]').inner_text() == "40"
    assert "steps: marked by w.step() / w.steps_of()" in view.locator(".ie-watch-rule").inner_text()
    tab.screenshot(path=str(tmp_path / "lab-watch.png"))
    assert tab.outside_requests == []
