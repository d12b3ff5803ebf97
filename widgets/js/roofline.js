// The roofline chart of the Kernels stage: each kernel with a time on record as a point, arithmetic
// intensity (FLOPs / byte) against achieved FLOP/s, log-log, under the DRAM bandwidth and compute roofs
// the trace records (widgets/roofline.py builds the `g0/roofline` part when the chart is first opened).
// A click on a point selects its kernel. With no time on record the chart says what to run instead.

import { h, s, clear } from "./dom.js";

const list = (value) => (Array.isArray(value) ? value : []);
const W_MIN = 360;
const H = 240;
const M = { left: 86, right: 14, top: 12, bottom: 34 };

const si = (x, unit) => {
  if (!(x > 0)) return `0 ${unit}`;
  const prefixes = [["P", 1e15], ["T", 1e12], ["G", 1e9], ["M", 1e6], ["k", 1e3], ["", 1]];
  const [p, f] = prefixes.find(([, f]) => x >= f) || ["", 1];
  return `${Number((x / f).toPrecision(3))} ${p}${unit}`;
};

/** A decade range [lo, hi] (powers of ten) around positive `values`. */
function decades(values) {
  const logs = values.filter((v) => v > 0).map((v) => Math.log10(v));
  const lo = Math.floor(Math.min(...logs));
  const hi = Math.ceil(Math.max(...logs));
  return [lo, hi > lo ? hi : lo + 1];
}

/** The collapsible roofline panel: the part is fetched when it is first opened. */
export class RooflinePanel {
  /** @param {() => Promise<object>} load the graph's roofline part @param {object} ctx select */
  constructor(load, ctx) {
    this.load = load;
    this.ctx = ctx;
    this.points = [];
    this.body = h("div", { class: "ie-roofline-body" });
    this.root = h("details", { class: "ie-roofline-box" }, h("summary", null, "roofline"), this.body);
    this.root.addEventListener("toggle", () => {
      if (this.root.open) this.open();
    });
    this.last = null;
  }

  /** Fetch (once) and draw. Resolves when drawn. */
  open() {
    if (!this.loading) {
      this.body.appendChild(h("span", { class: "ie-muted" }, "roofline…"));
      this.loading = this.load().then(
        (part) => this.draw(part),
        (error) => clear(this.body).appendChild(h("p", { class: "ie-error" }, `No roofline: ${error && error.message ? error.message : error}`)),
      );
    }
    return this.loading;
  }

