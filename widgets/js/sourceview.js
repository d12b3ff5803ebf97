// Read-only code listing with line numbers, token colours and per-line marks.
// Lines are <div>s so provenance can light up single lines and clicks map to
// 1-based line numbers, the unit the trace uses (line_nodes, kernel_lines).

import { h } from "./dom.js";
import { tokenizeLines } from "./highlight.js";

export function renderTokens(tokens) {
  return tokens.map(([type, value]) => (type === "space" || type === "punct" ? value : h("span", { class: `tok-${type}` }, value)));
}

export class SourceView {
  /**
   * @param {string} source
   * @param {string} language "cpp" | "python" | "triton" | ...
   * @param {{clickable?: (line: number) => boolean, onLineClick?: (line: number) => void, label?: string}} options
   */
  constructor(source, language, options = {}) {
    this.lines = new Map();
    const clickable = options.clickable || (() => false);
    const body = h("div", { class: "ie-code-body" });
    tokenizeLines(source, language).forEach((tokens, i) => {
      const n = i + 1;
      const canClick = clickable(n);
      const line = h(
        "div",
        { class: canClick ? "ie-src-line ie-has-prov" : "ie-src-line", "data-line": String(n) },
        h("span", { class: "ie-ln", "aria-hidden": "true" }, String(n)),
        h("span", { class: "ie-code-text" }, renderTokens(tokens)),
      );
      if (canClick && options.onLineClick) line.addEventListener("click", () => options.onLineClick(n));
      this.lines.set(n, line);
      body.appendChild(line);
    });
    this.root = h("pre", { class: "ie-code", "aria-label": options.label || "source" }, body);
    this.lit = new Set();
    this.selected = null;
  }

  /** Light up `lit` lines (numbers) and outline `selected`. */
  mark(lit, selected) {
    for (const n of this.lit) this.lines.get(n)?.classList.remove("ie-lit");
    if (this.selected !== null) this.lines.get(this.selected)?.classList.remove("ie-selected");
    this.lit = new Set([...lit].filter((n) => this.lines.has(n)));
    this.selected = selected;
    for (const n of this.lit) this.lines.get(n).classList.add("ie-lit");
    if (selected !== null) this.lines.get(selected)?.classList.add("ie-selected");
  }

  /** Scroll the nearest .ie-scroll pane (not the notebook) so line `n` is in the middle. */
  scrollTo(n) {
    const line = this.lines.get(n);
    if (line) scrollWithin(line);
  }
}

export function scrollWithin(el) {
  const pane = el.closest(".ie-scroll");
  if (!pane) return;
  const top = el.getBoundingClientRect().top - pane.getBoundingClientRect().top + pane.scrollTop;
  pane.scrollTop = Math.max(0, top - pane.clientHeight / 2);
}
