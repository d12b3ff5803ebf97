// A list that builds only the rows in view (plus a margin), for stages with tens of thousands of
// rows (loop IR, kernels, fused groups, long sources). Rows have one fixed height; the list keeps a
// spacer as tall as all rows so the scrollbar tells the truth.

import { h } from "./dom.js";

const OVERSCAN = 30;

export class VirtualList {
  /**
   * @param {number} count  rows
   * @param {(index: number) => HTMLElement} makeRow
   * @param {{rowHeight: number, className?: string, label?: string, minRows?: number}} options
   *   below `minRows` every row is built at once (small lists behave as plain lists)
   */
  constructor(count, makeRow, options) {
    this.count = count;
    this.makeRow = makeRow;
    this.rowHeight = options.rowHeight;
    this.rows = new Map(); // index -> element
    this.onRow = null; // (index, element) -> void, to restyle rows as they are built
    this.decorators = []; // more (index, element) hooks that views do not replace (keyboard cursor)
    this.body = h("div", { class: "ie-vlist-body", style: `height:${count * this.rowHeight}px` });
    this.root = h("div", { class: `ie-vlist ie-scroll ${options.className || ""}`, role: "list", "aria-label": options.label || null }, this.body);
    this.all = count <= (options.minRows ?? 400);
    this.root.addEventListener("scroll", () => this.render());
    if (this.all) this.render();
  }

  /** Build the rows in view; drop the ones that left it. Call again when the list is shown. */
  render() {
    const height = this.root.clientHeight || 600;
    const first = this.all ? 0 : Math.max(0, Math.floor(this.root.scrollTop / this.rowHeight) - OVERSCAN);
    const last = this.all ? this.count - 1 : Math.min(this.count - 1, Math.ceil((this.root.scrollTop + height) / this.rowHeight) + OVERSCAN);
    for (const [i, el] of this.rows) {
      if (i < first || i > last) {
        el.remove();
        this.rows.delete(i);
      }
    }
    for (let i = first; i <= last; i++) {
      if (this.rows.has(i)) continue;
      const el = this.makeRow(i);
      el.style.position = "absolute";
      el.style.top = `${i * this.rowHeight}px`;
      el.style.left = "0";
      el.style.right = "0";
      el.style.height = `${this.rowHeight}px`;
      this.rows.set(i, el);
      this.body.appendChild(el);
      if (this.onRow) this.onRow(i, el);
      for (const decorate of this.decorators) decorate(i, el);
    }
  }

  /** The built element of row `index`, if it is built. */
  row(index) {
    return this.rows.get(index) || null;
  }

  /** Scroll as little as needed to show row `index` whole, and build it. */
  scrollIntoView(index) {
    const pane = this.root;
    const top = index * this.rowHeight;
    const height = pane.clientHeight || 600;
    if (top < pane.scrollTop) pane.scrollTop = top;
    else if (top + this.rowHeight > pane.scrollTop + height) pane.scrollTop = top + this.rowHeight - height;
    this.render();
  }

  /** Scroll so row `index` is in the middle, and build it. */
  scrollTo(index) {
    const pane = this.root;
    pane.scrollTop = Math.max(0, index * this.rowHeight - (pane.clientHeight || 600) / 2);
    this.render();
  }
}
