// The explorer view: summary strip, graph picker, stage bar, the stage on screen
// and the linked panel. It owns the selection; views only report clicks.
// State that a notebook may want to read or set (graph, stage, selection) goes
// out through `onState` and comes in through `setGraph`/`setStage`/`select`.
//
// Data arrives in parts (store.js): the summary first, then each stage's part when it is shown.
// The provenance index of a graph needs its fx, post_grad, loop_ir, fused and kernels parts; it is
// loaded in the background after the first view is drawn, and a selection made before it is ready
// is applied when it is. `root.dataset.pending` counts the work in flight (tests wait for "0").

import { h, clear } from "./dom.js";
import { GraphIndex, STAGES, STAGE_OF_KIND, emptyLinks } from "./model.js";
import { GraphStage, LoopIrStage, FusedStage } from "./stages.js";
import { KernelsStage } from "./kernels.js";
import { AutotuneStage } from "./autotune.js";
import { renderLinks } from "./links.js";
import { cudagraphBanner, cudagraphLines, cudagraphsPart, partitionHeat } from "./cudagraphs.js";
import { memoryStage } from "./memory.js";
import { WrapperFxStage } from "./wrapperfx.js";
import { DynamoStage, breakLines, dynamoCount, graphOption } from "./dynamo.js";
import { ExportStage } from "./exportstage.js";
import { CompileTimeStage, compileTimeCount } from "./compiletime.js";
import { SearchBox } from "./search.js";
import { bindViewKeys } from "./keys.js";
import { watchWidth } from "./narrow.js";
import { loadReports } from "./reports.js";
import { renderReportStrip } from "./reportbar.js";
import { culpritSelection, renderCulpritStrip } from "./culprits.js";
import { colourByControl, graphHeats } from "./heat.js";
import { mark } from "./perf.js";

export const SCHEMA_VERSION = 2;
const STAGE_IDS = new Set(STAGES.map(([id]) => id));
const INDEX_PARTS = ["fx", "post_grad", "loop_ir", "fused", "kernels"];
/** Graph stages with at least this many nodes are drawn first from their outline (parts.py `outline`). */
export const OUTLINE_MIN_NODES = 2000;

/** Node records ({name, op, target, shape, dtype, module, inputs}) from an outline's columns and tables. */
export function outlineNodes(outline) {
  const columns = (outline && outline.columns) || {};
  const tables = (outline && outline.tables) || {};
  const count = (outline && outline.count) || 0;
  const fields = Object.keys(columns).filter((f) => Array.isArray(columns[f]) && columns[f].length === count);
  const nodes = new Array(count);
  for (let i = 0; i < count; i++) nodes[i] = {};
  for (const f of fields) {
    const column = columns[f];
    const table = Array.isArray(tables[f]) ? tables[f] : null; // the column holds indices into it
    for (let i = 0; i < count; i++) nodes[i][f] = table ? table[column[i]] : column[i];
  }
  return nodes;
}

/** A reason the summary cannot be shown, or null. */
export function checkSummary(summary) {
  if (!summary || typeof summary !== "object" || !Array.isArray(summary.graphs)) return "This is not an inductor-explorer trace (no graphs list).";
  if (typeof summary.version === "number" && summary.version > SCHEMA_VERSION) {
    return `This trace has schema version ${summary.version}; this viewer reads version ${SCHEMA_VERSION} or older.`;
  }
  if (!summary.graphs.length) {
    const skipped = summary.dynamo && Array.isArray(summary.dynamo.skipped_frames) ? summary.dynamo.skipped_frames : [];
    return skipped.length
      ? `Nothing was compiled: Dynamo gave up on ${skipped.length > 1 ? "these frames, which" : "this frame, which"} ran eagerly. ${skipped.join(" · ")}`
      : "The trace holds no graphs (nothing was compiled).";
  }
  return null;
}

function formatValue(v) {
  return typeof v === "string" ? v : JSON.stringify(v);
}

