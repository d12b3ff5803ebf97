// Read-only code listing with line numbers, token colours and per-line marks.
// Lines are <div>s so provenance can light up single lines and clicks map to
// 1-based line numbers, the unit the trace uses (line_nodes, kernel_lines).
// Long listings (a big model's wrapper has tens of thousands of lines) build only
// the lines in view; marks are kept by number and applied as lines are built.

import { h } from "./dom.js";
import { tokenizeLines } from "./highlight.js";
import { VirtualList } from "./virtual.js";

const LINE_H = 18;
const VIRTUAL_FROM = 2000; // lines

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
    this.clickable = options.clickable || (() => false);
    this.onLineClick = options.onLineClick || null;
    this.lit = new Set();
    this.selected = null;
    const text = String(source);
    this.virtual = text.split("\n").length > VIRTUAL_FROM;
    if (!this.virtual) {
      this.lines = new Map();
      const body = h("div", { class: "ie-code-body" });
      tokenizeLines(text, language).forEach((tokens, i) => {
        const line = this._line(i + 1, tokens);
        this.lines.set(i + 1, line);
        body.appendChild(line);
      });
      this.root = h("pre", { class: "ie-code", "aria-label": options.label || "source" }, body);
      return;
    }
    const raw = text.split("\n");
    this.list = new VirtualList(raw.length, (i) => this._line(i + 1, tokenizeLines(raw[i], language)[0] || []), {
      rowHeight: LINE_H,
      className: "ie-code ie-code-virtual",
      label: options.label || "source",
      minRows: 0,
    });
    this.list.onRow = (i, el) => {
      this._style(i + 1, el);
      this._decorate(i + 1, el);
    };
    this.root = this.list.root;
    requestAnimationFrame(() => this.list.render());
  }

  _line(n, tokens) {
    const canClick = this.clickable(n);
    const line = h(
      "div",
      { class: canClick ? "ie-src-line ie-has-prov" : "ie-src-line", "data-line": String(n) },
      h("span", { class: "ie-ln", "aria-hidden": "true" }, String(n)),
      h("span", { class: "ie-code-text" }, renderTokens(tokens)),
    );
    if (canClick && this.onLineClick) line.addEventListener("click", () => this.onLineClick(n));
    return line;
  }

  _style(n, el) {
    el.classList.toggle("ie-lit", this.lit.has(n));
    el.classList.toggle("ie-selected", this.selected === n);
  }

  /** A mark in front of each line (a heat gutter): `decor(n)` returns an element or null. */
  decorate(decor) {
    this.decor = decor;
    const built = this.virtual ? [...this.list.rows].map(([i, el]) => [i + 1, el]) : [...this.lines];
    for (const [n, el] of built) this._decorate(n, el);
  }

  _decorate(n, el) {
    const old = el.querySelector(":scope > .ie-line-heat");
    if (old) old.remove();
    const mark = this.decor ? this.decor(n) : null;
    if (mark) el.insertBefore(mark, el.firstChild);
  }

  /** The element of line `n`, when it is built. */
  line(n) {
    return this.virtual ? this.list.row(n - 1) : this.lines.get(n) || null;
  }

  /** Light up `lit` lines (numbers) and outline `selected`. */
  mark(lit, selected) {
    const before = [...this.lit, this.selected];
    this.lit = new Set([...lit].map(Number));
    this.selected = selected;
    for (const n of new Set([...before, ...this.lit, selected])) {
      const el = n === null ? null : this.line(n);
      if (el) this._style(n, el);
    }
  }

  /** Scroll the nearest .ie-scroll pane (not the notebook) so line `n` is in the middle. */
  scrollTo(n) {
    if (this.virtual) {
      this.list.scrollTo(n - 1);
      return;
    }
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
