// The Memory stage: the wrapper's buffers over its steps (compiler/SCHEMA.md, graphs[].memory).
// An SVG plot of bytes per step (live after each step, peak while it runs), the peak marked and
// Inductor's estimate / the measured peak as reference lines; a step links to its kernel (or its
// wrapper line) like any other selection. Below it, every buffer in a virtual table: a click shows
// the buffer's live range on the plot.
// Large graphs have thousands of steps: each series is one <path>, lit steps are one <path>, and
// pointer events go to one transparent rectangle that maps x to a step.

import { h, s, clear } from "./dom.js";
import { chip } from "./stages.js";
import { VirtualList } from "./virtual.js";

const list = (value) => (Array.isArray(value) ? value : []);
const PLOT_H = 210;
const MARGIN = { left: 68, right: 14, top: 16, bottom: 22 };
const ROW_H = 24;
const BUFFER_COLUMNS = ["buffer", "bytes", "dtype", "shape", "kind", "alloc", "free", "storage / reuses"];

/** Bytes as people read them (the same units as compiler.model.formatting.fmt_bytes). */
export function formatBytes(n) {
  if (typeof n !== "number" || !Number.isFinite(n)) return "?";
  if (Math.abs(n) < 1024) return `${n.toFixed(0)} B`;
  let value = n;
  let unit = "B";
  for (unit of ["KiB", "MiB", "GiB"]) {
    value /= 1024;
    if (Math.abs(value) < 1024 || unit === "GiB") break;
  }
  return `${value.toFixed(1)} ${unit}`;
}

/** The Memory stage of graph `gd` (app.js GraphData): its memory part, or a note when it has none. */
export function memoryStage(gd, ctx) {
  const has = list(gd.head.parts).includes("memory");
  return (has ? gd.part("memory") : Promise.resolve(null)).then((memory) => new MemoryStage(memory, ctx));
}

export class MemoryStage {
  /** @param {object|null} memory the graph's memory timeline, null when the trace has none */
  constructor(memory, ctx) {
    this.ctx = ctx;
    this.root = h("div", { class: "ie-stage ie-memory-stage", "data-stage": "memory" });
    this.memory = memory && typeof memory === "object" ? memory : null;
    if (!this.memory || !list(this.memory.steps).length) {
      this.root.appendChild(
        h(
          "p",
          { class: "ie-muted ie-mem-none" },
          this.memory
            ? "The memory timeline of this graph has no steps (the wrapper makes no calls)."
            : "No memory timeline for this graph: the trace was recorded without one (older traces, or a compilation read from a TORCH_TRACE log).",
        ),
      );
      return;
    }
    this.steps = list(this.memory.steps);
    this.buffers = list(this.memory.buffers);
    this.bufferIndex = new Map(this.buffers.map((b, i) => [String(b.name), i]));
    this.state = { selectedSteps: [], litSteps: [], litBuffers: new Set(), buffer: null };
    this.plotBox = h("div", { class: "ie-mem-plot" });
    this.readout = h("div", { class: "ie-mem-readout ie-muted" }, "Hover a step to read it; click it to select its kernel.");
    this.table = new VirtualList(this.buffers.length, (i) => this._bufferRow(this.buffers[i]), { rowHeight: ROW_H, className: "ie-mem-buffers", label: "buffers" });
    this.table.onRow = (i, el) => this._styleRow(i, el);
    const parts = [
      this._summary(),
      this.plotBox,
      this.readout,
      this._atPeak(),
      this._notes(),
      h("div", { class: "ie-row ie-row-head ie-mem-row" }, BUFFER_COLUMNS.map((c) => h("span", null, c))),
      this.table.root,
    ];
    this.root.append(...parts.filter(Boolean)); // the at-peak list and the notes may be absent
    this.plot = null;
    this.hoverStep = -1;
  }