/** One graph of the trace: its summary entry, its parts as they arrive, its provenance index. */
export class GraphData {
  constructor(head, store) {
    this.head = head;
    this.id = String(head.id);
    this.store = store;
    this.index = null;
    this._index = null;
  }

  get label() {
    return `${this.id} · ${this.head.kind} · Dynamo graph ${this.head.dynamo_graph}`;
  }

  part(name) {
    return this.store.get(`${this.id}/${name}`);
  }

  /** What the first drawing of graph stage `kind` reads: its outline ({outline: true, nodes}) when the
   * stage is big enough to be worth it and its full part has not arrived yet; else the full part. */
  firstPart(kind) {
    const small = ((this.head.counts || {})[kind] || 0) < OUTLINE_MIN_NODES;
    if (small || this.store.peek(`${this.id}/${kind}`) !== undefined) return this.part(kind); // or already here
    return this.part(`${kind}_outline`).then(
      (outline) => {
        const nodes = outlineNodes(outline);
        mark(`outline ${kind} decoded`);
        return { outline: true, nodes };
      },
      () => this.part(kind), // a trace served without outlines
    );
  }

  /** The provenance index (model.js GraphIndex), once its parts have arrived. */
  ensureIndex() {
    if (!this._index) {
      this._index = Promise.all(INDEX_PARTS.map((p) => this.part(p))).then(([fx, postGrad, loopIr, fused, kernels]) => {
        const kernelLines = {};
        for (const k of kernels) for (const line of k.wrapper_lines || []) kernelLines[String(line)] = k.id;
        this.index = new GraphIndex({
          ...this.head,
          fx,
          post_grad: postGrad,
          loop_ir: loopIr,
          fused: fused.fused,
          not_fused: fused.not_fused,
          kernels,
          wrapper: { kernel_lines: kernelLines },
        });
        return this.index;
      });
    }
    return this._index;
  }
}

export class App {
  /** @param {HTMLElement} el @param {import("./store.js").Store} store */
  constructor(el, store, options = {}) {
    const t0 = performance.now();
    mark("mount");
    this.el = el;
    this.store = store;
    this.summary = store.summary;
    this.onState = options.onState || (() => {});
    this.whatIf = options.whatIf || null; // (graph, group) => Promise of c.what_if(unfuse=group)'s comparison
    this.root = h("div", { class: `ie-root${options.standalone ? " ie-standalone" : ""}`, "data-pending": "0" });
    clear(el).appendChild(this.root);
    const problem = checkSummary(this.summary);
    if (problem) {
      this.root.appendChild(h("div", { class: "ie-error" }, problem));
      return;
    }
    this.busy = 0;
    store.onPending(() => this._pending());
    this.graphs = this.summary.graphs.map((g) => new GraphData(g, store));
    this.views = new Map();
    const init = options.initial || {};
    const gi = this.graphs.findIndex((g) => g.id === String(init.graph));
    this.graphIdx = gi >= 0 ? gi : 0;
    this.stage = this._offers(init.stage) ? init.stage : "fx";
    this.selection = init.selection && init.selection.kind ? init.selection : null;
    this.links = emptyLinks();
    this.ctx = { select: (sel) => this.select(sel), go: (sel) => this.go(sel), graph: (id) => this.setGraph(id) };
    // The profile and numerics report on screen (reports.js): the newest of each unless one is picked.
    this.reportChoice = {};
    this.reports = loadReports(store, this.reportChoice);
    this.culprits = Array.isArray(this.summary.culprits) ? this.summary.culprits : [];
    if (this.selection && this.selection.kind === "culprit" && !this.selection.label) {
      this.selection = culpritSelection(this.culprits, Number(this.selection.id)) || this.selection;
    }
    this.culpritStrip = this.culprits.length ? h("div", { class: "ie-culprits", role: "group", "aria-label": "bisect culprit" }) : null;
    this.root.append(this._summary(), ...(this.culpritStrip ? [this.culpritStrip] : []), this._toolbar());
    this._drawCulprits();
    this._track(this.reports.then(() => this._drawReportStrip()));
    this.main = h("div", { class: "ie-main" });
    this.side = h("aside", { class: "ie-side ie-scroll", "aria-label": "linked items" });
    this.root.appendChild(h("div", { class: "ie-body" }, this.main, this.side));
    bindViewKeys(this, { standalone: options.standalone });
    this.unwatchWidth = watchWidth(this.root);
    // Resolves once the first stage is drawn and a frame has shown it (or after a second where frames
    // are held back, as in a hidden tab): the rest of the graph's parts load behind it.
    let painted;
    this.firstFrame = new Promise((resolve) => (painted = resolve));
    this._track(this.firstFrame);
    this.ready = this._track(
      this._showStage().then(() => {
        this.root.dataset.mountMs = (performance.now() - t0).toFixed(1);
        this.root.dataset.readyAt = performance.now().toFixed(1);
        mark("first stage drawn");
        // Time of the first frame after the first stage was drawn (benchmarks/render.py reads it).
        requestAnimationFrame(() =>
          setTimeout(() => {
            this.root.dataset.paintedAt = performance.now().toFixed(1);
            mark("first frame");
            painted();
          }, 0),
        );
        return this._applySelection(true);
      }),
    );
    this.ready.then(() => setTimeout(painted, 1000));
    // The provenance index loads behind the first view, so the first click is answered at once.
    this.firstFrame.then(() => this._track(this.gd.ensureIndex()));
  }

