// One view per stage of one graph. Each exposes `root`, `update(selection, links)`
// (set highlight classes) and `reveal(selection, links)` (bring the selection or
// the first linked item into view). Views are built the first time their stage
// is shown, so the first paint only pays for the stage on screen.

import { h, clear } from "./dom.js";
import { GraphView } from "./graphview.js";
import { SourceView, scrollWithin } from "./sourceview.js";

const list = (value) => (Array.isArray(value) ? value : []);

/** A clickable id; `go` selects it and switches to its stage. */
export function chip(kind, id, go, extra = {}) {
  return h(
    "button",
    { class: `ie-chip ie-chip-${kind}`, type: "button", "data-kind": kind, "data-id": String(id), title: extra.title || null, onclick: () => go(extra.sel || { kind, id: String(id) }) },
    extra.label ?? String(id),
  );
}

function toggleMany(items, selected, lit) {
  for (const [id, el] of items) {
    el.classList.toggle("ie-selected", selected === id);
    el.classList.toggle("ie-lit", lit.has(id));
  }
}

function firstLit(items, lit) {
  for (const [id, el] of items) if (lit.has(id)) return el;
  return null;
}

export class GraphStage {
  constructor(gi, kind, ctx) {
    this.kind = kind; // "fx" | "post_grad"
    this.ctx = ctx;
    this.part = (kind === "fx" ? gi.graph.fx : gi.graph.post_grad) || {};
    this.root = h("div", { class: "ie-stage ie-stage-graph", "data-stage": kind });
    this.graphBtn = h("button", { class: "ie-btn ie-pressed", type: "button", onclick: () => this.showCode(false) }, "graph");
    this.codeBtn = h("button", { class: "ie-btn", type: "button", onclick: () => this.showCode(true) }, "code");
    this.root.appendChild(h("div", { class: "ie-stage-head" }, this.graphBtn, this.codeBtn));
    this.graphBox = h("div", { class: "ie-graph-box" });
    this.codeBox = h("div", { class: "ie-code-box ie-scroll", hidden: true });
    this.root.append(this.graphBox, this.codeBox);
    this.graph = null;
  }

  /** Build the graph once the stage is on screen (layout needs the pane's size). */
  shown() {
    if (this.graph) return;
    this.graph = new GraphView(this.graphBox, list(this.part.nodes), {
      kind: this.kind,
      onSelect: (name) => this.ctx.select({ kind: this.kind, id: name }),
    });
    this.graph.initialView();
  }

  showCode(on) {
    this.graphBtn.classList.toggle("ie-pressed", !on);
    this.codeBtn.classList.toggle("ie-pressed", on);
    this.graphBox.hidden = on;
    this.codeBox.hidden = !on;
    if (on && !this.code) {
      this.code = new SourceView(this.part.code || "", "python", { label: `${this.kind} code` });
      this.codeBox.appendChild(this.code.root);
    }
  }

