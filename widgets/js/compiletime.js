// The Compile time stage: where the compile's own time went (compiler/SCHEMA.md "Compile time"), as an
// icicle drawn in SVG. Rows are depths of the phase tree, a block's width is its seconds: Python lays
// the blocks out (widgets/compile_time_parts.py, part `compile_time_chart`, made when the stage opens),
// this module scales them to the pane. The explorer's own rows are hatched. Below the icicle, what the
// report charged the seconds to (kernels, your lines, FX nodes, modules) as bars.
// A block or bar that names a graph, a kernel, an FX node or a user line selects it like any other
// view: the graph is shown, and the item becomes the selection (side panel, other stages).

import { h, s, clear } from "./dom.js";
import { userLineKey } from "./model.js";
import "./compiletime.css";

const list = (value) => (Array.isArray(value) ? value : []);
const ROW_H = 22;
const MIN_BLOCK_PX = 0.5; // narrower blocks are not drawn (the svg counts them in data-hidden)
const CHAR_PX = 6.6;
const baseName = (file) => String(file).split("/").pop();

export const formatSeconds = (x) => (typeof x !== "number" || !Number.isFinite(x) ? "?" : x >= 10 ? `${x.toFixed(1)} s` : x >= 0.1 ? `${x.toFixed(2)} s` : `${(x * 1e3).toFixed(1)} ms`);
const formatShare = (f) => `${(100 * f).toFixed(1)}%`;

/** The stage button's count: the report's seconds, or a dash when the trace has none. */
export function compileTimeCount(summary) {
  const ct = summary && summary.compile_time;
  return ct && typeof ct.seconds === "number" ? formatSeconds(ct.seconds) : "–";
}

/** Where a block leads: {graph?, sel?} (a kernel of a graph, a graph, or the first graph of a compile id). */
function blockTarget(block, graphs) {
  if (block.kernel && block.graph) return { graph: String(block.graph), sel: { kind: "kernel", id: String(block.kernel) } };
  if (block.graph) return { graph: String(block.graph) };
  if (block.compile_id) {
    const head = graphs.find((g) => String(g.compile_id) === String(block.compile_id));
    if (head) return { graph: String(head.id) };
  }
  return null;
}

/** The Compile time stage for the trace's report (`chart`, the compile_time_chart part; null: none). */
export class CompileTimeStage {
  /** @param {object|null} chart @param {object} ctx select/graph, currentGraph(), graphs (summary heads), chrome() */
  constructor(chart, ctx) {
    this.ctx = ctx;
    this.chart = chart && typeof chart === "object" ? chart : null;
    this.root = h("div", { class: "ie-stage ie-scroll ie-ct-stage", "data-stage": "compile_time" });
    this.items = []; // [element, match(sel, links) -> "selected" | "lit" | null]
    if (!this.chart) {
      this.root.appendChild(
        h("p", { class: "ie-muted ie-ct-empty" }, "This trace has no compile-time report: it was saved before compile times were recorded, or read from a TORCH_TRACE log without timer events. Compile again (explorer.compile) to record one."),
      );
      return;
    }
    this.blocks = list(this.chart.blocks);
    this.plotBox = h("div", { class: "ie-ct-plot" });
    this.readout = h("div", { class: "ie-ct-readout ie-muted" }, "Hover a block to read it; a block naming a graph or a kernel selects it; double-click one to zoom into it.");
    this.focus = null; // the block zoomed into (its span fills the width), or null: the whole compile
    this.root.append(this._head(), this.plotBox, this.readout, this._charges(), this._advice());
    this.svg = null;
  }