  get gd() {
    return this.graphs[this.graphIdx];
  }

  /** Keep `root.dataset.pending` = parts in flight + our own async steps. */
  _pending() {
    this.root.dataset.pending = String(this.store.pending + this.busy);
  }

  _track(promise) {
    this.busy += 1;
    this._pending();
    const done = () => {
      this.busy -= 1;
      this._pending();
    };
    return promise.then(
      (value) => {
        done();
        return value;
      },
      (error) => {
        done();
        this._showError(error);
      },
    );
  }

  _showError(error) {
    this.main.appendChild(h("div", { class: "ie-error" }, `Could not load this view: ${error && error.message ? error.message : error}`));
  }

  _summary() {
    let kernels = 0;
    let externs = 0;
    for (const g of this.summary.graphs) {
      const counts = g.counts || {};
      externs += counts.externs || 0;
      kernels += (counts.kernels || 0) - (counts.externs || 0);
    }
    const meta = this.summary.meta || {};
    const total = meta.timings && typeof meta.timings.total === "number" ? meta.timings.total : null;
    const item = (label, value, cls = "") => h("span", { class: `ie-sum-item ${cls}` }, h("span", { class: "ie-muted" }, label), " ", h("strong", null, value));
    const toggles = Object.entries(meta.toggles || {});
    return h(
      "div",
      { class: "ie-summary", role: "group", "aria-label": "summary" },
      h("strong", { class: "ie-fn" }, String(meta.function ?? "compiled function")),
      item("device", `${meta.device ?? "?"}${meta.device_name ? ` (${meta.device_name})` : ""}`),
      item("graphs", String(this.summary.graphs.length), "ie-sum-graphs"),
      // every kernel the Kernels tabs list (extern calls included), and how many of them are extern calls
      item("kernels", String(kernels + externs), "ie-sum-kernels"),
      item("of them extern calls", String(externs), "ie-sum-externs"),
      item("compile", total === null ? "–" : `${total.toFixed(2)} s`, "ie-sum-time"),
      h(
        "span",
        { class: "ie-sum-item ie-sum-toggles" },
        h("span", { class: "ie-muted" }, "toggles"),
        " ",
        toggles.length ? toggles.map(([k, v]) => h("span", { class: "ie-badge" }, `${k}=${formatValue(v)}`)) : h("span", { class: "ie-muted" }, "defaults"),
      ),
      meta.torch ? item("torch", String(meta.torch)) : null,
      (this.reportStrip = h("span", { class: "ie-sum-runs" })),
    );
  }