  update(sel, links) {
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

export class LoopIrStage {
  constructor(gi, ctx) {
    this.root = h("div", { class: "ie-stage ie-scroll", "data-stage": "loop_ir" });
    this.items = new Map();
    const ops = list(gi.graph.loop_ir);
    if (!ops.length) this.root.appendChild(h("p", { class: "ie-muted" }, "No loop-IR nodes in this graph."));
    const openBodies = ops.length <= 40;
    for (const op of ops) {
      const name = String(op.name);
      const body = h("details", { class: "ie-ir-body" }, h("summary", null, "body"));
      let bodyView = null;
      const fill = () => {
        if (bodyView) return;
        bodyView = new SourceView(op.body || "", "python", { label: `${name} body` });
        body.appendChild(bodyView.root);
      };
      body.addEventListener("toggle", fill);
      if (openBodies) {
        body.open = true;
        fill();
      }
      const kv = (label, value) => h("div", { class: "ie-kv" }, h("span", { class: "ie-k" }, label), h("span", { class: "ie-v" }, value));
      const dict = (d) => Object.entries(d || {}).map(([k, v]) => `${k}: ${v}`).join(", ");
      const card = h(
        "div",
        { class: "ie-card ie-ir", "data-name": name },
        h(
          "div",
          { class: "ie-card-head" },
          h("button", { class: "ie-name", type: "button", onclick: () => ctx.select({ kind: "loop_ir", id: name }) }, name),
          h("span", { class: `ie-badge ie-kind-${String(op.kind).replace(/[^a-z]/g, "")}` }, String(op.kind ?? "")),
          op.eliminated ? h("span", { class: "ie-badge" }, "eliminated") : null,
          op.group ? ["group ", chip("fused", op.group, ctx.go)] : null,
          list(op.kernels).map((k) => chip("kernel", k, ctx.go)),
        ),
        kv("buffers", list(op.buffers).join(", ")),
        kv("ranges", dict(op.ranges)),
        kv("sizes", JSON.stringify(op.sizes ?? [])),
        kv("indexing", dict(op.indexing)),
        kv("reads", list(op.reads).join(", ")),
        kv("writes", list(op.writes).join(", ")),
        h("div", { class: "ie-kv" }, h("span", { class: "ie-k" }, "origins"), h("span", { class: "ie-v" }, list(op.origins).map((o) => chip("post_grad", o, ctx.go)))),
        body,
      );
      this.items.set(name, card);
      this.root.appendChild(card);
    }
  }

  update(sel, links) {
    toggleMany(this.items, sel && sel.kind === "loop_ir" ? String(sel.id) : null, links.loop_ir);
  }

  reveal(sel, links) {
    const el = (sel && sel.kind === "loop_ir" && this.items.get(String(sel.id))) || firstLit(this.items, links.loop_ir);
    if (el) scrollWithin(el);
  }
}

export class FusedStage {
  constructor(gi, ctx) {
    this.root = h("div", { class: "ie-stage ie-scroll", "data-stage": "fused" });
    this.items = new Map();
    const rows = list(gi.graph.fused).map((f) => {
      const name = String(f.name);
      const row = h(
        "tr",
        { class: "ie-fused", "data-name": name },
        h("td", null, h("button", { class: "ie-name", type: "button", onclick: () => ctx.select({ kind: "fused", id: name }) }, name)),
        h("td", null, h("span", { class: "ie-badge" }, String(f.kind ?? ""))),
        h("td", null, list(f.nodes).map((n) => chip("loop_ir", n, ctx.go))),
        h("td", null, list(f.kernels).map((k) => chip("kernel", k, ctx.go))),
        h("td", { class: "ie-muted" }, `${list(f.origins).length} post-grad nodes`),
      );
      this.items.set(name, row);
      return row;
    });
    this.root.appendChild(
      h("table", { class: "ie-table" }, h("thead", null, h("tr", null, ["group", "kind", "loop-IR nodes", "kernels", "origins"].map((c) => h("th", null, c)))), h("tbody", null, rows)),
    );
    const notFused = list(gi.graph.not_fused);
    if (notFused.length) {
      this.root.appendChild(h("h4", null, "Kept apart (Inductor's reasons)"));
      this.root.appendChild(
        h(
          "table",
          { class: "ie-table ie-not-fused" },
          h("thead", null, h("tr", null, ["node 1", "node 2", "reason"].map((c) => h("th", null, c)))),
          h("tbody", null, notFused.map((r) => h("tr", null, h("td", null, chip("loop_ir", r.node1, ctx.go)), h("td", null, chip("loop_ir", r.node2, ctx.go)), h("td", null, String(r.reason ?? ""))))),
        ),
      );
    }
  }

  update(sel, links) {
    toggleMany(this.items, sel && sel.kind === "fused" ? String(sel.id) : null, links.fused);
  }

  reveal(sel, links) {
    const el = (sel && sel.kind === "fused" && this.items.get(String(sel.id))) || firstLit(this.items, links.fused);
    if (el) scrollWithin(el);
  }
}

export class KernelsStage {
  constructor(gi, ctx) {
    this.gi = gi;
    this.ctx = ctx;
    this.root = h("div", { class: "ie-stage ie-split", "data-stage": "kernels" });
    this.items = new Map();
    const listBox = h("div", { class: "ie-klist ie-scroll" });
    for (const k of list(gi.graph.kernels)) {
      const id = String(k.id);
      const item = h(
        "button",
        { class: "ie-kitem", type: "button", "data-id": id, onclick: () => ctx.select({ kind: "kernel", id }) },
        h("span", { class: `ie-badge ie-lang-${String(k.language).replace(/[^a-z]/g, "")}` }, String(k.language ?? "")),
        " ",
        String(k.name ?? id),
      );
      this.items.set(id, item);
      listBox.appendChild(item);
    }
    if (!this.items.size) listBox.appendChild(h("p", { class: "ie-muted" }, "No kernels in this graph."));
    this.detail = h("div", { class: "ie-kdetail ie-scroll" });
    this.root.append(listBox, this.detail);
    this.current = null;
    this.source = null;
    const first = list(gi.graph.kernels)[0];
    if (first) this.show(String(first.id));
  }

  show(id) {
    if (this.current === id) return;
    const k = this.gi.kernels.get(id);
    if (!k) return;
    this.current = id;
    for (const [kid, el] of this.items) el.classList.toggle("ie-current", kid === id);
    const lineNodes = k.line_nodes || {};
    this.source = new SourceView(k.source || "", k.language === "cpp" ? "cpp" : "python", {
      label: `kernel ${id}`,
      clickable: (n) => Object.prototype.hasOwnProperty.call(lineNodes, String(n)),
      onLineClick: (n) => this.ctx.select({ kind: "kernel_line", id, line: n }),
    });
    const meta = k.meta && Object.keys(k.meta).length ? JSON.stringify(k.meta) : null;
    clear(this.detail).append(
      h(
        "div",
        { class: "ie-card-head" },
        h("strong", { class: "ie-kernel-name" }, String(k.name ?? id)),
        h("span", { class: "ie-badge" }, String(k.language ?? "")),
        k.group ? ["group ", chip("fused", k.group, this.ctx.go)] : null,
        list(k.wrapper_lines).length ? ["wrapper ", list(k.wrapper_lines).map((l) => chip("wrapper_line", l, this.ctx.go, { label: `L${l}`, sel: { kind: "wrapper_line", id, line: Number(l) } }))] : null,
      ),
      meta ? h("div", { class: "ie-kv" }, h("span", { class: "ie-k" }, "meta"), h("code", { class: "ie-v" }, meta)) : null,
      h("p", { class: "ie-muted ie-hint" }, "Lines with a mark come from post-grad nodes: click one to follow it."),
      this.source.root,
    );
  }

  update(sel, links) {
    toggleMany(this.items, sel && sel.kind === "kernel" ? String(sel.id) : null, links.kernels);
    if (links.kernels.size && !links.kernels.has(this.current)) this.show([...links.kernels].find((k) => this.items.has(k)) ?? this.current);
    if (!this.source) return;
    const lines = links.kernelLines.get(this.current) || new Set();
    const selected = sel && sel.kind === "kernel_line" && String(sel.id) === this.current ? Number(sel.line) : null;
    this.source.mark(lines, selected);
  }

  reveal(sel, links) {
    const lines = [...(links.kernelLines.get(this.current) || [])].sort((a, b) => a - b);
    const target = sel && sel.kind === "kernel_line" ? Number(sel.line) : lines[0];
    if (target && this.source) this.source.scrollTo(target);
  }
}

export class WrapperStage {
  constructor(gi, ctx) {
    this.root = h("div", { class: "ie-stage ie-scroll", "data-stage": "wrapper" });
    const wrapper = gi.graph.wrapper || {};
    const kernelLines = wrapper.kernel_lines || {};
    this.source = new SourceView(wrapper.source || "", "python", {
      label: "wrapper",
      clickable: (n) => Object.prototype.hasOwnProperty.call(kernelLines, String(n)),
      onLineClick: (n) => ctx.select({ kind: "wrapper_line", id: String(kernelLines[String(n)]), line: n }),
    });
    this.root.appendChild(this.source.root);
  }

  update(sel, links) {
    this.source.mark(links.wrapperLines, sel && sel.kind === "wrapper_line" ? Number(sel.line) : null);
  }

  reveal(sel, links) {
    const target = sel && sel.kind === "wrapper_line" ? Number(sel.line) : [...links.wrapperLines].sort((a, b) => a - b)[0];
    if (target) this.source.scrollTo(target);
  }
}

export class AutotuneStage {
  constructor(gi, ctx) {
    this.gi = gi;
    this.ctx = ctx;
    this.root = h("div", { class: "ie-stage ie-scroll", "data-stage": "autotune" });
    this.rows = list(gi.graph.autotune).map((r, i) => ({ r, i }));
    this.sort = { key: null, dir: 1 };
    if (!this.rows.length) {
      this.root.appendChild(h("p", { class: "ie-muted" }, "No autotuning in this graph (CPU kernels and default configs are not tuned)."));
      return;
    }
    this.timeHead = h("th", { class: "ie-sortable", "aria-sort": "none", title: "sort by time", onclick: () => this.sortByTime() }, "time (ms)");
    this.tbody = h("tbody");
    this.root.appendChild(
      h("table", { class: "ie-table ie-autotune" }, h("thead", null, h("tr", null, h("th", null, ""), h("th", null, "kernel"), h("th", null, "choice"), this.timeHead, h("th", null, "source"))), this.tbody),
    );
    this.lit = new Set();
    this.draw();
  }

  sortByTime() {
    this.sort = { key: "time", dir: this.sort.key === "time" ? -this.sort.dir : 1 };
    this.timeHead.setAttribute("aria-sort", this.sort.dir === 1 ? "ascending" : "descending");
    this.draw();
  }

  draw() {
    const rows = this.rows.slice();
    if (this.sort.key === "time") {
      const t = (x) => (typeof x.r.time_ms === "number" ? x.r.time_ms : Infinity);
      rows.sort((a, b) => (t(a) - t(b)) * this.sort.dir || a.i - b.i);
    }
    clear(this.tbody);
    for (const { r } of rows) {
      const kernel = String(r.kernel ?? "");
      const known = this.gi.kernels.has(kernel);
      const tr = h(
        "tr",
        { class: `ie-at-row${r.chosen ? " ie-chosen" : ""}${this.lit.has(kernel) ? " ie-lit" : ""}`, "data-kernel": kernel },
        h("td", { class: "ie-chosen-mark", title: r.chosen ? "chosen" : null }, r.chosen ? "✓" : ""),
        h("td", null, known ? chip("kernel", kernel, this.ctx.go) : kernel),
        h("td", { class: "ie-mono" }, String(r.choice ?? "")),
        h("td", { class: "ie-num" }, typeof r.time_ms === "number" ? r.time_ms.toFixed(4) : "–"),
        h("td", { class: "ie-muted" }, String(r.source ?? "")),
      );
      this.tbody.appendChild(tr);
    }
  }

  update(sel, links) {
    if (!this.rows.length) return;
    this.lit = links.kernels;
    for (const tr of this.tbody.children) tr.classList.toggle("ie-lit", this.lit.has(tr.getAttribute("data-kernel")));
  }

  reveal() {}
}
