// One view per stage of one graph (the Kernels and Autotune stages live in kernels.js and
// autotune.js). Each is built from the parts it needs (see app.js: the App loads them first) and
// exposes `root`, `update(selection, links)` (set highlight classes) and `reveal(selection, links)`
// (bring the selection or the first linked item into view). Views are
// built the first time their stage is shown; long lists build only the rows in view.

import { h, clear } from "./dom.js";
import { GraphView } from "./graphview.js";
import { SourceView } from "./sourceview.js";
import { VirtualList } from "./virtual.js";
import { ListNav, bindGraphKeys } from "./keys.js";
import { modulesTable } from "./modules.js";
import { WhatIfBox } from "./whatif.js";

const list = (value) => (Array.isArray(value) ? value : []);
const ROW_H = 28;
const MAX_REASONS = 500;

/** A clickable id; `go` selects it and switches to its stage. */
export function chip(kind, id, go, extra = {}) {
  return h(
    "button",
    { class: `ie-chip ie-chip-${kind}`, type: "button", "data-kind": kind, "data-id": String(id), title: extra.title || null, onclick: () => go(extra.sel || { kind, id: String(id) }) },
    extra.label ?? String(id),
  );
}

/** Selected / lit classes on the built rows of a VirtualList whose row i shows ids[i]. */
function styleRows(vlist, ids, state) {
  vlist.onRow = (i, el) => {
    el.classList.toggle("ie-selected", state.selected === ids[i]);
    el.classList.toggle("ie-lit", state.lit.has(ids[i]));
  };
  for (const [i, el] of vlist.rows) vlist.onRow(i, el);
}

function firstLitIndex(ids, lit) {
  return ids.findIndex((id) => lit.has(id));
}

export class GraphStage {
  /**
   * @param {object} part {code, nodes} of the fx or post_grad stage, or its outline ({outline: true,
   *   nodes}: what the drawing reads); `setPart` brings the full part, which the code and modules views wait for
   */
  constructor(part, kind, ctx) {
    this.kind = kind; // "fx" | "post_grad"
    this.ctx = ctx;
    this.part = part || {};
    this.view = "graph";
    this.root = h("div", { class: "ie-stage ie-stage-graph", "data-stage": kind });
    const button = (view, label) => h("button", { class: "ie-btn", type: "button", "data-view": view, onclick: () => this.showView(view) }, label);
    // the FX graph also reads by module: nodes, kernels and time per nn.Module path (modules.js)
    this.buttons = new Map([["graph", button("graph", "graph")], ["code", button("code", "code")]]);
    if (kind === "fx") this.buttons.set("modules", button("modules", "modules"));
    this.head = h("div", { class: "ie-stage-head" }, [...this.buttons.values()]);
    this.root.appendChild(this.head);
    this.heat = null;
    this.graphBox = h("div", { class: "ie-graph-box" });
    this.codeBox = h("div", { class: "ie-code-box ie-scroll", hidden: true });
    this.modulesBox = h("div", { class: "ie-modules-box ie-scroll", hidden: true });
    this.root.append(this.graphBox, this.codeBox, this.modulesBox);
    this.graph = null;
    this.showView("graph");
  }

  /** Build the graph once the stage is on screen (layout needs the pane's size). */
  shown() {
    if (this.graph) return;
    this.graph = new GraphView(this.graphBox, list(this.part.nodes), {
      kind: this.kind,
      onSelect: (name) => this.ctx.select({ kind: this.kind, id: name }),
    });
    if (this.heat) this.graph.setHeat(this.heat);
    this.graph.initialView();
    const names = list(this.part.nodes).map((n) => String(n.name));
    bindGraphKeys(this.graph.svg, names, () => this.selected, (name) => this.ctx.select({ kind: this.kind, id: name }));
  }

  /** The full part behind an outline: the drawn nodes gain their other fields, waiting views are built. */
  setPart(part) {
    if (!this.part.outline) return;
    this.part = part || {};
    if (this.graph) this.graph.setNodes(list(this.part.nodes));
    this.showView(this.view);
  }