  draw(part) {
    clear(this.body);
    this.part = part || {};
    const points = list(this.part.points);
    if (!points.length) {
      this.body.appendChild(h("p", { class: "ie-muted ie-roof-howto" }, String(this.part.how_to || "No kernel of this graph can be placed: none has a time, bytes and FLOPs on record.")));
      return;
    }
    const roofs = this.part.roofs || {};
    const width = Math.max(W_MIN, (this.body.clientWidth || 640) - 4);
    const [xlo, xhi] = decades(points.map((p) => p.intensity));
    const ys = points.map((p) => p.flops_per_s);
    const bw = typeof roofs.bandwidth === "number" && roofs.bandwidth > 0 ? roofs.bandwidth : null;
    if (bw) ys.push(bw * 10 ** xlo, bw * 10 ** xhi);
    if (typeof roofs.compute === "number") ys.push(roofs.compute);
    const [ylo, yhi] = decades(ys);
    const x = (v) => M.left + ((Math.log10(v) - xlo) / (xhi - xlo)) * (width - M.left - M.right);
    const y = (v) => H - M.bottom - ((Math.log10(v) - ylo) / (yhi - ylo)) * (H - M.top - M.bottom);
    const axis = [];
    for (let d = xlo; d <= xhi; d++) axis.push(s("g", { class: "ie-roof-axis" }, s("line", { x1: x(10 ** d), x2: x(10 ** d), y1: M.top, y2: H - M.bottom }), s("text", { x: x(10 ** d), y: H - M.bottom + 13, "text-anchor": "middle" }, `1e${d}`)));
    for (let d = ylo; d <= yhi; d++) axis.push(s("g", { class: "ie-roof-axis" }, s("line", { x1: M.left, x2: width - M.right, y1: y(10 ** d), y2: y(10 ** d) }), s("text", { x: M.left - 4, y: y(10 ** d) + 3, "text-anchor": "end" }, si(10 ** d, "FLOP/s"))));
    const roofLines = [];
    if (bw) {
      // FLOP/s = intensity * bandwidth, clipped to the plot (and to the compute roof when there is one)
      const top = typeof roofs.compute === "number" ? roofs.compute : 10 ** yhi;
      const a = Math.max(10 ** xlo, 10 ** ylo / bw);
      const b = Math.min(10 ** xhi, top / bw);
      if (b > a) {
        roofLines.push(s("line", { class: "ie-roof ie-roof-bandwidth", x1: x(a), y1: y(a * bw), x2: x(b), y2: y(b * bw), "data-bandwidth": String(bw) }, s("title", null, `DRAM bandwidth roof ${si(bw, "B/s")} (${roofs.bandwidth_source})`)));
        roofLines.push(s("text", { class: "ie-roof-label", x: x(a) + 4, y: y(a * bw) - 4 }, `${si(bw, "B/s")} DRAM`));
      }
    }
    if (typeof roofs.compute === "number") {
      roofLines.push(s("line", { class: "ie-roof ie-roof-compute", x1: M.left, x2: width - M.right, y1: y(roofs.compute), y2: y(roofs.compute), "data-compute": String(roofs.compute) }, s("title", null, `compute roof ${si(roofs.compute, "FLOP/s")} (${roofs.compute_source})`)));
      roofLines.push(s("text", { class: "ie-roof-label", x: width - M.right - 4, y: y(roofs.compute) - 4, "text-anchor": "end" }, `${si(roofs.compute, "FLOP/s")} ${String(roofs.compute_source || "").split(" ")[0]}`));
    }
    this.points = points.map((p) => {
      const dot = s(
        "circle",
        { class: `ie-roof-point${p.bytes_source === "Inductor's estimate" ? " ie-roof-estimate" : ""}`, cx: x(p.intensity).toFixed(2), cy: y(p.flops_per_s).toFixed(2), r: 5, "data-kernel": p.kernel, "data-intensity": String(p.intensity), "data-flops-per-s": String(p.flops_per_s) },
        s("title", null, `${p.kernel}\n${p.intensity.toPrecision(3)} FLOP/B · ${si(p.flops_per_s, "FLOP/s")} · ${si(p.bytes_per_s, "B/s")}\n${si(p.flops, "FLOP")}, ${si(p.bytes, "B")} (${p.bytes_source}) in ${si(p.seconds, "s")} (${p.time_source})`),
      );
      dot.addEventListener("click", () => this.ctx.select({ kind: "kernel", id: String(p.kernel) }));
      return [dot, String(p.kernel)];
    });
    this.svg = s(
      "svg",
      { class: "ie-roofline-svg", width, height: H, viewBox: `0 0 ${width} ${H}`, role: "img", "aria-label": `roofline of ${points.length} kernels`, "data-points": String(points.length) },
      axis,
      roofLines,
      this.points.map(([dot]) => dot),
      s("text", { class: "ie-roof-axis-title", x: width - M.right, y: H - 4, "text-anchor": "end" }, "arithmetic intensity (FLOPs / byte)"),
    );
    const notes = [
      bw ? `Bandwidth roof: ${roofs.bandwidth_source}.` : "No bandwidth roof: the trace records neither Nsight Compute DRAM figures (run c.counters() on a GPU) nor a datasheet for this device.",
      typeof roofs.compute === "number" ? `Compute roof: ${roofs.compute_source}.` : "No compute roof: the trace records no peak FLOP/s for this device and dtype.",
      list(this.part.skipped).length ? `Timed but not placed (no bytes or FLOPs on record): ${list(this.part.skipped).join(", ")}` : null,
    ].filter(Boolean);
    this.body.append(this.svg, notes.length ? h("ul", { class: "ie-muted ie-roof-notes" }, notes.map((n) => h("li", null, n))) : null);
    if (this.last) this.update(...this.last);
  }

  update(sel, links) {
    this.last = [sel, links];
    const selected = sel && sel.kind === "kernel" ? String(sel.id) : null;
    for (const [dot, id] of this.points) {
      dot.classList.toggle("ie-selected", id === selected);
      dot.classList.toggle("ie-lit", id !== selected && links.kernels.has(id));
    }
  }
}
