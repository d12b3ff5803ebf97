// The Kernels stage: a sortable, filterable table of the graph's kernels above the source of the
// current one. Columns come from the kernels part (language, source lines, post-grad nodes, user
// lines) and, when the trace has them, from the profile (time, share of the total, as a bar) and the
// numerics report (max relative / absolute error, within tolerance or not). The table is a
// VirtualList over the rows that pass the filters, in sort order: a large graph stays instant.

import { h, clear } from "./dom.js";
import { SourceView } from "./sourceview.js";
import { VirtualList } from "./virtual.js";
import { attachIr } from "./irview.js";
import { ListNav } from "./keys.js";
import { chip } from "./stages.js";
import { kernelFacts } from "./kernelfacts.js";
import { formatError, formatMs, formatShare, heatColor, heatInk, heatLevel, scaleTop } from "./heat.js";
import { num } from "./reports.js";
import { stallTitle } from "./measures.js";
import { RooflinePanel } from "./roofline.js";
import { cudagraphBanner, kernelStates } from "./cudagraphs.js";

const list = (value) => (Array.isArray(value) ? value : []);
const ROW_H = 28;

/** Sort keys: a value per kernel row; null values sort last in both directions. */
const COLUMNS = [
  { id: "id", label: "kernel", value: (r) => r.id, title: "kernel id" },
  { id: "language", label: "lang", value: (r) => r.language },
  { id: "lines", label: "lines", value: (r) => r.lines, num: true, title: "lines of kernel source" },
  { id: "nodes", label: "nodes", value: (r) => r.nodes, num: true, title: "post-grad nodes the kernel computes" },
  { id: "user_lines", label: "user lines", value: (r) => r.userLines, num: true, title: "lines of your source it comes from" },
  { id: "time", label: "time", value: (r) => (r.time ? r.time.ms : null), num: true, needs: "time", title: "ms per run, and share of the profiled total" },
  { id: "error", label: "error", value: (r) => (r.error ? r.error.max_rel : null), num: true, needs: "error", title: "max relative error against the reference (numerics report); \"local\": the kernel's own error leaves tolerance, \"prop.\": only the error its inputs carried from the kernels before it does" },
  { id: "bound", label: "bound by", value: (r) => (r.counters ? r.counters.bound_by : null), needs: "counters", title: "what limits the kernel (Nsight Compute): memory or compute when its speed of light is at 60% of peak or more, else latency" },
  { id: "cudagraph", label: "CUDA graph", value: (r) => (r.cudagraph ? (r.cudagraph.captured ? 1 : 0) : null), num: true, needs: "cudagraph", title: "replays from a CUDA graph (mode=\"reduce-overhead\"), or why not" },
  { id: "sol", label: "SOL", value: (r) => (r.counters ? Math.max(num(r.counters.memory_sol) || 0, num(r.counters.compute_sol) || 0) : null), num: true, needs: "counters", title: "speed of light: memory (upper bar) and compute (lower bar) throughput, % of the device's peak (Nsight Compute)" },
];

const HAS = { time: "hasTime", error: "hasError", counters: "hasCounters", cudagraph: "hasCudagraphs" };
const WIDTH = { id: "minmax(12em, 1fr)", time: "12em", error: "11.5em", bound: "6.2em", sol: "8.5em", cudagraph: "11em" };

function compare(a, b) {
  if (typeof a === "number" && typeof b === "number") return Number.isNaN(a) ? (Number.isNaN(b) ? 0 : 1) : Number.isNaN(b) ? -1 : a - b;
  return String(a).localeCompare(String(b));
}

/** Row indices sorted by `column` (dir 1 ascending, -1 descending), stable, nulls last. */
export function sortRows(rows, column, dir) {
  const order = rows.map((_, i) => i);
  if (!column) return order;
  const values = rows.map((r) => column.value(r));
  return order.sort((i, j) => {
    const a = values[i];
    const b = values[j];
    const missingA = a === null || a === undefined;
    const missingB = b === null || b === undefined;
    if (missingA || missingB) return missingA === missingB ? i - j : missingA ? 1 : -1;
    return compare(a, b) * dir || i - j;
  });
}