  /** Draw the plot once the stage is on screen (its width is the pane's). */
  shown() {
    if (!this.memory) return;
    if (!this.plot) {
      this._drawPlot();
      // Redrawn when the pane's width changes (a resized or narrowed panel): the plot is drawn in pixels.
      if (typeof ResizeObserver === "function") {
        new ResizeObserver(() => {
          const width = this.plotBox.clientWidth;
          if (width > 0 && Math.abs(width - this.plot.width) > 4) this._drawPlot();
        }).observe(this.plotBox);
      }
    }
    this.table.render();
  }

  _summary() {
    const m = this.memory;
    const peak = this.steps[m.peak_step];
    const item = (label, value, cls) => h("span", { class: `ie-sum-item ${cls}` }, h("span", { class: "ie-muted" }, label), " ", h("strong", null, value));
    const estimate = m.estimate && typeof m.estimate.peak_bytes === "number" ? m.estimate.peak_bytes : null;
    const measured = m.measured && typeof m.measured.peak_bytes === "number" ? m.measured : null;
    return h(
      "div",
      { class: "ie-mem-summary" },
      item("peak", formatBytes(m.peak_bytes), "ie-mem-peak-value"),
      h(
        "span",
        { class: "ie-sum-item" },
        h("span", { class: "ie-muted" }, "at step"),
        ` ${m.peak_step} `,
        peak && peak.kernel ? chip("kernel", peak.kernel, this.ctx.go) : peak ? String(peak.call ?? "") : "",
      ),
      item("inputs (caller's)", formatBytes(m.input_bytes), "ie-mem-inputs"),
      item("outputs", formatBytes(m.output_bytes), "ie-mem-outputs"),
      estimate !== null ? item("Inductor's estimate", formatBytes(estimate), "ie-mem-estimate-value") : null,
      measured ? item(`measured${measured.device ? ` (${measured.device})` : ""}`, formatBytes(measured.peak_bytes), "ie-mem-measured-value") : null,
    );
  }

  _atPeak() {
    const names = list(this.memory.at_peak).map(String);
    if (!names.length) return null;
    return h(
      "div",
      { class: "ie-mem-at-peak" },
      h("span", { class: "ie-muted" }, `alive at the peak (${names.length}): `),
      names.map((name) => h("button", { class: "ie-chip ie-mem-buffer-chip", type: "button", "data-buffer": name, onclick: () => this.showBuffer(name, true) }, name)),
    );
  }

  _notes() {
    const mismatches = list(this.memory.mismatches).map(String);
    const notes = list(this.memory.notes).map(String);
    if (!mismatches.length && !notes.length) return null;
    return h(
      "ul",
      { class: "ie-mem-notes" },
      mismatches.map((t) => h("li", { class: "ie-mem-mismatch" }, h("strong", null, "mismatch "), t)),
      notes.map((t) => h("li", { class: "ie-mem-note ie-muted" }, t)),
    );
  }

  // --------------------------------------------------------------------------------- the plot

