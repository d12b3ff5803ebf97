// What Triton made of one kernel below its Python source (compiler/SCHEMA.md, kernels[].ir):
// a tab per IR stage (ttir, ttgir, llir, ptx, sass), the compiled kernel's resources, and the
// notes of what is missing or was cut. `line_map` links each IR line to the kernel source line it
// came from, both ways: clicking an IR line selects that source line (a "kernel_line" selection,
// so provenance goes on to post-grad nodes, FX nodes and user lines), and lit or selected source
// lines light the IR lines made from them.
// A stage is drawn the first time its tab is opened, as a virtual list: PTX and SASS run to tens
// of thousands of lines.

import { h, clear } from "./dom.js";
import { VirtualList } from "./virtual.js";

const list = (value) => (Array.isArray(value) ? value : []);
const STAGE_ORDER = ["ttir", "ttgir", "llir", "ptx", "sass"];
const STAGE_LABEL = { ttir: "TTIR", ttgir: "TTGIR", llir: "LLVM IR", ptx: "PTX", sass: "SASS" };
const LINE_H = 18;
const META_KEYS = [
  ["registers", "registers"],
  ["spills", "spills"],
  ["shared_memory", "shared memory (bytes)"],
  ["num_warps", "num_warps"],
  ["num_stages", "num_stages"],
  ["target", "target"],
];
const COMMENT = /^\s*(\/\/|;|#loc|\.loc\b|\.file\b)/;

/** The smallest number in a set, or null (no spread: a set can hold 10k+ lines). */
function first(numbers) {
  let out = null;
  for (const n of numbers) if (out === null || n < out) out = n;
  return out;
}

/**
 * The IR view of kernel `kernel` appended to `container`, or null when the kernel is not a Triton
 * kernel. `marks` ({lines, selected}) are the kernel source lines lit now.
 */
export function attachIr(container, kernel, ir, ctx, marks) {
  if (!ir && kernel.language !== "triton") return null;
  const view = new IrView(String(kernel.id), ir, ctx);
  container.appendChild(view.root);
  if (marks) view.mark(marks.lines, marks.selected);
  return view;
}

export class IrView {
  /** @param {string} kernelId @param {object|undefined} ir the kernel's ir field */
  constructor(kernelId, ir, ctx) {
    this.kernelId = kernelId;
    this.ctx = ctx;
    this.root = h("div", { class: "ie-ir", "data-kernel": kernelId }, h("h4", null, "Triton IR"));
    this.lit = new Set(); // kernel source lines
    this.selected = null;
    this.clicked = null; // the IR line last clicked, in the open stage
    this.views = new Map(); // stage -> {list, irLit}
    this.open = null;
    if (!ir || typeof ir !== "object") {
      this.root.appendChild(h("p", { class: "ie-muted ie-ir-none" }, "No Triton IR in this trace: the IR stages are kept for Triton kernels compiled on a GPU."));
      return;
    }
    this.texts = ir.stages || {};
    this.lineMap = ir.line_map || {};
    this.stages = [...STAGE_ORDER.filter((st) => typeof this.texts[st] === "string"), ...Object.keys(this.texts).filter((st) => !STAGE_ORDER.includes(st))];
    this.lines = new Map(); // stage -> its text split in lines, made when the tab opens
    const truncated = ir.truncated || {};
    this.tabs = new Map(
      this.stages.map((st) => [
        st,
        h(
          "button",
          { class: "ie-btn ie-ir-tab", type: "button", role: "tab", "aria-selected": "false", "data-ir-stage": st, title: truncated[st] ? `cut at the per-stage cap (${truncated[st].toLocaleString()} characters in full)` : null, onclick: () => this.show(st) },
          STAGE_LABEL[st] || st,
          truncated[st] ? " (cut)" : "",
        ),
      ]),
    );
    this.body = h("div", { class: "ie-ir-body" }, h("p", { class: "ie-muted ie-hint" }, this.stages.length ? "Open a stage; lines with a mark come from a kernel source line: click one to select it." : "The trace holds no IR text for this kernel."));
    this.root.append(this._meta(ir.meta || {}));
    if (list(ir.notes).length) this.root.appendChild(h("ul", { class: "ie-ir-notes ie-muted" }, list(ir.notes).map((n) => h("li", null, String(n)))));
    this.root.append(h("div", { class: "ie-ir-tabs", role: "tablist" }, [...this.tabs.values()]), this.body);
  }

  _meta(meta) {
    const items = META_KEYS.filter(([key]) => meta[key] !== undefined && meta[key] !== null).map(([key, label]) =>
      h("span", { class: `ie-sum-item ie-ir-meta-${key}${key === "spills" && meta[key] > 0 ? " ie-ir-spills" : ""}` }, h("span", { class: "ie-muted" }, label), " ", h("strong", null, String(meta[key]))),
    );
    return items.length ? h("div", { class: "ie-ir-meta" }, items) : h("div", { class: "ie-ir-meta ie-muted" }, "no resource information");
  }

  /** Open stage `stage` (built the first time). */
  show(stage) {
    if (!this.tabs || !this.tabs.has(stage)) return;
    this.open = stage;
    this.clicked = null;
    for (const [st, tab] of this.tabs) {
      tab.setAttribute("aria-selected", st === stage ? "true" : "false");
      tab.classList.toggle("ie-pressed", st === stage);
    }
    if (!this.views.has(stage)) {
      const lines = String(this.texts[stage]).split("\n");
      if (lines.length > 1 && lines[lines.length - 1] === "") lines.pop();
      const mapped = list(this.lineMap[stage]);
      const vlist = new VirtualList(lines.length, (i) => this._line(stage, i + 1, lines[i], mapped[i]), { rowHeight: LINE_H, className: "ie-code ie-code-virtual ie-ir-lines", label: `${stage} of ${this.kernelId}`, minRows: 0 });
      const view = { list: vlist, mapped, irLit: new Set() };
      vlist.onRow = (i, el) => this._style(view, i + 1, el);
      this.views.set(stage, view);
    }
    const view = this.views.get(stage);
    clear(this.body).appendChild(view.list.root);
    this._light(view);
    view.list.render();
    const top = first(view.irLit);
    if (top !== null) view.list.scrollTo(top - 1);
    this.root.dataset.open = stage;
  }

  _line(stage, n, text, source) {
    const mapped = typeof source === "number";
    const row = h(
      "div",
      { class: `ie-src-line ie-ir-line${mapped ? " ie-has-prov" : ""}`, "data-line": String(n), "data-source-line": mapped ? String(source) : null, title: text.length > 120 ? text : null },
      h("span", { class: "ie-ln", "aria-hidden": "true" }, String(n)),
      h("span", { class: "ie-ir-src", "aria-hidden": "true" }, mapped ? `L${source}` : ""),
      h("span", { class: `ie-code-text${COMMENT.test(text) ? " tok-comment" : ""}` }, text),
    );
    if (mapped) row.addEventListener("click", () => this._click(n, source));
    return row;
  }

  _click(n, source) {
    this.clicked = n;
    this.ctx.select({ kind: "kernel_line", id: this.kernelId, line: source });
  }

  _style(view, n, el) {
    el.classList.toggle("ie-lit", view.irLit.has(n));
    el.classList.toggle("ie-selected", view === this.views.get(this.open) && this.clicked === n && view.irLit.has(n));
  }

  /** Recompute the IR lines of `view` made from the marked source lines. */
  _light(view) {
    const want = this.selected !== null ? new Set([this.selected]) : this.lit;
    view.irLit = new Set();
    view.mapped.forEach((source, i) => {
      if (source !== null && want.has(source)) view.irLit.add(i + 1);
    });
    for (const [i, el] of view.list.rows) this._style(view, i + 1, el);
  }

  /** The kernel source lines lit now (`lines`) and the selected one (a number or null). */
  mark(lines, selected) {
    this.lit = new Set([...(lines || [])].map(Number));
    this.selected = selected === null || selected === undefined ? null : Number(selected);
    const view = this.open ? this.views.get(this.open) : null;
    if (!view) return;
    this._light(view);
    if (this.clicked !== null && view.irLit.has(this.clicked)) return; // the click came from here: keep the view still
    this.clicked = null;
    const top = first(view.irLit);
    if (top !== null) view.list.scrollTo(top - 1);
  }
}