export class KernelsStage {
  /**
   * @param {Array} kernels the kernels part
   * @param {(id: string) => Promise<object>} heavy source (and IR) of one kernel
   * @param {object} ctx select/go, `reports` (reports.js Reports or null) and `graphId` (this graph's id)
   */
  constructor(kernels, heavy, ctx) {
    this.kernels = list(kernels);
    this.byId = new Map(this.kernels.map((k) => [String(k.id), k]));
    this.heavy = heavy;
    this.ctx = ctx;
    const reports = ctx.reports || null;
    const graph = ctx.graphId;
    const first = reports && reports.firstDivergent;
    const cudagraphs = ctx.cudagraphs && ctx.cudagraphs.state !== "no GPU" ? kernelStates(ctx.cudagraphs) : null;
    this.rows = this.kernels.map((k) => {
      const id = String(k.id);
      return {
        id,
        kernel: k,
        language: String(k.language ?? ""),
        lines: typeof k.source_lines === "number" ? k.source_lines : null,
        nodes: list(k.post_grad_nodes).length,
        userLines: list(k.user_lines).length,
        time: reports ? reports.kernelTime(graph, id) : null,
        error: reports ? reports.kernelError(graph, id) : null,
        counters: reports ? reports.kernelCounters(graph, id) : null,
        cudagraph: cudagraphs ? cudagraphs.get(id) || { captured: false, partition: null, reason: "launched outside every partition" } : null,
        firstDivergent: Boolean(first && first.kernel === id && (first.graph === null || first.graph === graph)),
        search: [id, k.name, ...list(k.post_grad_nodes), ...list(k.fx_nodes)].join("\u0000").toLowerCase(),
      };
    });
    this.hasTime = this.rows.some((r) => r.time);
    this.hasError = this.rows.some((r) => r.error);
    this.hasCounters = this.rows.some((r) => r.counters);
    this.hasCudagraphs = Boolean(cudagraphs);
    this.columns = COLUMNS.filter((c) => !c.needs || this[HAS[c.needs]]);
    this.timeTop = scaleTop(this.rows.map((r) => (r.time ? r.time.ms : null)));
    this.errorTop = scaleTop(this.rows.map((r) => (r.error ? r.error.max_rel : null)));
    this.sort = { column: null, dir: 1 };
    this.filter = { text: "", language: "" };
    this.state = { selected: null, lit: new Set() };
    this.current = null;
    this.source = null;
    this.marks = { lines: new Set(), selected: null };

    this.root = h("div", { class: "ie-stage ie-kernels-stage", "data-stage": "kernels" });
    this.root.style.setProperty("--ie-kcols", this.columns.map((c) => WIDTH[c.id] || "4.6em").join(" "));
    this.info = h("span", { class: "ie-muted ie-kcount" });
    this.root.appendChild(this._toolbar());
    const banner = cudagraphBanner(ctx.cudagraphs, ctx);
    if (banner) this.root.appendChild(banner);
    // The roofline of the graph's kernels, built when its panel is first opened.
    this.roofline = ctx.roofline ? new RooflinePanel(ctx.roofline, ctx) : null;
    if (this.roofline) this.root.appendChild(this.roofline.root);
    this.headCells = new Map();
    this.root.appendChild(
      h("div", { class: "ie-krow ie-row-head", role: "row" }, this.columns.map((c) => {
        const cell = h("button", { class: `ie-khead ie-kcol-${c.id}${c.num ? " ie-num" : ""}`, type: "button", role: "columnheader", "aria-sort": "none", "data-col": c.id, title: c.title ? `${c.title}; click to sort` : "click to sort", onclick: () => this.sortBy(c.id) }, c.label);
        this.headCells.set(c.id, cell);
        return cell;
      })),
    );
    this.listBox = h("div", { class: "ie-klist-box" });
    this.detail = h("div", { class: "ie-kdetail ie-scroll" });
    this.root.append(this.listBox, this.detail);
    this._refresh();
    if (!this.kernels.length) this.detail.appendChild(h("p", { class: "ie-muted" }, "No kernels in this graph."));
    else if (!this.hasTime && !this.hasError) this.detail.appendChild(h("p", { class: "ie-muted ie-hint" }, "Run c.profile() for a time column and c.check_numerics() for an error column."));
    if (this.kernels.length) this.show(String(this.kernels[0].id));
  }

