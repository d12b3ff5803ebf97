"""A real JupyterLab 4 on loopback and a headless Chromium page on it, for the browser tests.

`write_notebook(path, cells)` writes one; `lab_server(notebooks, tmp)` starts `jupyter lab` (free port, no token, every Jupyter directory under
tmp) serving `notebooks`; `notebook_page(url, name)` opens a notebook in Chromium and waits for its
kernel; `run_cell` / `cell_output` drive it. The page records every request that left loopback in
`page.outside_requests`: the views must work offline.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Iterator

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")


def write_notebook(path: Path, cells: list[str]) -> None:
    """A notebook of code cells on the plain python3 kernel (the server's own interpreter)."""
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [nbformat.v4.new_code_cell(cell) for cell in cells]
    nbformat.write(nb, path)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def lab_server(notebooks: Path, tmp: Path) -> Iterator[str]:
    """A JupyterLab server on 127.0.0.1 serving ``notebooks``; yields its base URL."""
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
    log_path = tmp / "server.log"
    log = log_path.open("w")
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
                raise RuntimeError(f"jupyter lab did not start:\n{log_path.read_text()[-3000:]}")
            time.sleep(0.5)
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()


@contextlib.contextmanager
def notebook_page(url: str, notebook: str, viewport: tuple[int, int] = (1400, 1000)) -> Iterator[object]:
    """Chromium showing ``notebook`` in the lab at ``url``, its kernel idle."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=["--no-sandbox", "--disable-background-networking"]
        )
        page = open_notebook(browser.new_page(viewport={"width": viewport[0], "height": viewport[1]}), url, notebook)
        try:
            yield page
        finally:
            browser.close()


def open_notebook(page, url: str, notebook: str, workspace: str | None = None):
    """Load ``notebook`` in ``page`` (a fresh tab) and wait for its kernel to be idle. A second tab needs
    its own ``workspace``: JupyterLab restores a workspace's open notebooks in every tab that uses it."""
    outside: list[str] = []
    page.on("request", lambda r: outside.append(r.url) if not r.url.startswith((url, "data:", "blob:", "ws://127.0.0.1")) else None)
    page.goto(f"{url}/lab/workspaces/{workspace}/tree/{notebook}" if workspace else f"{url}/lab/tree/{notebook}")
    page.wait_for_function("() => window.jupyterapp && window.jupyterapp.shell.currentWidget && window.jupyterapp.shell.currentWidget.sessionContext", timeout=90_000)
    page.wait_for_function(
        "() => { const s = window.jupyterapp.shell.currentWidget.sessionContext; return s.session && s.session.kernel && s.session.kernel.status === 'idle'; }",
        timeout=90_000,
    )
    page.outside_requests = outside
    return page


def run_cell(page, index: int) -> None:
    """Run cell ``index`` of the notebook on screen (returns once the run was requested)."""
    page.evaluate(
        """async (i) => { const panel = window.jupyterapp.shell.currentWidget;
             panel.content.activeCellIndex = i;
             await window.jupyterapp.commands.execute('notebook:run-cell'); }""",
        index,
    )


def wait_idle(page, timeout_ms: int = 120_000) -> None:
    """Wait until the notebook's kernel has finished what it was asked to run."""
    page.wait_for_function(
        "() => window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.status === 'idle'",
        timeout=timeout_ms,
    )


def cell_output(page, index: int) -> str:
    return page.locator(".jp-Notebook .jp-Cell").nth(index).locator(".jp-OutputArea").inner_text()


def settle(page, timeout_ms: int = 60_000) -> None:
    """Wait until every explorer view on the page has no part loading and no selection being drawn."""
    page.wait_for_function(
        "() => [...document.querySelectorAll('.ie-root')].every((e) => e.dataset.pending === '0')",
        timeout=timeout_ms,
    )