  _head() {
    const c = this.chart;
    const cats = Object.entries(c.categories || {}).sort((a, b) => b[1] - a[1]);
    this.status = h("span", { class: "ie-muted ie-ct-status" });
    return h(
      "div",
      { class: "ie-ct-head" },
      h("strong", null, "compile "),
      h("span", { class: "ie-ct-total", "data-seconds": String(c.seconds) }, formatSeconds(c.seconds)),
      h("span", { class: "ie-muted" }, ` · ${c.source}${c.rank !== undefined ? ` rank ${c.rank}` : ""} · explorer's own `),
      h("span", { class: "ie-ct-explorer-total" }, formatSeconds(c.explorer_s)),
      c.cache_saved_s ? h("span", { class: "ie-muted ie-ct-cache-saved", "data-seconds": String(c.cache_saved_s), title: "compiling that FX graph cache hits skipped (torch's time_saved_ns)" }, ` · cache hits saved ${formatSeconds(c.cache_saved_s)}`) : null,
      " ",
      (this.zoomOut = h("button", { class: "ie-btn ie-ct-zoom-out", type: "button", hidden: true, title: "show the whole compile again", onclick: () => this.zoom(null) }, "whole compile")),
      " ",
      h("button", { class: "ie-btn ie-ct-chrome", type: "button", title: "the phase tree as a Chrome / Perfetto trace (open it in ui.perfetto.dev)", onclick: () => this.downloadChrome() }, "Chrome trace"),
      this.status,
      h(
        "div",
        { class: "ie-ct-legend" },
        cats.map(([cat, sec]) => h("span", { class: `ie-ct-key ie-ct-cat-${cat}`, "data-category": cat, title: `${cat}: ${formatSeconds(sec)}, ${formatShare(c.seconds ? sec / c.seconds : 0)} of the compile` }, h("span", { class: "ie-ct-swatch" }), `${cat} ${formatSeconds(sec)}`)),
      ),
    );
  }

  /** Fetch the Chrome trace part (the file's text: parsing it would round torch's large integers) and
   * hand it to the browser as a file. */
  async downloadChrome() {
    clear(this.status).appendChild(document.createTextNode(" preparing…"));
    try {
      const text = String(await this.ctx.chrome());
      const url = URL.createObjectURL(new Blob([text], { type: "application/json" }));
      const link = h("a", { href: url, download: "compile_time.trace.json", style: "display:none" });
      this.root.appendChild(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(url), 1000);
      clear(this.status).appendChild(document.createTextNode(` compile_time.trace.json (${(text.length / 1024).toFixed(0)} KiB)`));
    } catch (error) {
      clear(this.status).appendChild(document.createTextNode(` could not build the trace: ${error && error.message ? error.message : error}`));
    }
  }

  /** Draw the icicle once the stage is on screen (its width is the pane's), and again when that changes. */
  shown() {
    if (!this.chart || this.svg) return;
    this._draw();
    if (typeof ResizeObserver === "function") {
      new ResizeObserver(() => {
        const width = this.plotBox.clientWidth;
        if (width > 0 && Math.abs(width - this.width) > 4) this._draw();
      }).observe(this.plotBox);
    }
  }

  /** Zoom into `block` (null: the whole compile): its span fills the width, blocks outside it are left out. */
  zoom(block) {
    this.focus = block && block.depth > 0 ? block : null;
    this.zoomOut.hidden = !this.focus;
    this._draw();
  }