  _toolbar() {
    this.filterBox = h("input", { class: "ie-search ie-kfilter", type: "search", placeholder: "filter kernels or nodes", "aria-label": "filter kernels by id or node name" });
    this.filterBox.addEventListener("input", () => {
      this.filter.text = this.filterBox.value.trim().toLowerCase();
      this._refresh();
    });
    const languages = [...new Set(this.rows.map((r) => r.language))].sort();
    this.languageBox = h("select", { class: "ie-klang", "aria-label": "language" }, h("option", { value: "" }, "all languages"), languages.map((l) => h("option", { value: l }, l)));
    this.languageBox.addEventListener("change", () => {
      this.filter.language = this.languageBox.value;
      this._refresh();
    });
    return h("div", { class: "ie-ktools" }, this.filterBox, this.languageBox, this.info);
  }

  sortBy(columnId) {
    const column = this.columns.find((c) => c.id === columnId);
    if (!column) return;
    // A numeric column starts with the largest (where the time goes); a text column with A.
    const first = column.num ? -1 : 1;
    this.sort = { column, dir: this.sort.column === column ? -this.sort.dir : first };
    for (const [id, cell] of this.headCells) cell.setAttribute("aria-sort", id !== columnId ? "none" : this.sort.dir === 1 ? "ascending" : "descending");
    this._refresh();
  }

  /** Apply filters and sort, and rebuild the (virtual) list over the rows that remain. */
  _refresh() {
    const { text, language } = this.filter;
    const order = sortRows(this.rows, this.sort.column, this.sort.dir).filter((i) => {
      const r = this.rows[i];
      return (!language || r.language === language) && (!text || r.search.includes(text));
    });
    this.order = order;
    this.ids = order.map((i) => this.rows[i].id);
    clear(this.info).appendChild(document.createTextNode(order.length === this.rows.length ? `${order.length} kernels` : `${order.length} of ${this.rows.length} kernels`));
    this.list = new VirtualList(order.length, (i) => this._row(this.rows[order[i]]), { rowHeight: ROW_H, className: "ie-klist", label: "kernels" });
    this.list.onRow = (i, el) => this._style(i, el);
    this.nav = new ListNav(this.list, this.ids, (id) => this.ctx.select({ kind: "kernel", id }), () => this.ids.indexOf(this.state.selected ?? this.current));
    for (const [i, el] of this.list.rows) this._style(i, el);
    clear(this.listBox).appendChild(this.list.root);
    this.list.render();
  }

  shown() {
    this.list.render();
  }

  _row(r) {
    const cells = this.columns.map((c) => {
      switch (c.id) {
        case "id":
          return h(
            "span",
            { class: "ie-kcol-id ie-ellipsis", title: r.id },
            r.firstDivergent ? h("span", { class: "ie-badge ie-first-divergent", title: "the first kernel whose output leaves tolerance" }, "first divergent") : null,
            r.id,
          );
        case "language":
          return h("span", null, h("span", { class: `ie-badge ie-lang-${r.language.replace(/[^a-z]/g, "")}` }, r.language));
        case "lines":
          return h("span", { class: "ie-num" }, r.lines === null ? "–" : String(r.lines));
        case "nodes":
          return h("span", { class: "ie-num" }, String(r.nodes));
        case "user_lines":
          return h("span", { class: "ie-num" }, String(r.userLines));
        case "time":
          return this._timeCell(r);
        case "error":
          return this._errorCell(r);
        case "bound":
          return r.counters ? h("span", { class: `ie-kcol-bound ie-bound-${r.counters.bound_by}`, "data-bound": r.counters.bound_by }, r.counters.bound_by) : h("span", { class: "ie-muted", title: "no counters taken" }, "–");
        case "sol":
          return this._solCell(r);
        case "cudagraph":
          return this._cudagraphCell(r);
        default:
          return h("span");
      }
    });
    const attrs = { class: "ie-kitem ie-krow", role: "row", "data-id": r.id, onclick: () => this.ctx.select({ kind: "kernel", id: r.id }) };
    const row = h("div", attrs, cells);
    const level = r.time ? heatLevel("time", r.time.ms, this.timeTop) : null;
    if (level !== null) {
      row.classList.add("ie-heat");
      row.style.setProperty("--ie-heat", heatColor("time", level));
    }
    return row;
  }

