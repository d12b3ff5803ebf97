"""The committed bundle must match its sources; CI checks this without node."""

from __future__ import annotations

from pathlib import Path

from widgets import _bundle

WIDGETS = Path(_bundle.__file__).parent


def test_bundle_was_built_from_the_committed_sources():
    recorded = _bundle.recorded_hash()
    assert recorded is not None, "widgets/static/explorer.js has no sources-sha256 header"
    assert recorded == _bundle.source_hash(), (
        "widgets/static/explorer.js is stale: widgets/js, build.mjs or package-lock.json changed "
        "since it was built. Run `make bundle` and commit widgets/static."
    )
    assert _bundle.recorded_hash(_bundle.BUNDLE_CSS) == recorded


def test_source_hash_covers_every_source_file(tmp_path):
    # Copy the hashed files, then touch each one: every change must move the digest.
    for rel in _bundle.hashed_files():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes((WIDGETS / rel).read_bytes())
    base = _bundle.source_hash(tmp_path)
    assert base == _bundle.source_hash()
    for rel in _bundle.hashed_files():
        original = (tmp_path / rel).read_bytes()
        (tmp_path / rel).write_bytes(original + b" ")
        assert _bundle.source_hash(tmp_path) != base, rel
        (tmp_path / rel).write_bytes(original)
    (tmp_path / "js" / "new_module.js").write_text("export const x = 1;\n")
    assert _bundle.source_hash(tmp_path) != base


def test_bundle_is_one_self_contained_module():
    js = _bundle.bundle_js()
    assert "</script" not in js.lower()
    assert "import " not in js.split("*/", 1)[1][:200]  # no imports at the top: everything is bundled
    assert "export{" in js.replace(" ", "") and "default" in js
    assert "innerHTML" not in js and "insertAdjacentHTML" not in js and "outerHTML" not in js
    css = _bundle.bundle_css()
    assert ".ie-root" in css and "--jp-" in css
