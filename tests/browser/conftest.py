"""The browser tier: one headless Chromium per test module, for the static export's pages."""

from __future__ import annotations

import pytest

from tests.jupyterlab import CHROMIUM


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=["--no-sandbox", "--disable-background-networking"]
        )
        yield browser
        browser.close()
