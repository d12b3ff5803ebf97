// The explorer view: summary strip, graph picker, stage bar, the stage on screen
// and the linked panel. It owns the selection; views only report clicks.
// State that a notebook may want to read or set (graph, stage, selection) goes
// out through `onState` and comes in through `setGraph`/`setStage`/`select`.

import { h, clear } from "./dom.js";
import { GraphIndex, STAGES, STAGE_OF_KIND, emptyLinks, summarize } from "./model.js";
import { GraphStage, LoopIrStage, FusedStage, KernelsStage, WrapperStage, AutotuneStage } from "./stages.js";
import { renderLinks } from "./links.js";

export const SCHEMA_VERSION = 2;
const STAGE_IDS = new Set(STAGES.map(([id]) => id));

/** A reason the payload cannot be shown, or null. */
export function checkPayload(payload) {
  if (!payload || typeof payload !== "object" || !Array.isArray(payload.graphs)) return "This is not an inductor-explorer trace (no graphs list).";
  if (typeof payload.version === "number" && payload.version > SCHEMA_VERSION) {
    return `This trace has schema version ${payload.version}; this viewer reads version ${SCHEMA_VERSION} or older.`;
  }
  if (!payload.graphs.length) return "The trace holds no graphs (nothing was compiled).";
  return null;
}

function stageCount(graph, stage) {
  const len = (x) => (Array.isArray(x) ? x.length : 0);
  switch (stage) {
    case "fx": return len(graph.fx && graph.fx.nodes);
    case "post_grad": return len(graph.post_grad && graph.post_grad.nodes);
    case "loop_ir": return len(graph.loop_ir);
    case "fused": return len(graph.fused);
    case "kernels": return len(graph.kernels);
    case "wrapper": return graph.wrapper && graph.wrapper.source ? String(graph.wrapper.source).split("\n").length : 0;
    case "autotune": return len(graph.autotune);
    default: return 0;
  }
}

function formatValue(v) {
  return typeof v === "string" ? v : JSON.stringify(v);
}

export class App {
  constructor(el, payload, options = {}) {
    const t0 = performance.now();
    this.el = el;
    this.payload = payload;
    this.onState = options.onState || (() => {});
    this.root = h("div", { class: `ie-root${options.standalone ? " ie-standalone" : ""}` });
    clear(el).appendChild(this.root);
    const problem = checkPayload(payload);
    if (problem) {
      this.root.appendChild(h("div", { class: "ie-error" }, problem));
      return;
    }
    this.graphs = payload.graphs.map((g) => new GraphIndex(g));
    this.views = new Map();
    const init = options.initial || {};
    const gi = this.graphs.findIndex((g) => String(g.graph.id) === String(init.graph));
    this.graphIdx = gi >= 0 ? gi : 0;
    this.stage = STAGE_IDS.has(init.stage) ? init.stage : "fx";
    this.selection = init.selection && init.selection.kind ? init.selection : null;
    this.links = emptyLinks();
    this.ctx = { select: (sel) => this.select(sel), go: (sel) => this.go(sel) };
    this.root.append(this._summary(), this._toolbar());
    this.main = h("div", { class: "ie-main" });
    this.side = h("aside", { class: "ie-side ie-scroll", "aria-label": "linked items" });
    this.root.appendChild(h("div", { class: "ie-body" }, this.main, this.side));
    this._showStage();
    this._applySelection(true);
    this.root.dataset.mountMs = (performance.now() - t0).toFixed(1);
    this.root.dataset.readyAt = performance.now().toFixed(1);
    // Time of the first frame after mounting (benchmarks/render.py reads it).
    requestAnimationFrame(() => setTimeout(() => (this.root.dataset.paintedAt = performance.now().toFixed(1)), 0));
  }

  get gi() {
    return this.graphs[this.graphIdx];
  }

  _summary() {
    const s = summarize(this.payload);
    const meta = s.meta;
    const item = (label, value, cls = "") => h("span", { class: `ie-sum-item ${cls}` }, h("span", { class: "ie-muted" }, label), " ", h("strong", null, value));
    const toggles = Object.entries(s.toggles);
    return h(
      "div",
      { class: "ie-summary", role: "group", "aria-label": "summary" },
      h("strong", { class: "ie-fn" }, String(meta.function ?? "compiled function")),
      item("device", `${meta.device ?? "?"}${meta.device_name ? ` (${meta.device_name})` : ""}`),
      item("graphs", String(s.graphs), "ie-sum-graphs"),
      item("kernels", String(s.kernels), "ie-sum-kernels"),
      item("extern calls", String(s.externs), "ie-sum-externs"),
      item("compile", s.compileSeconds === null ? "–" : `${s.compileSeconds.toFixed(2)} s`, "ie-sum-time"),
      h(
        "span",
        { class: "ie-sum-item ie-sum-toggles" },
        h("span", { class: "ie-muted" }, "toggles"),
        " ",
        toggles.length ? toggles.map(([k, v]) => h("span", { class: "ie-badge" }, `${k}=${formatValue(v)}`)) : h("span", { class: "ie-muted" }, "defaults"),
      ),
      meta.torch ? item("torch", String(meta.torch)) : null,
    );
  }

