"""Render the README's screenshots of the Kernels and Autotune tables from the recorded fixtures.

Run from the repository root: ``python examples/screenshots/make.py`` (needs Playwright + chromium).
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import widgets

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
OUT = Path(__file__).parent

SHOTS = [  # (fixture, stage, image)
    ("gpu_profile.json", "kernels", "kernels_table.png"),
    ("gpu_max_autotune.json", "autotune", "autotune_table.png"),
]


def main() -> None:
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1280, "height": 760})
        for fixture, stage, image in SHOTS:
            html = widgets.write_html(json.loads((FIXTURES / fixture).read_text()), Path(tmp) / f"{stage}.html")
            page.goto(html.as_uri())
            page.click(f'.ie-stage-btn[data-stage="{stage}"]')
            if stage == "kernels":
                page.click('.ie-khead[data-col="time"]')
            page.wait_for_timeout(300)
            page.screenshot(path=str(OUT / image))
        browser.close()


if __name__ == "__main__":
    main()