  _drawPlot() {
    const m = this.memory;
    const n = this.steps.length;
    const width = Math.max(320, this.plotBox.clientWidth || 800);
    const estimate = m.estimate && typeof m.estimate.peak_bytes === "number" ? m.estimate.peak_bytes : null;
    const measured = m.measured && typeof m.measured.peak_bytes === "number" ? m.measured.peak_bytes : null;
    let highest = Math.max(1, estimate || 0, measured || 0); // a loop, not a spread: graphs can have 100k steps
    for (const st of this.steps) highest = Math.max(highest, st.peak_bytes || 0, st.live_bytes || 0);
    const top = highest * 1.08;
    const x0 = MARGIN.left;
    const plotW = width - MARGIN.left - MARGIN.right;
    const base = PLOT_H - MARGIN.bottom;
    const stepW = plotW / n;
    const x = (i) => x0 + i * stepW;
    const y = (bytes) => base - ((bytes || 0) / top) * (base - MARGIN.top);
    this.plot = { x, y, stepW, base, x0, n, width: this.plotBox.clientWidth };

    // One path per series: a horizontal run per step ("H"), joined by vertical moves.
    let peakD = `M${x(0)},${base}`;
    let liveD = "";
    this.steps.forEach((st, i) => {
      peakD += ` V${y(st.peak_bytes).toFixed(1)} H${x(i + 1).toFixed(1)}`;
      liveD += `${i ? " V" : `M${x(0)},`}${y(st.live_bytes).toFixed(1)} H${x(i + 1).toFixed(1)}`;
    });
    peakD += ` V${base} Z`;

    const ticks = [0, 0.5, 1].map((f) => {
      const bytes = (top / 1.08) * f;
      return s(
        "g",
        { class: "ie-mem-tick" },
        s("line", { x1: x0 - 4, x2: width - MARGIN.right, y1: y(bytes), y2: y(bytes) }),
        s("text", { x: x0 - 6, y: y(bytes) + 4, "text-anchor": "end" }, formatBytes(bytes)),
      );
    });
    const reference = (bytes, cls, label) =>
      bytes === null
        ? null
        : s(
            "g",
            { class: `ie-mem-ref ${cls}`, "data-bytes": String(bytes) },
            s("line", { x1: x0, x2: width - MARGIN.right, y1: y(bytes), y2: y(bytes) }),
            s("text", { x: width - MARGIN.right - 4, y: y(bytes) - 3, "text-anchor": "end" }, `${label} ${formatBytes(bytes)}`),
          );
    const peakStep = Number(m.peak_step);
    const peakX = x(peakStep) + stepW / 2;
    this.litPath = s("path", { class: "ie-mem-lit", d: "" });
    this.selPath = s("path", { class: "ie-mem-sel", d: "" });
    this.range = s("g", { class: "ie-mem-range-layer" });
    this.hover = s("rect", { class: "ie-mem-hover", x: 0, y: MARGIN.top, width: stepW, height: base - MARGIN.top, visibility: "hidden" });
    this.overlay = s("rect", { class: "ie-mem-overlay", x: x0, y: 0, width: plotW, height: PLOT_H });
    this.svg = s(
      "svg",
      {
        class: "ie-mem-svg",
        width,
        height: PLOT_H,
        viewBox: `0 0 ${width} ${PLOT_H}`,
        role: "img",
        "aria-label": `memory over ${n} steps, peak ${formatBytes(m.peak_bytes)} at step ${peakStep}`,
        "data-steps": String(n),
        "data-x0": String(x0),
        "data-step-width": String(stepW),
      },
      ticks,
      this.litPath,
      this.selPath,
      this.range,
      s("path", { class: "ie-mem-peak-area", d: peakD }),
      s("path", { class: "ie-mem-live", d: liveD }),
      reference(estimate, "ie-mem-estimate", "estimate"),
      reference(measured, "ie-mem-measured", "measured"),
      s("line", { class: "ie-mem-peak-line", x1: peakX, x2: peakX, y1: y(m.peak_bytes), y2: base }),
      s("circle", { class: "ie-mem-peak-mark", cx: peakX, cy: y(m.peak_bytes), r: 4.5, "data-step": String(peakStep) }, s("title", null, `peak ${formatBytes(m.peak_bytes)} at step ${peakStep}`)),
      s("text", { class: "ie-mem-axis", x: x0, y: PLOT_H - 6 }, "step 0"),
      s("text", { class: "ie-mem-axis", x: width - MARGIN.right, y: PLOT_H - 6, "text-anchor": "end" }, `step ${n - 1}`),
      this.hover,
      this.overlay,
    );
    this.overlay.addEventListener("pointermove", (ev) => this._hoverAt(ev));
    this.overlay.addEventListener("pointerleave", () => {
      this.hoverStep = -1;
      this.hover.setAttribute("visibility", "hidden");
    });
    this.overlay.addEventListener("click", (ev) => this._clickAt(ev));
    clear(this.plotBox).append(
      this.svg,
      h(
        "div",
        { class: "ie-mem-legend ie-muted" },
        h("span", { class: "ie-mem-key ie-mem-key-peak" }, "peak while the step runs"),
        h("span", { class: "ie-mem-key ie-mem-key-live" }, "live after the step"),
        estimate !== null ? h("span", { class: "ie-mem-key ie-mem-key-estimate" }, "Inductor's estimate") : null,
        measured !== null ? h("span", { class: "ie-mem-key ie-mem-key-measured" }, "measured peak") : null,
      ),
    );
    this._drawMarks();
    if (this.state.buffer) this._drawRange(this.state.buffer);
  }