  _timeCell(r) {
    if (!r.time) return h("span", { class: "ie-kcol-time ie-muted", title: "not seen running in the profile" }, "–");
    const level = heatLevel("time", r.time.ms, this.timeTop) ?? 0;
    const width = level * 100; // the slowest kernel fills the bar; the share is the number beside it
    return h(
      "span",
      { class: "ie-kcol-time", title: `${formatMs(r.time.ms)} ms per run, ${formatShare(r.time.fraction)} of the total, ${r.time.calls ?? "?"} calls`, "data-ms": String(r.time.ms) },
      h("span", { class: "ie-num ie-kms" }, formatMs(r.time.ms)),
      h("span", { class: "ie-bar" }, h("span", { class: "ie-bar-fill", style: `width: ${width.toFixed(1)}%; background: ${heatColor("time", level)}` })),
      h("span", { class: "ie-num ie-muted ie-kshare" }, formatShare(r.time.fraction)),
    );
  }

  _cudagraphCell(r) {
    const c = r.cudagraph;
    const where = c.partition === null ? "" : `partition ${c.partition}: `;
    return h(
      "span",
      { class: `ie-kcol-cudagraph ie-cg-${c.captured ? "captured" : "left-out"}`, "data-captured": String(c.captured), title: `${where}${c.captured ? "replays from a CUDA graph" : `not in a CUDA graph: ${c.reason}`}` },
      c.captured ? "✓ captured" : `✗ ${c.reason}`,
    );
  }

  _solCell(r) {
    const c = r.counters;
    if (!c) return h("span", { class: "ie-kcol-sol ie-muted", title: "no counters taken" }, "–");
    const memory = num(c.memory_sol) || 0;
    const compute = num(c.compute_sol) || 0;
    const bar = (kind, value) => h("span", { class: "ie-sol-bar" }, h("span", { class: `ie-sol-fill ie-sol-${kind}`, style: `width: ${Math.min(100, value).toFixed(1)}%` }));
    return h(
      "span",
      { class: "ie-kcol-sol", "data-memory": String(memory), "data-compute": String(compute), title: `memory ${memory.toFixed(1)}% · compute ${compute.toFixed(1)}% of peak; ${(num(c.duration_ns) / 1e3).toFixed(2)} us under Nsight Compute` },
      bar("memory", memory),
      bar("compute", compute),
    );
  }

  _errorCell(r) {
    const e = r.error;
    if (!e) return h("span", { class: "ie-kcol-error ie-muted", title: "not in the numerics report" }, "–");
    // within tolerance is calm (no heat), and so is an error only carried in from the kernels before:
    // only a kernel whose own (local) error leaves tolerance draws the eye
    const level = e.ok === true || (e.divergence === "propagated" && e.local_ok === true) ? null : heatLevel("error", e.max_rel, this.errorTop);
    const state = e.ok === true ? "ok" : e.ok === false ? "diverges" : "not compared";
    const local = e.local_max_rel === null ? "no local error (traced back only outside tolerance)" : `local max rel ${formatError(e.local_max_rel)} (its own nodes on the compiled program's inputs to it)`;
    const kind = e.divergence === "local" ? "its own error leaves tolerance" : e.divergence === "propagated" ? "only the error its inputs carried leaves tolerance" : null;
    return h(
      "span",
      { class: `ie-kcol-error ie-err-${state.replace(" ", "-")}`, title: `${state}${kind ? ` (${kind})` : ""}; max rel ${formatError(e.max_rel)}, max abs ${formatError(e.max_abs)}; ${local}${e.notes.length ? `\n${e.notes.join("\n")}` : ""}`, "data-ok": String(e.ok), "data-divergence": e.divergence ?? "" },
      h("span", { class: "ie-err-mark" }, e.ok === true ? "✓" : e.ok === false ? "✗" : "·"),
      h("span", { class: "ie-num", style: level === null ? null : `background: ${heatColor("error", level)}; color: ${heatInk("error", level)}` }, formatError(e.max_rel)),
      e.divergence ? h("span", { class: `ie-err-kind ie-err-${e.divergence}` }, e.divergence === "local" ? "local" : "prop.") : null,
    );
  }

  _style(i, el) {
    const id = this.ids[i];
    el.classList.toggle("ie-current", id === this.current);
    el.classList.toggle("ie-selected", this.state.selected === id);
    el.classList.toggle("ie-lit", this.state.lit.has(id));
  }