  async _drawReportStrip() {
    renderReportStrip(this.reportStrip, await this.reports, {
      onPick: (kind, index) => this.pickReport(kind, index),
      goKernel: (graph, kernel) => this.goKernel(graph, kernel),
    });
  }

  /** Show another profile or numerics report: every view is rebuilt with its numbers. */
  pickReport(kind, index) {
    this.reportChoice = { ...this.reportChoice, [kind]: index };
    this.reports = loadReports(this.store, this.reportChoice);
    this.views.clear();
    return this._track(this.reports.then(() => this._drawReportStrip()).then(() => this._showStage()).then(() => this._applySelection(false)));
  }

  _drawCulprits() {
    if (!this.culpritStrip) return;
    const sel = this.selection;
    renderCulpritStrip(this.culpritStrip, this.culprits, {
      onPick: (i) => this.selectCulprit(i),
      selected: sel && sel.kind === "culprit" ? Number(sel.id) : null,
    });
  }

  /** Select level `index` of the bisect's culprit: its graph is shown, what it names lights up. */
  async selectCulprit(index) {
    const culprit = this.culprits[index];
    if (!culprit) return undefined;
    if (culprit.graph && culprit.graph !== this.gd.id) await this.setGraph(culprit.graph);
    return this.select(culpritSelection(this.culprits, index));
  }

  /** What `selection` lights in graph index `index`: a culprit level by what it names, else by provenance. */
  _linked(index, selection) {
    if (!index) return emptyLinks();
    if (selection && selection.kind === "culprit") {
      const culprit = this.culprits[Number(selection.id)];
      return culprit && (!culprit.graph || culprit.graph === this.gd.id) ? index.linkedCulprit(culprit) : emptyLinks();
    }
    return index.linked(selection);
  }

  /** Select kernel `kernel` of graph `graph` (null: the current graph) in the Kernels stage. */
  async goKernel(graph, kernel) {
    if (graph && graph !== this.gd.id) await this.setGraph(graph);
    return this.go({ kind: "kernel", id: String(kernel) });
  }

  _toolbar() {
    this.picker = h(
      "select",
      { class: "ie-graph-picker", "aria-label": "graph" },
      this.graphs.map((g, i) => graphOption(this.summary, g, i)),
    );
    this.picker.value = String(this.graphIdx);
    this.picker.addEventListener("change", () => this.setGraph(this.graphs[Number(this.picker.value)].id));
    this.stageButtons = new Map();
    const bar = h("div", { class: "ie-stagebar", role: "tablist" });
    for (const [id, label] of STAGES) {
      if (id === "export" && !this.summary.export) continue; // only an AOT compilation has one
      const count = h("span", { class: "ie-count" });
      const title = { export: "what torch.export produced: signature, dynamic dims, the exported graph", dynamo: "guards and graph breaks of the whole compilation", compile_time: "where the compile's own time went, every graph" }[id] ?? `${label} in the graph shown`;
      const btn = h("button", { class: "ie-stage-btn", type: "button", role: "tab", "data-stage": id, title, onclick: () => this.setStage(id) }, label, " ", count);
      this.stageButtons.set(id, { btn, count });
      bar.appendChild(btn);
    }
    this.search = new SearchBox(this);
    return h("div", { class: "ie-toolbar" }, this.picker, bar, this.search.root);
  }

