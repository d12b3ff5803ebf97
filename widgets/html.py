"""The static HTML export: one self-contained file, no kernel, no network.

The bundle and its CSS are inlined; the payload rides in a
<script type="application/json"> element. JSON cannot execute, but the HTML
parser still ends that element at the first "</script", so every "<", ">"
and "&" in the JSON is written as a \\u escape: the text then holds no markup
at all, and JSON.parse gives back the exact strings.
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

from ._bundle import bundle_css, bundle_js
from .payload import payload_for

_PAYLOAD_ID = "inductor-explorer-payload"


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


def render_html(payload: Any, title: str | None = None) -> str:
    """One HTML document showing the explorer for `payload` (a trace, payload or Compilation)."""
    data = payload_for(payload)
    if title is None:
        title = f"{data.get('meta', {}).get('function') or 'compilation'} · inductor-explorer"
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
            f'<div id="inductor-explorer" data-inductor-explorer="{_PAYLOAD_ID}"></div>',
            f'<script type="application/json" id="{_PAYLOAD_ID}">{embed_json(data)}</script>',
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
