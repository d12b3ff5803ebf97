"""The static HTML export: one self-contained file, no kernel, no network.

The bundle and its CSS are inlined. The trace rides in two <script type="application/json"> elements:
the summary the first view needs, and every other part (widgets/parts.py) gzip-compressed and
base64-encoded, decoded in the browser only when a view opens it (the same lazy path as the live
widget). JSON cannot execute, but the HTML parser still ends that element at the first "</script", so
every "<", ">" and "&" in the JSON is written as a \\u escape: the text then holds no markup at all,
and JSON.parse gives back the exact strings.
"""

from __future__ import annotations

import base64
import gzip
import html
import json
from pathlib import Path
from typing import Any

from compiler.model.contract import collector_paused

from ._bundle import bundle_css, bundle_js
from .parts import TraceParts

_PAYLOAD_ID = "inductor-explorer-payload"
_PARTS_ID = "inductor-explorer-parts"


def embed_json(data: Any) -> str:
    """JSON text that is safe inside a <script> element (no '<', '>' or '&' characters)."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return (
        text.replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


def _inline_script(js: str) -> str:
    # build.mjs already rewrites these; repeat it so a hand-built bundle cannot end the element early.
    return js.replace("</script", "<\\/script").replace("</SCRIPT", "<\\/SCRIPT")


def _inline_style(css: str) -> str:
    return css.replace("</style", "<\\/style")


def compressed_parts(parts: Any) -> dict[str, str]:
    """Part key -> base64 of the gzip-compressed JSON of the part (of a TraceParts or a TraceSetParts)."""
    with collector_paused():
        return {key: base64.b64encode(gzip.compress(parts.encoded(key), compresslevel=6, mtime=0)).decode("ascii")
                for key in parts.keys()}


def render_html(payload: Any, title: str | None = None) -> str:
    """One HTML document showing the explorer for `payload` (a trace dict or a Compilation)."""
    parts = TraceParts(payload)
    summary = parts.summary()
    if title is None:
        title = f"{summary.get('meta', {}).get('function') or 'compilation'} · inductor-explorer"
    return document(title, summary, compressed_parts(parts))


def document(title: str, summary: Any, parts: dict[str, str], mount: str = "data-inductor-explorer") -> str:
    """The page: the bundle, the summary and the compressed parts, and the element marked `mount`
    (the bundle mounts a trace's view on data-inductor-explorer, a TraceSet's on data-inductor-traceset)."""
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en">',
            "<head>",
            '<meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>{html.escape(str(title))}</title>",
            f"<style>{_inline_style(bundle_css())}</style>",
            "<style>html,body{margin:0;padding:6px;background:#fff}"
            "@media (prefers-color-scheme: dark){html,body{background:#0d1117}}</style>",
            "</head>",
            "<body>",
            f'<div id="inductor-explorer" {mount}="{_PAYLOAD_ID}" data-parts="{_PARTS_ID}"></div>',
            f'<script type="application/json" id="{_PAYLOAD_ID}">{embed_json(summary)}</script>',
            f'<script type="application/json" id="{_PARTS_ID}">{embed_json(parts)}</script>',
            f'<script type="module">{_inline_script(bundle_js())}</script>',
            "</body>",
            "</html>",
            "",
        ]
    )


def write_html(payload: Any, path: str | Path, title: str | None = None) -> Path:
    """Write render_html(payload) to `path` (parents created); returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_html(payload, title), encoding="utf-8")
    return path