  /** Show kernel `id` in the detail pane; its source is fetched the first time. */
  show(id) {
    if (this.current === id) return;
    const k = this.byId.get(id);
    if (!k) return;
    this.current = id;
    for (const [i, el] of this.list.rows) this._style(i, el);
    this.source = null;
    this.ir = null;
    const sourceBox = h("div", { class: "ie-ksource" }, h("span", { class: "ie-muted" }, "source…"));
    clear(this.detail).append(
      h(
        "div",
        { class: "ie-card-head" },
        h("strong", { class: "ie-kernel-name" }, String(k.name ?? id)),
        h("span", { class: "ie-badge" }, String(k.language ?? "")),
        k.group ? ["group ", chip("fused", k.group, this.ctx.go)] : null,
        list(k.wrapper_lines).length ? ["wrapper ", list(k.wrapper_lines).map((l) => chip("wrapper_line", l, this.ctx.go, { label: `L${l}`, sel: { kind: "wrapper_line", id, line: Number(l) } }))] : null,
      ),
      ...kernelFacts(k.meta),
      h("p", { class: "ie-muted ie-hint" }, "Lines with a mark come from post-grad nodes: click one to follow it."),
      sourceBox,
    );
    const lineNodes = k.line_nodes || {};
    return this.heavy(id).then((parts) => {
      if (this.current !== id) return;
      this.source = new SourceView(parts.source || "", k.language === "cpp" ? "cpp" : "python", {
        label: `kernel ${id}`,
        clickable: (n) => Object.prototype.hasOwnProperty.call(lineNodes, String(n)),
        onLineClick: (n) => this.ctx.select({ kind: "kernel_line", id, line: n }),
      });
      clear(sourceBox).appendChild(this.source.root);
      this._stallHeat(id);
      this.source.mark(this.marks.lines, this.marks.selected);
      if (this.marks.scroll) this.source.scrollTo(this.marks.scroll);
      this.ir = attachIr(sourceBox, k, parts.ir, this.ctx, this.marks);
    });
  }

  /** Warp stall samples (hardware counters) on the kernel's own source lines, as a gutter of heat. */
  _stallHeat(id) {
    const stalls = this.ctx.reports ? this.ctx.reports.kernelLineStalls(this.ctx.graphId, id) : null;
    if (!stalls || !stalls.lines.size) return;
    const top = scaleTop([...stalls.lines.values()].map((line) => num(line.samples)));
    this.source.decorate((n) => {
      const line = stalls.lines.get(n);
      const samples = line ? num(line.samples) || 0 : 0;
      if (!samples) return h("span", { class: "ie-line-heat ie-heat-gutter" });
      const color = heatColor("stalls", heatLevel("stalls", samples, top) ?? 0);
      return h("span", { class: "ie-line-heat ie-heat-gutter ie-heat", style: `background: ${color}`, "data-samples": String(samples), title: stallTitle(line, stalls.total) });
    });
  }

  /** The kernel open in the detail pane, as a selection (the side panel names it when nothing is selected). */
  opened() {
    return this.current === null ? null : { kind: "kernel", id: this.current };
  }

  update(sel, links) {
    this.state.selected = sel && sel.kind === "kernel" ? String(sel.id) : null;
    this.state.lit = links.kernels;
    if (this.roofline) this.roofline.update(sel, links);
    if (links.kernels.size && !links.kernels.has(this.current)) {
      const firstLit = this.ids.find((k) => links.kernels.has(k)) ?? [...links.kernels].find((k) => this.byId.has(k));
      if (firstLit !== undefined) this.show(firstLit);
    }
    for (const [i, el] of this.list.rows) this._style(i, el);
    this.marks.lines = links.kernelLines.get(this.current) || new Set();
    this.marks.selected = sel && sel.kind === "kernel_line" && String(sel.id) === this.current ? Number(sel.line) : null;
    if (this.source) this.source.mark(this.marks.lines, this.marks.selected);
    if (this.ir) this.ir.mark(this.marks.lines, this.marks.selected);
  }

  reveal(sel, links) {
    const index = this.ids.indexOf(this.current);
    if (index >= 0) this.list.scrollTo(index);
    const lines = [...(links.kernelLines.get(this.current) || [])].sort((a, b) => a - b);
    const target = sel && sel.kind === "kernel_line" ? Number(sel.line) : lines[0];
    this.marks.scroll = target;
    if (target && this.source) this.source.scrollTo(target);
  }
}
