"""mkdocs hooks: one page per notebook of examples/, rendered with its outputs, and no script from elsewhere.

- The Notebooks section of the nav lists ``examples/*.ipynb`` sorted by file name (nothing is listed by
  hand), each under the title of its first heading.
- Each page renders the executed copy ``build/notebooks/<name>.ipynb`` that ``tests/notebooks/test_notebooks.py``
  writes when the notebook passes. A copy that is missing or older than the notebook is made here, with
  the same runner (tests/notebook_runner.py); a notebook that raises fails the build.
- Widgets need a running kernel: their outputs are rendered from their plain-text form, and the widget
  state is dropped (it would load a widget manager from a CDN).
- Script tags that load from another host (MathJax, mermaid) are removed from notebook pages: the site
  works offline.

Environment: ``EXPLORER_DOCS_EXECUTED`` points at another folder of executed copies (default
build/notebooks); ``EXPLORER_DOCS_EXECUTE=0`` renders missing or stale copies from the stored notebook,
without outputs, instead of executing them (used by tests/notebooks/test_docs.py).
"""

from __future__ import annotations

import logging
import os
import re
import sys
import tempfile
from pathlib import Path

import nbformat
from mkdocs.exceptions import PluginError
from mkdocs.plugins import event_priority
from mkdocs.structure.files import File

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.notebook_runner import (EXAMPLES, EXECUTED, errors_of, execute, is_fresh,  # noqa: E402
                                   notebook_names, save_executed, write_kernel_spec)

log = logging.getLogger("mkdocs.hooks.notebooks")

NAV_SECTION = "Notebooks"
PAGES = "notebooks"          # the notebooks' pages: site/notebooks/<name>.html
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def _executed_folder() -> Path:
    return Path(os.environ.get("EXPLORER_DOCS_EXECUTED", EXECUTED))


def _rendered_folder() -> Path:
    """What mkdocs-jupyter reads: the executed copies with widgets as text (build/docs-notebooks)."""
    return _executed_folder().parent / "docs-notebooks"


def _title(name: str) -> str:
    """The notebook's first heading, as plain text ('01 · A tour of one compilation')."""
    nb = nbformat.read(EXAMPLES / name, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("# "):
                    return line[2:].replace("`", "").strip()
    return Path(name).stem


def on_config(config):
    """Fill the Notebooks section of the nav with every notebook of examples/, in file-name order."""
    pages = [{_title(name): f"{PAGES}/{name}"} for name in notebook_names()]
    for index, item in enumerate(config.nav or []):
        if isinstance(item, dict) and NAV_SECTION in item:
            first = item[NAV_SECTION]
            item = {NAV_SECTION: ([first] if isinstance(first, str) else list(first)) + pages}
            config.nav[index] = item
            return config
    raise PluginError(f"mkdocs.yml: the nav has no '{NAV_SECTION}' section for the notebooks")


def _executed(name: str, specs_dir: Path) -> nbformat.NotebookNode:
    """The executed notebook: the fresh copy if there is one, else run now (or the stored notebook)."""
    folder = _executed_folder()
    if is_fresh(name, folder):
        return nbformat.read(folder / name, as_version=4)
    if os.environ.get("EXPLORER_DOCS_EXECUTE", "1") == "0":
        log.info("%s: no executed copy; rendered without outputs", name)
        return nbformat.read(EXAMPLES / name, as_version=4)
    log.info("executing %s (no executed copy newer than the notebook in %s)", name, folder)
    nb, seconds = execute(name, write_kernel_spec(specs_dir))
    errors = errors_of(nb)
    if errors:
        raise PluginError(f"{name} raised while executing for the docs:\n" + "\n\n".join(errors))
    save_executed(nb, name, folder)
    log.info("executed %s in %.0f s", name, seconds)
    return nb


def _for_the_page(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Widget outputs as their text (HTML or plain); no widget state."""
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            if "data" in out:
                out.data.pop(WIDGET_VIEW, None)
    return nb


@event_priority(100)  # before mkdocs-jupyter's on_files, which turns .ipynb files into pages
def on_files(files, config):
    # A plain File whose src_dir is build/docs-notebooks (mkdocs-jupyter reads generated files' paths wrong)
    rendered = _rendered_folder()
    (rendered / PAGES).mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="explorer-docs-kernels-") as specs_dir:
        for name in notebook_names():
            nb = _for_the_page(_executed(name, Path(specs_dir)))
            target = rendered / PAGES / name
            text = nbformat.writes(nb)
            if not target.exists() or target.read_text(encoding="utf-8") != text:
                target.write_text(text, encoding="utf-8")
            files.append(File(f"{PAGES}/{name}", src_dir=str(rendered), dest_dir=config.site_dir,
                              use_directory_urls=config.use_directory_urls))
    return files


# <script src="http(s)://..."></script>, and inline scripts that import from a URL (mermaid's loader)
_REMOTE_SCRIPT = re.compile(r"<script\b[^>]*\bsrc\s*=\s*[\"']?(?:https?:)?//[^>]*>\s*</script>", re.I)
_IMPORTING_SCRIPT = re.compile(r"<script\b[^>]*>(?:(?!</script>).)*?(?:import|from)\s*\(?\s*[\"'](?:https?:)?//"
                               r"(?:(?!</script>).)*</script>", re.I | re.S)
_MATHJAX_CONFIG = re.compile(r"<!-- Load mathjax -->.*?<!-- End of mathjax configuration -->", re.S)
_EMPTY_SCRIPT = re.compile(r"<script\s+src\s*=\s*[\"']\s*[\"']\s*>\s*</script>", re.I)


def on_page_content(html, page, config, files):
    """Notebook pages: drop the MathJax and mermaid loaders nbconvert adds (they fetch from CDNs; the
    notebooks have neither math nor diagrams)."""
    if not page.file.src_uri.startswith(f"{PAGES}/") or not page.file.src_uri.endswith(".ipynb"):
        return html
    html = _MATHJAX_CONFIG.sub("", html)
    html = _IMPORTING_SCRIPT.sub("", html)
    html = _REMOTE_SCRIPT.sub("", html)
    return _EMPTY_SCRIPT.sub("", html)