  _toolbar() {
    this.picker = h(
      "select",
      { class: "ie-graph-picker", "aria-label": "graph" },
      this.graphs.map((g, i) => h("option", { value: String(i) }, g.label)),
    );
    this.picker.value = String(this.graphIdx);
    this.picker.addEventListener("change", () => this.setGraph(this.graphs[Number(this.picker.value)].graph.id));
    this.stageButtons = new Map();
    const bar = h("div", { class: "ie-stagebar", role: "tablist" });
    for (const [id, label] of STAGES) {
      const count = h("span", { class: "ie-count" });
      const btn = h("button", { class: "ie-stage-btn", type: "button", role: "tab", "data-stage": id, onclick: () => this.setStage(id) }, label, " ", count);
      this.stageButtons.set(id, { btn, count });
      bar.appendChild(btn);
    }
    return h("div", { class: "ie-toolbar" }, this.picker, bar);
  }

  _view(stage) {
    const key = `${this.graphIdx}/${stage}`;
    if (!this.views.has(key)) {
      const gi = this.gi;
      const make = {
        fx: () => new GraphStage(gi, "fx", this.ctx),
        post_grad: () => new GraphStage(gi, "post_grad", this.ctx),
        loop_ir: () => new LoopIrStage(gi, this.ctx),
        fused: () => new FusedStage(gi, this.ctx),
        kernels: () => new KernelsStage(gi, this.ctx),
        wrapper: () => new WrapperStage(gi, this.ctx),
        autotune: () => new AutotuneStage(gi, this.ctx),
      }[stage];
      this.views.set(key, make());
    }
    return this.views.get(key);
  }

  _showStage() {
    for (const [id, { btn, count }] of this.stageButtons) {
      btn.setAttribute("aria-selected", id === this.stage ? "true" : "false");
      btn.classList.toggle("ie-active", id === this.stage);
      clear(count).appendChild(document.createTextNode(String(stageCount(this.gi.graph, id))));
    }
    const view = this._view(this.stage);
    if (this.main.firstChild !== view.root) clear(this.main).appendChild(view.root);
    if (view.shown) view.shown();
    view.update(this.selection, this.links);
    return view;
  }

  _applySelection(reveal) {
    this.links = this.gi.linked(this.selection);
    const view = this._view(this.stage);
    view.update(this.selection, this.links);
    if (reveal) view.reveal(this.selection, this.links);
    renderLinks(this.side, {
      payload: this.payload,
      gi: this.gi,
      sel: this.selection,
      links: this.links,
      select: (sel) => this.select(sel),
      go: (sel) => this.go(sel),
      clearSelection: () => this.select(null),
    });
  }

  _emit(quiet) {
    if (!quiet) this.onState({ graph: String(this.gi.graph.id), stage: this.stage, selection: this.selection || {} });
  }

  /** Select an item ({kind, id, line?}) in the current graph; null clears. */
  select(sel, { quiet = false, reveal = true } = {}) {
    this.selection = sel && sel.kind ? sel : null;
    this._applySelection(reveal);
    this._emit(quiet);
  }

  /** Select an item and switch to the stage that shows it. */
  go(sel) {
    const stage = STAGE_OF_KIND[sel.kind];
    if (stage && stage !== this.stage) {
      this.stage = stage;
      this._showStage();
    }
    this.select(sel);
  }

  setStage(stage, { quiet = false } = {}) {
    if (!STAGE_IDS.has(stage)) return;
    this.stage = stage;
    const view = this._showStage();
    view.reveal(this.selection, this.links);
    this._emit(quiet);
  }

  /** Switch graph by id ("g1"); the selection is dropped since ids are per graph. */
  setGraph(id, { quiet = false } = {}) {
    const idx = this.graphs.findIndex((g) => String(g.graph.id) === String(id));
    if (idx < 0) return;
    if (idx !== this.graphIdx) {
      this.graphIdx = idx;
      this.picker.value = String(idx);
      this.selection = null;
      this._showStage();
      this._applySelection(false);
    }
    this._emit(quiet);
  }

  destroy() {
    clear(this.el);
  }
}