  _draw() {
    const total = this.chart.seconds || 0;
    const width = Math.max(320, this.plotBox.clientWidth || 800);
    this.width = this.plotBox.clientWidth;
    const focus = this.focus;
    const from = focus ? focus.x_s : 0;
    const span = focus ? focus.seconds : total;
    const scale = span > 0 ? width / span : 0;
    const end = from + span;
    const depth = this.blocks.reduce((m, b) => Math.max(m, b.depth || 0), 0);
    const height = (depth + 1) * ROW_H;
    let hidden = 0;
    this.blockItems = [];
    const groups = [];
    for (const b of this.blocks) {
      // zoomed: an ancestor of the focus spans the width, a block beside it is left out
      const left = Math.max(b.x_s, from);
      const w = (Math.min(b.x_s + b.seconds, end) - left) * scale;
      if (w < MIN_BLOCK_PX) {
        hidden += 1;
        continue;
      }
      const x = (left - from) * scale;
      const target = blockTarget(b, list(this.ctx.graphs));
      const where = [b.graph, b.kernel, b.compile_id && !b.graph ? `frame ${b.compile_id}` : null].filter(Boolean).join(" · ");
      const title = `${b.name}${where ? ` (${where})` : ""}\n${formatSeconds(b.seconds)}, ${formatShare(b.share)} of the compile${b.category ? ` · ${b.category}` : ""}${b.cache ? `\nFX graph cache ${b.cache}${b.cache_saved_s ? `, saved ${formatSeconds(b.cache_saved_s)} of compiling` : ""}` : ""}${target ? `\nclick: select ${target.sel ? `kernel ${target.sel.id}` : `graph ${target.graph}`}` : ""}`;
      const chars = Math.floor((w - 6) / CHAR_PX);
      const label = `${b.name}${b.kernel ? ` ${b.kernel}` : b.graph ? ` ${b.graph}` : ""}`;
      const cat = b.category || (b.depth === 0 ? "root" : "call");
      const g = s(
        "g",
        {
          class: `ie-ct-block ie-ct-cat-${cat}${target ? " ie-ct-link" : ""}`,
          "data-id": b.id,
          "data-name": b.name,
          "data-depth": String(b.depth),
          "data-seconds": String(b.seconds),
          "data-category": b.category || null,
          "data-graph": b.graph || null,
          "data-kernel": b.kernel || null,
          "data-compile-id": b.compile_id || null,
          "data-cache": b.cache || null,
          transform: `translate(${x.toFixed(2)},${b.depth * ROW_H})`,
        },
        s("rect", { width: w.toFixed(2), height: ROW_H - 2, rx: 2 }),
        cat === "explorer" ? s("rect", { class: "ie-ct-hatch", width: w.toFixed(2), height: ROW_H - 2, rx: 2 }) : null,
        chars >= 3 ? s("text", { x: 4, y: ROW_H - 8 }, label.length > chars ? `${label.slice(0, chars - 1)}…` : label) : null,
        s("title", null, title),
      );
      g.addEventListener("pointerenter", () => this._read(b));
      g.addEventListener("dblclick", () => this.zoom(b === focus ? null : b));
      if (target) g.addEventListener("click", () => this.follow(target));
      groups.push(g);
      this.blockItems.push([g, b]);
    }
    this.svg = s(
      "svg",
      { class: "ie-ct-svg", width, height, viewBox: `0 0 ${width} ${height}`, role: "img", "aria-label": `compile time: ${formatSeconds(total)} over ${this.blocks.length} phases`, "data-seconds": String(total), "data-width": String(width), "data-hidden": String(hidden), "data-focus": focus ? focus.id : null },
      s("defs", null, s("pattern", { id: "ie-ct-hatch", width: 6, height: 6, patternUnits: "userSpaceOnUse", patternTransform: "rotate(45)" }, s("line", { x1: 0, y1: 0, x2: 0, y2: 6, class: "ie-ct-hatch-line" }))),
      groups,
    );
    clear(this.plotBox).appendChild(this.svg);
    if (this.last) this.update(...this.last);
  }

  _read(b) {
    clear(this.readout).append(
      h("strong", null, b.name),
      ` ${formatSeconds(b.seconds)} · ${formatShare(b.share)} of the compile`,
      b.category ? ` · ${b.category}` : "",
      b.graph ? ` · graph ${b.graph}` : "",
      b.kernel ? ` · kernel ${b.kernel}` : "",
      b.compile_id ? ` · compile id ${b.compile_id}` : "",
    );
    this.readout.dataset.id = b.id;
  }

  /** Show the target's graph, then select its item (the same selection a click elsewhere makes). */
  async follow(target) {
    if (target.graph && target.graph !== String(this.ctx.currentGraph())) await this.ctx.graph(target.graph);
    if (target.sel) await this.ctx.select(target.sel);
  }

  _bars(title, key, rows, row) {
    rows = list(rows);
    if (!rows.length) return null;
    const top = Math.max(...rows.map((r) => Number(r.seconds) || 0), 1e-12);
    return h(
      "details",
      { class: "ie-ct-section", "data-section": key, open: true },
      h("summary", null, h("strong", null, title), " ", h("span", { class: "ie-count" }, String(rows.length))),
      h(
        "div",
        { class: "ie-ct-bars" },
        rows.map((r) => {
          const { label, title: tip, target, match, attrs } = row(r);
          const bar = h(
            target ? "button" : "div",
            { class: `ie-ct-bar${target ? " ie-ct-link" : ""}`, type: target ? "button" : null, title: tip, "data-seconds": String(r.seconds), ...attrs, onclick: target ? () => this.follow(target) : null },
            h("span", { class: "ie-ct-bar-label ie-mono ie-ellipsis" }, label),
            h("span", { class: "ie-ct-bar-track" }, h("span", { class: "ie-ct-bar-fill", style: `width: ${((100 * (Number(r.seconds) || 0)) / top).toFixed(1)}%` })),
            h("span", { class: "ie-num" }, formatSeconds(Number(r.seconds))),
          );
          if (match) this.items.push([bar, match]);
          return bar;
        }),
      ),
    );
  }