  /** Colour nodes by a heat.js nodeHeat (null: plain); kept until the graph is built. */
  setHeat(heat) {
    this.heat = heat;
    if (this.graph) this.graph.setHeat(heat);
  }

  /** Show the graph, its code or (FX) its modules table; code and table are built when first shown. */
  showView(view) {
    this.view = view;
    for (const [name, btn] of this.buttons) btn.classList.toggle("ie-pressed", name === view);
    this.graphBox.hidden = view !== "graph";
    this.codeBox.hidden = view !== "code";
    this.modulesBox.hidden = view !== "modules";
    if (view !== "graph" && this.part.outline) {
      // the code and the modules table read the full part: shown when it arrives (setPart)
      const box = view === "code" ? this.codeBox : this.modulesBox;
      if (!box.firstChild) box.appendChild(h("div", { class: "ie-muted ie-loading" }, `loading ${view}…`));
      return;
    }
    if (view === "code" && !this.code) {
      clear(this.codeBox);
      this.code = new SourceView(this.part.code || "", "python", { label: `${this.kind} code` });
      this.codeBox.appendChild(this.code.root);
    }
    if (view === "modules" && !this.modulesBuilt) {
      this.modulesBuilt = true;
      clear(this.modulesBox);
      const times = this.ctx.reports ? this.ctx.reports.nodeTimes(this.ctx.graphId, this.kind) : new Map();
      this.modulesBox.appendChild(modulesTable(this.part.nodes, times, (name) => this.ctx.select({ kind: this.kind, id: name })));
    }
  }

  update(sel, links) {
    this.selected = sel && sel.kind === this.kind ? String(sel.id) : null;
    if (!this.graph) return;
    this.graph.highlight(sel && sel.kind === this.kind ? String(sel.id) : null, links[this.kind]);
  }

  reveal(sel, links) {
    if (!this.graph) return;
    if (sel && sel.kind === this.kind) {
      if (!this.graph.element(String(sel.id))) this.graph.centerOn(String(sel.id));
      return;
    }
    const lit = [...links[this.kind]];
    if (lit.length && !lit.some((n) => this.graph.element(n))) this.graph.centerOn(lit[0]);
  }
}

const kv = (label, value) => h("div", { class: "ie-kv" }, h("span", { class: "ie-k" }, label), h("span", { class: "ie-v" }, value));
const dict = (d) => Object.entries(d || {}).map(([k, v]) => `${k}: ${v}`).join(", ");

export class LoopIrStage {
  /** @param {Array} ops the loop_ir part (no bodies) @param {() => Promise<object>} bodies */
  constructor(ops, bodies, ctx) {
    this.ops = list(ops);
    this.ids = this.ops.map((op) => String(op.name));
    this.byName = new Map(this.ops.map((op) => [String(op.name), op]));
    this.bodies = bodies;
    this.ctx = ctx;
    this.state = { selected: null, lit: new Set() };
    this.root = h("div", { class: "ie-stage ie-split", "data-stage": "loop_ir" });
    this.list = new VirtualList(this.ops.length, (i) => this._row(this.ops[i]), { rowHeight: ROW_H, className: "ie-irlist", label: "loop-IR nodes" });
    styleRows(this.list, this.ids, this.state);
    this.nav = new ListNav(this.list, this.ids, (id) => ctx.select({ kind: "loop_ir", id }), () => this.ids.indexOf(this.state.selected ?? this.current));
    this.detail = h("div", { class: "ie-irdetail ie-scroll" });
    this.root.append(this.list.root, this.detail);
    if (!this.ops.length) this.detail.appendChild(h("p", { class: "ie-muted" }, "No loop-IR nodes in this graph."));
    this.current = null;
    if (this.ops.length) this.show(this.ids[0]);
  }

  shown() {
    this.list.render();
  }