  /** The step under a pointer event, or -1. */
  _stepAt(ev) {
    const box = this.svg.getBoundingClientRect();
    const i = Math.floor((ev.clientX - box.left - this.plot.x0) / this.plot.stepW);
    return i >= 0 && i < this.steps.length ? i : -1;
  }

  _hoverAt(ev) {
    const i = this._stepAt(ev);
    this.hoverStep = i;
    if (i < 0) return;
    this.hover.setAttribute("x", this.plot.x(i));
    this.hover.setAttribute("visibility", "visible");
    const st = this.steps[i];
    clear(this.readout).append(
      h("strong", null, `step ${i}`),
      ` ${st.kernel ?? st.call ?? ""} · peak ${formatBytes(st.peak_bytes)} · live after ${formatBytes(st.live_bytes)}`,
      list(st.allocated).length ? ` · +${list(st.allocated).join(" +")}` : "",
      list(st.freed).length ? ` · −${list(st.freed).join(" −")}` : "",
    );
    this.readout.dataset.step = String(i);
  }

  _clickAt(ev) {
    // The step read out on hover: a click's clientX is whole pixels, a pointer move's is not, and
    // with more steps than pixels the two can fall on neighbouring steps.
    const i = this.hoverStep >= 0 ? this.hoverStep : this._stepAt(ev);
    if (i >= 0) this.selectStep(i);
  }

  /** Select what step `i` calls: its kernel, else its wrapper line (the closing return has neither). */
  selectStep(i) {
    const st = this.steps[i];
    if (!st) return;
    if (st.kernel) this.ctx.select({ kind: "kernel", id: String(st.kernel) });
    else if (typeof st.wrapper_line === "number") this.ctx.select({ kind: "wrapper_line", id: String(st.call ?? ""), line: st.wrapper_line });
  }

  /** Step bands as one path of rectangles. */
  _bands(indices) {
    if (!this.plot) return "";
    const { x, stepW, base } = this.plot;
    const h0 = base - MARGIN.top;
    return indices.map((i) => `M${x(i).toFixed(1)},${MARGIN.top}h${stepW.toFixed(2)}v${h0}h${(-stepW).toFixed(2)}z`).join("");
  }

  _drawMarks() {
    if (!this.plot) return;
    this.litPath.setAttribute("d", this._bands(this.state.litSteps));
    this.selPath.setAttribute("d", this._bands(this.state.selectedSteps));
    this.selPath.dataset.steps = this.state.selectedSteps.join(",");
    this.litPath.dataset.steps = this.state.litSteps.join(",");
  }

  // ------------------------------------------------------------------------------ the buffers