  /** The view of `stage` for the current graph, built once its parts arrived. */
  _view(stage) {
    const key = `${this.graphIdx}/${stage}`;
    if (!this.views.has(key)) {
      const gd = this.gd;
      const measured = this.reports.then((reports) => ({ ...this.ctx, reports, graphId: gd.id }));
      const graphStage = (kind) =>
        Promise.all([gd.firstPart(kind), measured, kind === "post_grad" ? cudagraphsPart(gd) : null]).then(([p, ctx, cudagraphs]) => {
          const stage = new GraphStage(p, kind, ctx);
          const heats = graphHeats(ctx.reports, gd.id, kind);
          if (cudagraphs) heats.set("CUDA graph", partitionHeat(cudagraphs)); // partitions drawn on the post-grad graph
          const control = colourByControl(heats, (heat) => stage.setHeat(heat));
          if (control) stage.head.appendChild(control);
          const banner = cudagraphBanner(cudagraphs, this.ctx);
          if (banner) stage.root.insertBefore(banner, stage.graphBox);
          // The full part comes behind the first drawing (its parse would hold up the first frame).
          if (p.outline) this.firstFrame.then(() => this._track(gd.part(kind).then((full) => stage.setPart(full))));
          return stage;
        });
      const make = {
        fx: () => graphStage("fx"),
        post_grad: () => graphStage("post_grad"),
        loop_ir: () => gd.part("loop_ir").then((p) => new LoopIrStage(p, () => gd.part("loop_ir_bodies"), this.ctx)),
        fused: () => gd.part("fused").then((p) => new FusedStage(p, { ...this.ctx, graphId: gd.id, whatIf: this.whatIf })),
        kernels: () => Promise.all([gd.part("kernels"), measured, cudagraphsPart(gd)]).then(([p, ctx, cudagraphs]) => new KernelsStage(p, (id) => gd.part(`kernel/${id}`), { ...ctx, roofline: () => gd.part("roofline"), cudagraphs })),
        wrapper: () => gd.part("wrapper").then((p) => new WrapperFxStage(p, this.ctx)),
        memory: () => memoryStage(gd, this.ctx),
        export: () => (this.summary.export ? this.store.get("export") : Promise.resolve(null)).then((d) => new ExportStage(d)),
        dynamo: () => ((this.summary.parts || []).includes("dynamo") ? this.store.get("dynamo") : Promise.resolve(null)).then((d) => new DynamoStage(d, this.ctx)),
        // One view for the whole compilation, whichever graph is shown: a click that shows another graph
        // keeps its zoom and scroll.
        compile_time: () =>
          (this.compileTimeView ??= (this.summary.compile_time ? this.store.get("compile_time_chart") : Promise.resolve(null)).then(
            (chart) => new CompileTimeStage(chart, { ...this.ctx, currentGraph: () => this.gd.id, graphs: this.summary.graphs, chrome: () => this.store.get("compile_time_chrome") }),
          )),
        autotune: () => Promise.all([gd.part("autotune"), gd.part("kernels")]).then(([records, kernels]) => new AutotuneStage(records, new Set(kernels.map((k) => String(k.id))), this.ctx)),
      }[stage];
      this.views.set(key, make());
    }
    return this.views.get(key);
  }

  async _showStage() {
    const counts = this.gd.head.counts || {};
    for (const [id, { btn, count }] of this.stageButtons) {
      btn.setAttribute("aria-selected", id === this.stage ? "true" : "false");
      btn.classList.toggle("ie-active", id === this.stage);
      const text = id === "export" ? String(this.summary.export?.inputs ?? "") : id === "dynamo" ? dynamoCount(this.summary) : id === "compile_time" ? compileTimeCount(this.summary) : String(counts[id] ?? 0);
      clear(count).appendChild(document.createTextNode(text));
    }
    const stage = this.stage;
    const graphIdx = this.graphIdx;
    if (!this.views.has(`${graphIdx}/${stage}`)) clear(this.main).appendChild(h("div", { class: "ie-muted ie-loading" }, `loading ${stage}…`));
    const view = await this._view(stage);
    if (stage !== this.stage || graphIdx !== this.graphIdx) return null; // another stage was asked for meanwhile
    if (this.main.firstChild !== view.root) clear(this.main).appendChild(view.root);
    if (view.shown) view.shown();
    view.update(this.selection, this.links);
    return view;
  }