  _row(op) {
    const name = String(op.name);
    return h(
      "div",
      { class: "ie-row ie-ir", role: "listitem", "data-name": name },
      h("button", { class: "ie-name", type: "button", onclick: () => this.ctx.select({ kind: "loop_ir", id: name }) }, name),
      h("span", { class: `ie-badge ie-kind-${String(op.kind).replace(/[^a-z]/g, "")}` }, String(op.kind ?? "")),
      op.eliminated ? h("span", { class: "ie-badge" }, "eliminated") : null,
      h("span", { class: "ie-muted ie-ellipsis" }, dict(op.ranges)),
    );
  }

  /** The full card of one loop-IR node in the detail pane (its body arrives with the bodies part). */
  show(name) {
    const op = this.byName.get(name);
    if (!op || this.current === name) return;
    this.current = name;
    const body = h("div", { class: "ie-ir-body" }, h("span", { class: "ie-muted" }, "body…"));
    clear(this.detail).appendChild(
      h(
        "div",
        { class: "ie-card ie-ir-card", "data-name": name },
        h(
          "div",
          { class: "ie-card-head" },
          h("strong", null, name),
          h("span", { class: `ie-badge ie-kind-${String(op.kind).replace(/[^a-z]/g, "")}` }, String(op.kind ?? "")),
          op.eliminated ? h("span", { class: "ie-badge" }, "eliminated") : null,
          op.group ? ["group ", chip("fused", op.group, this.ctx.go)] : null,
          list(op.kernels).map((k) => chip("kernel", k, this.ctx.go)),
        ),
        kv("buffers", list(op.buffers).join(", ")),
        kv("ranges", dict(op.ranges)),
        kv("sizes", JSON.stringify(op.sizes ?? [])),
        kv("indexing", dict(op.indexing)),
        kv("reads", list(op.reads).join(", ")),
        kv("writes", list(op.writes).join(", ")),
        h("div", { class: "ie-kv" }, h("span", { class: "ie-k" }, "origins"), h("span", { class: "ie-v" }, list(op.origins).map((o) => chip("post_grad", o, this.ctx.go)))),
        body,
      ),
    );
    this.bodies().then((all) => {
      if (this.current !== name) return;
      clear(body).appendChild(new SourceView(all[name] || "", "python", { label: `${name} body` }).root);
    });
  }

  update(sel, links) {
    this.state.selected = sel && sel.kind === "loop_ir" ? String(sel.id) : null;
    this.state.lit = links.loop_ir;
    styleRows(this.list, this.ids, this.state);
    const focus = this.state.selected || this.ids[firstLitIndex(this.ids, links.loop_ir)];
    if (focus) this.show(focus);
  }

  reveal(sel, links) {
    const target = sel && sel.kind === "loop_ir" ? this.ids.indexOf(String(sel.id)) : firstLitIndex(this.ids, links.loop_ir);
    if (target >= 0) this.list.scrollTo(target);
  }
}