  _charges() {
    const c = this.chart;
    const split = (r) => `${formatSeconds(r.seconds)}: ${formatSeconds(r.kernel_s)} timed per kernel, ${formatSeconds(r.spread_s)} a share of graph and frame phases (estimate)`;
    return h(
      "div",
      { class: "ie-ct-charges" },
      this._bars("kernels torch timed", "kernels", c.kernels, (k) => ({
        label: `${k.graph}/${k.kernel}`,
        title: `${formatSeconds(k.seconds)}: autotune ${formatSeconds(k.autotune_s)} over ${k.candidates} candidates, compile ${formatSeconds(k.compile_s)}`,
        target: { graph: String(k.graph), sel: { kind: "kernel", id: String(k.kernel) } },
        attrs: { "data-graph": String(k.graph), "data-kernel": String(k.kernel) },
        match: (sel, links, graph) => (graph !== String(k.graph) ? null : sel && sel.kind === "kernel" && String(sel.id) === String(k.kernel) ? "selected" : links.kernels.has(String(k.kernel)) ? "lit" : null),
      })),
      this._bars("your lines", "lines", c.lines, (r) => {
        const [file, line] = Array.isArray(r.line) ? r.line : [null, null];
        return {
          label: file === null ? r.key : `${baseName(file)}:${line}`,
          title: `${r.key}\n${split(r)}`,
          target: file === null ? null : { sel: { kind: "user_line", id: String(file), line: Number(line) } },
          attrs: file === null ? {} : { "data-file": String(file), "data-line": String(line) },
          match: file === null ? null : (sel, links) => (sel && sel.kind === "user_line" && String(sel.id) === String(file) && Number(sel.line) === Number(line) ? "selected" : links.userLines.has(userLineKey(file, line)) ? "lit" : null),
        };
      }),
      this._bars("FX nodes", "nodes", c.nodes, (r) => {
        const [graph, ...rest] = String(r.key).split("/");
        const name = rest.join("/");
        return {
          label: r.key,
          title: split(r),
          target: { graph, sel: { kind: "fx", id: name } },
          attrs: { "data-graph": graph, "data-node": name },
          match: (sel, links, current) => (current !== graph ? null : sel && sel.kind === "fx" && String(sel.id) === name ? "selected" : links.fx.has(name) ? "lit" : null),
        };
      }),
      this._bars("modules", "modules", c.modules, (r) => ({ label: r.key === "" ? "(root module)" : r.key, title: split(r), target: null, attrs: { "data-module": r.key } })),
    );
  }

  _advice() {
    const c = this.chart;
    const suggestions = list(c.suggestions);
    const recompiles = list(c.recompiles);
    const notes = list(c.notes);
    if (!suggestions.length && !recompiles.length && !notes.length) return null;
    return h(
      "div",
      { class: "ie-ct-advice" },
      suggestions.length ? h("h4", null, "what to change") : null,
      h("ul", { class: "ie-ct-suggestions" }, suggestions.map((x) => h("li", { class: "ie-ct-suggestion", "data-kind": String(x.kind) }, h("strong", null, `${x.kind} `), `(${formatSeconds(x.seconds)}) ${x.message}`))),
      recompiles.length ? h("h4", null, "recompiles") : null,
      h("ul", null, recompiles.map((r) => h("li", { class: "ie-ct-recompile" }, `${r.compile_id} ${r.function}: ${formatSeconds(r.seconds)} · ${list(r.reasons)[0] ?? ""}`))),
      notes.length ? h("ul", { class: "ie-ct-notes ie-muted" }, notes.map((n) => h("li", null, String(n)))) : null,
    );
  }

  update(sel, links) {
    if (!this.chart) return;
    this.last = [sel, links];
    const graph = String(this.ctx.currentGraph());
    for (const [el, match] of this.items) {
      const state = match(sel, links, graph);
      el.classList.toggle("ie-selected", state === "selected");
      el.classList.toggle("ie-lit", state === "lit");
    }
    for (const [el, b] of this.blockItems || []) {
      const mine = b.kernel && String(b.graph) === graph;
      el.classList.toggle("ie-selected", Boolean(mine && sel && sel.kind === "kernel" && String(sel.id) === String(b.kernel)));
      el.classList.toggle("ie-lit", Boolean(mine && links.kernels.has(String(b.kernel)) && !(sel && sel.kind === "kernel" && String(sel.id) === String(b.kernel))));
      el.classList.toggle("ie-ct-current", Boolean(b.graph) && String(b.graph) === graph);
    }
  }

  reveal() {}
}
