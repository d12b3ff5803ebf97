"""The documentation site (mkdocs.yml, docs/) builds with --strict and works offline.

The build here is the real configuration, written to a temporary folder. It renders the executed copies
of the notebooks that ``tests/notebooks/test_notebooks.py`` left in build/notebooks/ and, so that at least one
page shows outputs even on a fresh clone (this file runs before the notebook test), executes the
smallest notebook when none is there. The other notebooks are rendered from examples/ without outputs:
``make docs`` is the build that executes what is missing.
"""

from __future__ import annotations

import html
import inspect
import re
import shutil
from pathlib import Path

import nbformat
import pytest

mkdocs_config = pytest.importorskip("mkdocs.config")
from mkdocs.commands.build import build  # noqa: E402

import explorer  # noqa: E402
from tests.notebook_runner import (EXAMPLES, EXECUTED, ROOT, errors_of, execute, is_fresh,  # noqa: E402
                                   notebook_names, save_executed)

# what loads a resource: <script src=...>, <link href=...>, CSS @import, JS import(...)
_LOADS = [re.compile(r"<script\b[^>]*\bsrc\s*=\s*[\"']?([^\"'\s>]+)", re.I),
          re.compile(r"<link\b[^>]*\bhref\s*=\s*[\"']?([^\"'\s>]+)", re.I),
          re.compile(r"@import\s+(?:url\()?\s*[\"']?([^\"')\s;]+)", re.I),
          re.compile(r"\bimport\s*\(\s*[\"']([^\"']+)", re.I)]  # a script's dynamic import("...")
_EXTERNAL = re.compile(r"^(?:https?:)?//", re.I)


def _outputs_text(nb: nbformat.NotebookNode) -> list[str]:
    found = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            if out.output_type == "stream" and out.text.strip():
                found.append(out.text.strip().splitlines()[0])
    return found


@pytest.fixture(scope="module")
def site(tmp_path_factory, kernel_specs):
    tmp = tmp_path_factory.mktemp("docs")
    executed = tmp / "notebooks"
    executed.mkdir()
    names = notebook_names()
    for name in names:
        if is_fresh(name):
            shutil.copy2(EXECUTED / name, executed / name)
    if not any(executed.iterdir()):
        smallest = min(names, key=lambda n: (EXAMPLES / n).stat().st_size)
        nb, _ = execute(smallest, kernel_specs)
        assert not errors_of(nb), errors_of(nb)
        save_executed(nb, smallest, executed)
    mp = pytest.MonkeyPatch()
    mp.setenv("EXPLORER_DOCS_EXECUTED", str(executed))
    mp.setenv("EXPLORER_DOCS_EXECUTE", "0")
    mp.chdir(ROOT)
    try:
        config = mkdocs_config.load_config(str(ROOT / "mkdocs.yml"), site_dir=str(tmp / "site"))
        config.plugins["mkdocs-jupyter"].config["cache_dir"] = str(tmp / "cache")
        build(config)  # strict (mkdocs.yml): any warning aborts
    finally:
        mp.undo()
    return tmp / "site", executed


def test_every_notebook_has_a_page_in_file_name_order(site):
    out, _ = site
    names = notebook_names()
    for name in names:
        assert (out / "notebooks" / f"{Path(name).stem}.html").is_file(), f"no page for {name}"
    nav = (out / "index.html").read_text(encoding="utf-8")
    positions = [nav.find(f"notebooks/{Path(name).stem}.html") for name in names]
    assert -1 not in positions and positions == sorted(positions), "the nav lists the notebooks out of order"


def test_a_notebook_page_shows_what_the_notebook_printed(site):
    out, executed = site
    name = sorted(p.name for p in executed.glob("*.ipynb"))[0]
    page = (out / "notebooks" / f"{Path(name).stem}.html").read_text(encoding="utf-8")
    assert "jp-OutputArea-output" in page
    printed = _outputs_text(nbformat.read(executed / name, as_version=4))
    assert printed, f"the executed copy of {name} printed nothing"
    assert html.escape(printed[0], quote=False) in page, f"{name}'s page lacks its output {printed[0]!r}"


def test_the_api_page_has_explorer_compile_docstring(site):
    out, _ = site
    page = html.unescape(re.sub(r"<[^>]+>", "", (out / "api" / "explorer.html").read_text(encoding="utf-8")))
    first = inspect.getdoc(explorer.compile).split("\n\n")[0].replace("``", "")
    assert " ".join(first.split()) in " ".join(page.split())


def test_the_schema_page(site):
    out, _ = site
    page = (out / "schema.html").read_text(encoding="utf-8")
    assert "Trace JSON schema" in page and "inductor-explorer/trace" in page


def test_the_site_loads_nothing_from_other_hosts(site):
    out, _ = site
    external = []
    for path in sorted(out.rglob("*")):
        if path.suffix not in (".html", ".css") or not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        for pattern in _LOADS:
            external += [f"{path.relative_to(out)}: {url}" for url in pattern.findall(text) if _EXTERNAL.match(url)]
    assert not external, "the site loads from other hosts:\n" + "\n".join(external[:20])