  _bufferRow(b) {
    const name = String(b.name);
    const step = (i) => {
      if (typeof i !== "number") return h("span", { class: "ie-muted" }, b.output ? "output" : "–");
      const onclick = (ev) => {
        ev.stopPropagation(); // the row's own click shows the buffer's range
        this.selectStep(i);
      };
      return h("button", { class: "ie-link-btn", type: "button", title: "select this step's kernel", "data-step": String(i), onclick }, String(i));
    };
    const storage = [b.storage && b.storage !== name ? `in ${b.storage}` : null, b.reuses ? `reuses ${b.reuses}` : null, b.reused_by ? `→ ${b.reused_by}` : null].filter(Boolean).join(" · ");
    return h(
      "div",
      { class: "ie-row ie-mem-row ie-mem-buffer", role: "listitem", "data-buffer": name, onclick: () => this.showBuffer(name, false) },
      h("span", { class: "ie-mono" }, name),
      b.bytes === 0 && b.storage && b.storage !== name
        ? h("span", { class: "ie-num ie-muted", title: `brings no storage: its data lives in ${b.storage}` }, "shared")
        : h("span", { class: "ie-num" }, formatBytes(b.bytes)),
      h("span", { class: "ie-muted" }, String(b.dtype ?? "").replace(/^torch\./, "")),
      h("span", { class: "ie-mono ie-ellipsis" }, Array.isArray(b.shape) ? `[${b.shape.join(", ")}]` : String(b.shape ?? "")),
      h("span", null, h("span", { class: `ie-badge ie-mem-kind-${String(b.kind).replace(/[^a-z]/g, "")}` }, String(b.kind ?? ""))),
      h("span", null, step(b.alloc_step)),
      h("span", null, step(b.free_step)),
      h("span", { class: "ie-muted ie-ellipsis" }, storage),
    );
  }

  _styleRow(i, el) {
    const name = String(this.buffers[i].name);
    el.classList.toggle("ie-selected", this.state.buffer === name);
    el.classList.toggle("ie-lit", this.state.litBuffers.has(name));
  }

  _restyleRows() {
    for (const [i, el] of this.table.rows) this._styleRow(i, el);
  }

  /** Show buffer `name`'s live range on the plot (and bring its row into view when asked). */
  showBuffer(name, scroll) {
    this.state.buffer = this.state.buffer === name && !scroll ? null : name;
    this._drawRange(this.state.buffer);
    this._restyleRows();
    const index = this.bufferIndex.get(name);
    if (scroll && index !== undefined) this.table.scrollTo(index);
  }

  _drawRange(name) {
    if (!this.plot) return;
    clear(this.range);
    const b = name === null ? undefined : this.buffers[this.bufferIndex.get(name)];
    if (!b || typeof b.alloc_step !== "number") return;
    const last = typeof b.free_step === "number" ? b.free_step : this.steps.length - 1;
    const { x, base } = this.plot;
    const x1 = x(b.alloc_step);
    const x2 = x(last + 1);
    this.range.append(
      s(
        "rect",
        { class: "ie-mem-range", x: x1, y: MARGIN.top, width: Math.max(1, x2 - x1), height: base - MARGIN.top, "data-buffer": String(b.name), "data-from": String(b.alloc_step), "data-to": String(last) },
        s("title", null, `${b.name}: steps ${b.alloc_step}–${last}`),
      ),
      s("text", { class: "ie-mem-range-label", x: x1 + 3, y: MARGIN.top + 11 }, `${b.name} ${b.bytes === 0 && b.storage && b.storage !== b.name ? `in ${b.storage}` : formatBytes(b.bytes)}`),
    );
  }

  // ------------------------------------------------------------------------------ selection

  update(sel, links) {
    if (!this.memory) return;
    const selected = [];
    const lit = [];
    const litBuffers = new Set();
    this.steps.forEach((st, i) => {
      const kernel = st.kernel === null || st.kernel === undefined ? null : String(st.kernel);
      const isSelected = sel && ((sel.kind === "kernel" && kernel === String(sel.id)) || (sel.kind === "wrapper_line" && st.wrapper_line === Number(sel.line)));
      if (isSelected) selected.push(i);
      else if (kernel !== null && links.kernels.has(kernel)) lit.push(i);
      if (isSelected || (kernel !== null && links.kernels.has(kernel))) list(st.allocated).forEach((b) => litBuffers.add(String(b)));
    });
    this.state.selectedSteps = selected;
    this.state.litSteps = lit;
    this.state.litBuffers = litBuffers;
    this._drawMarks();
    this._restyleRows();
  }

  reveal() {
    if (!this.memory) return;
    const first = this.buffers.findIndex((b) => this.state.litBuffers.has(String(b.name)));
    if (first >= 0) this.table.scrollTo(first);
  }
}
