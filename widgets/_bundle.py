"""Where the committed front-end bundle lives, and how to tell it is stale.

The bundle (static/explorer.js + explorer.css) is built by build.mjs with node,
but CI and users never need node: the bundle is committed. Its header records a
sha256 of the sources it was built from; `source_hash()` recomputes the same
digest in Python so a test catches a bundle that was not rebuilt after an edit.
"""

from __future__ import annotations

import hashlib
import re
from functools import lru_cache
from pathlib import Path

WIDGETS_DIR = Path(__file__).resolve().parent
STATIC_DIR = WIDGETS_DIR / "static"
BUNDLE_JS = STATIC_DIR / "explorer.js"
BUNDLE_CSS = STATIC_DIR / "explorer.css"

_HASH_RE = re.compile(r"sources-sha256: ([0-9a-f]{64})")


def hashed_files(root: Path = WIDGETS_DIR) -> list[str]:
    """Paths (relative to widgets/) whose bytes the bundle depends on, sorted."""
    sources = [f"js/{p.name}" for p in (root / "js").iterdir() if p.is_file()]
    return sorted(sources + ["build.mjs", "package-lock.json"])


def source_hash(root: Path = WIDGETS_DIR) -> str:
    """The digest build.mjs writes into the bundle header (same recipe, byte for byte)."""
    digest = hashlib.sha256()
    for rel in hashed_files(root):
        digest.update(rel.encode())
        digest.update(b"\0")
        digest.update((root / rel).read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()


def recorded_hash(path: Path = BUNDLE_JS) -> str | None:
    """The source digest stored in a bundle's header, or None if it has none."""
    with path.open(encoding="utf-8") as fh:
        head = fh.read(512)
    match = _HASH_RE.search(head)
    return match.group(1) if match else None


@lru_cache(maxsize=None)
def bundle_js() -> str:
    return BUNDLE_JS.read_text(encoding="utf-8")


@lru_cache(maxsize=None)
def bundle_css() -> str:
    return BUNDLE_CSS.read_text(encoding="utf-8")