export class FusedStage {
  /** @param {{fused: Array, not_fused: Array, user_lines: object}} part; `ctx.whatIf` (live widget only) asks Python to unfuse a group */
  constructor(part, ctx) {
    this.groups = list(part && part.fused);
    this.ids = this.groups.map((f) => String(f.name));
    this.state = { selected: null, lit: new Set() };
    this.root = h("div", { class: "ie-stage ie-fused-stage", "data-stage": "fused" });
    const head = h("div", { class: "ie-row ie-row-head" }, ["group", "kind", "loop-IR nodes", "kernels", "origins"].map((c) => h("span", null, c)));
    this.list = new VirtualList(this.groups.length, (i) => this._row(this.groups[i], ctx), { rowHeight: ROW_H, className: "ie-fused-list", label: "fused groups" });
    styleRows(this.list, this.ids, this.state);
    this.nav = new ListNav(this.list, this.ids, (id) => ctx.select({ kind: "fused", id }), () => this.ids.indexOf(this.state.selected));
    this.root.append(head, this.list.root);
    const lines = (part && part.user_lines) || {};
    const about = (name) => {
      const f = this.groups.find((g) => String(g.name) === name);
      return f ? { nodes: list(f.nodes).length, lines: lines[name] || 0, kind: String(f.kind ?? "") } : null;
    };
    this.whatIf = ctx.whatIf ? new WhatIfBox(ctx.graphId, ctx.whatIf, about) : null;
    if (this.whatIf) this.root.appendChild(this.whatIf.root);
    const notFused = list(part && part.not_fused);
    if (notFused.length) {
      const shown = notFused.slice(0, MAX_REASONS);
      this.root.appendChild(
        h(
          "details",
          { class: "ie-not-fused-box" },
          h("summary", null, `Kept apart: ${notFused.length} pairs (Inductor's reasons)`),
          h(
            "table",
            { class: "ie-table ie-not-fused" },
            h("thead", null, h("tr", null, ["node 1", "node 2", "reason"].map((c) => h("th", null, c)))),
            h("tbody", null, shown.map((r) => h("tr", null, h("td", null, chip("loop_ir", r.node1, ctx.go)), h("td", null, chip("loop_ir", r.node2, ctx.go)), h("td", null, String(r.reason ?? ""))))),
          ),
          notFused.length > shown.length ? h("p", { class: "ie-muted" }, `+${notFused.length - shown.length} more pairs`) : null,
        ),
      );
    }
  }

  shown() {
    this.list.render();
  }

  _row(f, ctx) {
    const name = String(f.name);
    return h(
      "div",
      { class: "ie-row ie-fused", role: "listitem", "data-name": name },
      h("span", null, h("button", { class: "ie-name", type: "button", onclick: () => ctx.select({ kind: "fused", id: name }) }, name)),
      h("span", null, h("span", { class: "ie-badge" }, String(f.kind ?? ""))),
      h("span", { class: "ie-ellipsis" }, list(f.nodes).map((n) => chip("loop_ir", n, ctx.go))),
      h("span", { class: "ie-ellipsis" }, list(f.kernels).map((k) => chip("kernel", k, ctx.go))),
      h("span", { class: "ie-muted" }, `${list(f.origins).length} post-grad nodes`),
    );
  }

  update(sel, links) {
    this.state.selected = sel && sel.kind === "fused" ? String(sel.id) : null;
    this.state.lit = links.fused;
    styleRows(this.list, this.ids, this.state);
    if (this.whatIf) this.whatIf.show(this.state.selected);
  }

  reveal(sel, links) {
    const target = sel && sel.kind === "fused" ? this.ids.indexOf(String(sel.id)) : firstLitIndex(this.ids, links.fused);
    if (target >= 0) this.list.scrollTo(target);
  }
}

export class WrapperStage {
  /** @param {{source: string, kernel_lines: object, language?: string}} wrapper (language: cpp for a C++ wrapper) */
  constructor(wrapper, ctx) {
    this.root = h("div", { class: "ie-stage ie-wrapper-stage", "data-stage": "wrapper" });
    const kernelLines = (wrapper && wrapper.kernel_lines) || {};
    const language = wrapper && wrapper.language === "cpp" ? "cpp" : "python";
    this.source = new SourceView((wrapper && wrapper.source) || "", language, {
      label: "wrapper",
      clickable: (n) => Object.prototype.hasOwnProperty.call(kernelLines, String(n)),
      onLineClick: (n) => ctx.select({ kind: "wrapper_line", id: String(kernelLines[String(n)]), line: n }),
    });
    this.root.appendChild(this.source.virtual ? this.source.root : h("div", { class: "ie-scroll ie-fill" }, this.source.root));
  }

  update(sel, links) {
    this.source.mark(links.wrapperLines, sel && sel.kind === "wrapper_line" ? Number(sel.line) : null);
  }

  reveal(sel, links) {
    const target = sel && sel.kind === "wrapper_line" ? Number(sel.line) : [...links.wrapperLines].sort((a, b) => a - b)[0];
    if (target) this.source.scrollTo(target);
  }
}
