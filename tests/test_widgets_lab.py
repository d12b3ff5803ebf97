"""ExplorerWidget inside a real JupyterLab 4, driven by headless Chromium.

The test starts its own `jupyter lab` on 127.0.0.1 (free port, no token, every
Jupyter directory under tmp), opens a notebook that displays the widget for a
trace fixture, runs it, then clicks in the rendered widget and checks both the
page and the kernel-side state (selection synced back to Python, and Python
driving the view).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import nbformat
import pytest

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).parent / "fixtures"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
FUSED = "cpp_fused__softmax_add_relu_sum_0"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _write_notebook(path: Path) -> None:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [
        nbformat.v4.new_code_cell("import json\nfrom widgets import ExplorerWidget\nw = ExplorerWidget(json.load(open('trace.json')))\nw"),
        nbformat.v4.new_code_cell("print('SELECTION', json.dumps(w.selection, sort_keys=True))"),
        nbformat.v4.new_code_cell(f"w.stage = 'kernels'\nw.select('kernel_line', {FUSED!r}, line=44)"),
    ]
    nbformat.write(nb, path)


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """A JupyterLab server on loopback; yields its base URL."""
    tmp = tmp_path_factory.mktemp("lab")
    notebooks = tmp / "notebooks"
    notebooks.mkdir()
    shutil.copy(FIXTURES / "widget_sample.json", notebooks / "trace.json")
    _write_notebook(notebooks / "explore.ipynb")
    port = _free_port()
    env = dict(os.environ)
    env.update(
        JUPYTER_CONFIG_DIR=str(tmp / "config"),
        JUPYTER_RUNTIME_DIR=str(tmp / "runtime"),
        JUPYTER_DATA_DIR=str(tmp / "data"),
        IPYTHONDIR=str(tmp / "ipython"),
        JUPYTER_PLATFORM_DIRS="1",
        PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")])),
    )
    cmd = [
        sys.executable, "-m", "jupyter", "lab", "--no-browser",
        "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
        "--IdentityProvider.token=", "--ServerApp.password=",
        f"--ServerApp.root_dir={notebooks}",
        "--LabApp.expose_app_in_browser=True",
        "--LabApp.extension_manager=readonly",
        "--ServerApp.terminals_enabled=False",
        "--ServerApp.allow_root=True",
        "--LabApp.news_url=None",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        "--LabServerApp.workspaces_dir=" + str(tmp / "workspaces"),
        "--LabServerApp.user_settings_dir=" + str(tmp / "settings"),
    ]
    log = (tmp / "server.log").open("w")
    server = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, cwd=notebooks)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                with urllib.request.urlopen(f"{url}/api/status", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"jupyter lab did not start:\n{(tmp / 'server.log').read_text()[-3000:]}")
            time.sleep(0.5)
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()


@pytest.fixture(scope="module")
def page(lab):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=["--no-sandbox", "--disable-background-networking"]
        )
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        outside = []
        page.on("request", lambda r: outside.append(r.url) if not r.url.startswith((lab, "data:", "blob:", "ws://127.0.0.1")) else None)
        page.goto(f"{lab}/lab/tree/explore.ipynb")
        page.wait_for_function("() => window.jupyterapp && window.jupyterapp.shell.currentWidget && window.jupyterapp.shell.currentWidget.sessionContext", timeout=90_000)
        page.wait_for_function(
            "() => { const s = window.jupyterapp.shell.currentWidget.sessionContext; return s.session && s.session.kernel && s.session.kernel.status === 'idle'; }",
            timeout=90_000,
        )
        page.outside_requests = outside
        yield page
        browser.close()


def run_cell(page, index: int) -> None:
    page.evaluate(
        """async (i) => { const panel = window.jupyterapp.shell.currentWidget;
             panel.content.activeCellIndex = i;
             await window.jupyterapp.commands.execute('notebook:run-cell'); }""",
        index,
    )


def cell_output(page, index: int) -> str:
    return page.locator(".jp-Notebook .jp-Cell").nth(index).locator(".jp-OutputArea").inner_text()


def test_widget_renders_and_links_in_jupyterlab(page, tmp_path):
    run_cell(page, 0)
    widget = page.locator(".jp-OutputArea .ie-root")
    widget.locator("g.ie-node").first.wait_for(timeout=60_000)
    widget.locator('g.ie-node[data-name="add"]').click()
    lit = widget.locator(".ie-side .ie-kline.ie-lit").evaluate_all("els => els.map(e => [e.dataset.kernel, Number(e.dataset.line)])")
    assert sorted(lit) == [[FUSED, 20], [FUSED, 29], [FUSED, 40]]
    page.screenshot(path=str(tmp_path / "lab-fx-selected.png"))

    # The click reached the kernel: w.selection is the FX node.
    run_cell(page, 1)
    page.wait_for_function("() => document.querySelectorAll('.jp-Cell')[1].innerText.includes('SELECTION')", timeout=30_000)
    assert 'SELECTION {"id": "add", "kind": "fx"}' in cell_output(page, 1)

    # Click a kernel line: its FX node lights up.
    widget.locator('.ie-stage-btn[data-stage="kernels"]').click()
    widget.locator('.ie-kdetail .ie-src-line[data-line="31"]').click()
    widget.locator('.ie-stage-btn[data-stage="fx"]').click()
    assert widget.locator("g.ie-node.ie-lit").evaluate_all("els => els.map(e => e.dataset.name)") == ["softmax"]

    # Python drives the view: stage and selection set from the kernel.
    run_cell(page, 2)
    page.wait_for_function("() => document.querySelector('.ie-stage-btn[data-stage=\"kernels\"]').getAttribute('aria-selected') === 'true'", timeout=30_000)
    page.wait_for_function("() => document.querySelector('.ie-kdetail .ie-src-line[data-line=\"44\"]')?.classList.contains('ie-selected')", timeout=30_000)
    assert widget.locator(".ie-side [data-section=post_grad] .ie-chip").all_inner_texts() == ["div"]
    page.screenshot(path=str(tmp_path / "lab-python-driven.png"))
    assert page.outside_requests == []


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