  /** Recompute the links of the selection (waiting for the graph's index) and redraw them everywhere. */
  async _applySelection(reveal) {
    const gd = this.gd;
    const selection = this.selection;
    const index = selection ? await gd.ensureIndex() : gd.index;
    if (gd !== this.gd || selection !== this.selection) return; // superseded
    this.links = this._linked(index, selection);
    this._drawCulprits();
    const view = await this._view(this.stage);
    if (gd !== this.gd || selection !== this.selection) return;
    view.update(selection, this.links);
    if (reveal) view.reveal(selection, this.links);
    // What the stage shows without being asked (the Kernels stage opens its first kernel), so the panel
    // does not say "nothing" beside an open kernel.
    const open = !selection && view.opened ? view.opened() : null;
    const sources = selection ? await this.store.get("sources").catch(() => ({})) : {};
    const breaks = selection ? await breakLines(this.store, this.summary) : new Map();
    const cudagraphs = selection ? cudagraphLines(await cudagraphsPart(gd)) : new Map();
    const reports = await this.reports;
    const kernelSources = new Map();
    await Promise.all([...this.links.kernelLines.keys()].map((kid) => gd.part(`kernel/${kid}`).then((p) => kernelSources.set(kid, p.source || ""), () => {})));
    if (gd !== this.gd || selection !== this.selection) return;
    renderLinks(this.side, {
      sources,
      breaks,
      cudagraphs,
      gi: index,
      kernelSources,
      sel: selection,
      open,
      links: this.links,
      reports,
      graph: gd.id,
      select: (sel) => this.select(sel),
      go: (sel) => this.go(sel),
      clearSelection: () => this.select(null),
    });
  }

  _emit(quiet) {
    if (!quiet) this.onState({ graph: this.gd.id, stage: this.stage, selection: this.selection || {} });
  }

  /** Select an item ({kind, id, line?}) in the current graph; null clears. Resolves when drawn. */
  select(sel, { quiet = false, reveal = true } = {}) {
    // a culprit level asked for by Python ({kind, id}) gets its words here
    if (sel && sel.kind === "culprit" && !sel.label) sel = culpritSelection(this.culprits, Number(sel.id)) || sel;
    this.selection = sel && sel.kind ? sel : null;
    this._emit(quiet);
    return this._track(this._applySelection(reveal));
  }

  /** Select an item and switch to the stage that shows it. */
  go(sel) {
    const stage = STAGE_OF_KIND[sel.kind];
    if (stage && stage !== this.stage) {
      this.stage = stage;
      this._track(this._showStage());
    }
    return this.select(sel);
  }

  /** Whether this compilation has stage `stage` (only an AOT compilation has an Export stage). */
  _offers(stage) {
    return STAGE_IDS.has(stage) && (stage !== "export" || Boolean(this.summary.export));
  }

  setStage(stage, { quiet = false } = {}) {
    if (!this._offers(stage)) return Promise.resolve();
    this.stage = stage;
    this._emit(quiet);
    return this._track(
      this._showStage().then((view) => {
        if (view) view.reveal(this.selection, this.links);
        if (view && !this.selection) return this._applySelection(false); // the panel names what this stage opened
        return undefined;
      }),
    );
  }

  /** Switch graph by id ("g1"); the selection is dropped since ids are per graph. */
  setGraph(id, { quiet = false } = {}) {
    const idx = this.graphs.findIndex((g) => g.id === String(id));
    if (idx < 0) return Promise.resolve();
    let work = Promise.resolve();
    if (idx !== this.graphIdx) {
      this.graphIdx = idx;
      this.picker.value = String(idx);
      this.selection = null;
      this.links = emptyLinks();
      work = this._showStage().then(() => this._applySelection(false));
    }
    this._emit(quiet);
    return this._track(work);
  }

  /** Resolves once nothing is loading (tests and benchmarks wait on it). */
  idle() {
    return new Promise((resolve) => {
      const check = () => (this.root.dataset.pending === "0" ? resolve() : setTimeout(check, 10));
      check();
    });
  }

  destroy() {
    if (this.unwatchWidth) this.unwatchWidth();
    clear(this.el);
  }
}
