// The Autotune stage: the benchmarked choices grouped by the kernel they were for. Each group is a
// table of its choices with the time, the ratio to the group's best, a bar, the chosen one marked,
// and the configuration laid out as columns. Inductor records two shapes of choice text:
//   select_algorithm (max-autotune):  "triton_mm_2 ACC_TYPE='tl.float32', BLOCK_K=32, ..., num_warps=8"
//   triton_heuristics (kernel configs): "XBLOCK: 512, num_warps: 4, num_ctas: 1, num_stages: 1"
// A choice without parameters ("mm", the ATen kernel) is its name alone. Parameters that are the same
// for every choice of a group are listed once above its table instead of as columns.

import { h, clear } from "./dom.js";
import { chip } from "./stages.js";
import { num } from "./reports.js";
import { formatMs, heatColor, heatLevel } from "./heat.js";

const list = (value) => (Array.isArray(value) ? value : []);
/** Columns first in this order when present; the rest keep their order of appearance. */
const PREFERRED = ["BLOCK_M", "BLOCK_N", "BLOCK_K", "XBLOCK", "YBLOCK", "ZBLOCK", "R0_BLOCK", "R1_BLOCK", "GROUP_M", "num_warps", "num_stages"];
const PARAM = /([A-Za-z_][A-Za-z0-9_]*)\s*[=:]\s*('[^']*'|"[^"]*"|[^,]+)/g;

/** {name, params: [[key, value]]} of one choice text. */
export function parseChoice(text) {
  const str = String(text ?? "").trim();
  const head = str.match(/^([^\s,=:]+)(?:\s+|$)(?![=:])/);
  let name = "";
  let rest = str;
  if (head && !/^[A-Za-z_][A-Za-z0-9_]*\s*[=:]/.test(str)) {
    name = head[1];
    rest = str.slice(head[0].length);
  }
  const params = [];
  for (const m of rest.matchAll(PARAM)) params.push([m[1], m[2].trim()]);
  if (!params.length && rest.trim()) name = str; // not a parameter list: keep the text whole
  return { name, params };
}

/** Choices grouped by kernel, in order of first appearance, each with its parsed config. */
export function groupChoices(records) {
  const groups = new Map();
  list(records).forEach((r, i) => {
    const kernel = String(r.kernel ?? "");
    if (!groups.has(kernel)) groups.set(kernel, { kernel, source: String(r.source ?? ""), choices: [] });
    const time = num(r.time_ms);
    groups.get(kernel).choices.push({ index: i, record: r, time, chosen: Boolean(r.chosen), ...parseChoice(r.choice) });
  });
  for (const g of groups.values()) {
    const finite = g.choices.map((c) => c.time).filter((t) => Number.isFinite(t) && t >= 0);
    g.best = finite.length ? Math.min(...finite) : null;
    g.worst = finite.length ? Math.max(...finite) : null;
    for (const c of g.choices) c.ratio = g.best && Number.isFinite(c.time) ? c.time / g.best : null;
    const keys = [];
    for (const c of g.choices) for (const [k] of c.params) if (!keys.includes(k)) keys.push(k);
    const valueOf = (c, k) => (c.params.find(([key]) => key === k) || [])[1];
    // A choice without the parameter (the ATen "mm" among Triton templates) does not make it vary.
    const varying = keys.filter((k) => new Set(g.choices.map((c) => valueOf(c, k)).filter((v) => v !== undefined)).size > 1);
    const rank = (k) => (PREFERRED.includes(k) ? PREFERRED.indexOf(k) : PREFERRED.length + keys.indexOf(k));
    g.columns = varying.sort((a, b) => rank(a) - rank(b));
    g.constant = keys.filter((k) => !varying.includes(k)).map((k) => [k, g.choices.map((c) => valueOf(c, k)).find((v) => v !== undefined)]);
    g.value = valueOf;
    g.named = g.choices.some((c) => c.name);
  }
  return [...groups.values()];
}

const compareValues = (a, b) => {
  const x = Number(a);
  const y = Number(b);
  if (a !== undefined && b !== undefined && !Number.isNaN(x) && !Number.isNaN(y)) return x - y;
  return String(a ?? "").localeCompare(String(b ?? ""));
};

export class AutotuneStage {
  /** @param {Array} records the autotune part @param {Set<string>} kernelIds ids that have a kernel view */
  constructor(records, kernelIds, ctx) {
    this.kernelIds = kernelIds;
    this.ctx = ctx;
    this.root = h("div", { class: "ie-stage ie-scroll", "data-stage": "autotune" });
    this.groups = groupChoices(records);
    this.sort = { key: null, dir: 1 };
    this.lit = new Set();
    if (!this.groups.length) {
      this.root.appendChild(h("p", { class: "ie-muted" }, "No autotuning in this graph (CPU kernels and default configs are not tuned)."));
      return;
    }
    this.root.appendChild(h("p", { class: "ie-muted ie-hint" }, `${list(records).length} choices benchmarked for ${this.groups.length} kernels. Click a column header to sort every group by it.`));
    this.boxes = this.groups.map((g) => this._group(g));
    this.root.append(...this.boxes.map((b) => b.el));
  }

  _group(g) {
    const chosen = g.choices.find((c) => c.chosen);
    const head = h(
      "div",
      { class: "ie-card-head" },
      this.kernelIds.has(g.kernel) ? chip("kernel", g.kernel, this.ctx.go) : h("strong", { class: "ie-mono" }, g.kernel),
      h("span", { class: "ie-badge" }, g.source),
      h("span", { class: "ie-muted" }, `${g.choices.length} choices`),
      g.best !== null ? h("span", { class: "ie-muted" }, `best ${formatMs(g.best)} ms`) : null,
      chosen && chosen.ratio !== null && chosen.ratio > 1.0001 ? h("span", { class: "ie-badge ie-at-slower", title: "the chosen config is not the fastest measured" }, `chosen ×${chosen.ratio.toFixed(2)}`) : null,
    );
    const constant = g.constant.length ? h("div", { class: "ie-muted ie-at-constant ie-mono" }, "all: ", g.constant.map(([k, v]) => `${k}=${v}`).join(", ")) : null;
    const headers = [
      ["chosen", ""],
      ...(g.named ? [["name", "choice"]] : []),
      ...g.columns.map((k) => [`param:${k}`, k]),
      ["time", "time (ms)"],
      ["ratio", "× best"],
      ["bar", ""],
    ];
    const headCells = headers.map(([key, text]) =>
      key === "chosen" || key === "bar"
        ? h("th", null, text)
        : h("th", { class: `ie-sortable${key.startsWith("param:") || key === "time" || key === "ratio" ? " ie-num" : ""}`, "aria-sort": "none", "data-sort": key, title: "click to sort", onclick: () => this.sortBy(key) }, text),
    );
    const tbody = h("tbody");
    const table = h("table", { class: "ie-table ie-autotune", "data-kernel": g.kernel }, h("thead", null, h("tr", null, headCells)), tbody);
    const el = h("section", { class: "ie-card ie-at-group", "data-kernel": g.kernel }, head, constant, table);
    const box = { el, g, tbody, headCells };
    this._draw(box);
    return box;
  }

  sortBy(key) {
    this.sort = { key, dir: this.sort.key === key ? -this.sort.dir : 1 };
    for (const box of this.boxes) this._draw(box);
  }

  _sorted(g) {
    const { key, dir } = this.sort;
    const rows = g.choices.slice();
    if (!key) return rows;
    const value = (c) => (key === "time" ? c.time : key === "ratio" ? c.ratio : key === "name" ? c.name : g.value(c, key.slice("param:".length)));
    return rows.sort((a, b) => {
      const x = value(a);
      const y = value(b);
      const missX = x === null || x === undefined || (typeof x === "number" && !Number.isFinite(x));
      const missY = y === null || y === undefined || (typeof y === "number" && !Number.isFinite(y));
      if (missX || missY) return missX === missY ? a.index - b.index : missX ? 1 : -1; // failed choices last
      return compareValues(x, y) * dir || a.index - b.index;
    });
  }

  _draw(box) {
    const { g, tbody, headCells } = box;
    for (const th of headCells) {
      if (!th.hasAttribute("data-sort")) continue;
      th.setAttribute("aria-sort", th.getAttribute("data-sort") === this.sort.key ? (this.sort.dir === 1 ? "ascending" : "descending") : "none");
    }
    clear(tbody);
    for (const c of this._sorted(g)) {
      const failed = !Number.isFinite(c.time);
      const level = failed ? null : heatLevel("time", c.time, g.worst);
      const width = failed || !g.worst ? 0 : (c.time / g.worst) * 100;
      tbody.appendChild(
        h(
          "tr",
          { class: `ie-at-row${c.chosen ? " ie-chosen" : ""}${this.lit.has(g.kernel) ? " ie-lit" : ""}`, "data-kernel": g.kernel, "data-choice": String(c.record.choice ?? ""), "data-time": failed ? "" : String(c.time) },
          h("td", { class: "ie-chosen-mark", title: c.chosen ? "chosen" : null }, c.chosen ? "✓" : ""),
          g.named ? h("td", { class: "ie-mono ie-at-name" }, c.name) : null,
          g.columns.map((k) => h("td", { class: "ie-num ie-at-param", "data-param": k }, g.value(c, k) ?? "")),
          h("td", { class: "ie-num ie-at-time" }, failed ? (c.time === null ? "–" : "failed") : formatMs(c.time)),
          h("td", { class: "ie-num ie-at-ratio" }, c.ratio === null ? "–" : `${c.ratio.toFixed(2)}×`),
          h("td", { class: "ie-at-barcell" }, h("span", { class: "ie-bar" }, failed ? null : h("span", { class: "ie-bar-fill", style: `width: ${width.toFixed(1)}%; background: ${heatColor("time", level ?? 0)}` }))),
        ),
      );
    }
  }

  update(sel, links) {
    if (!this.groups.length) return;
    this.lit = links.kernels;
    for (const box of this.boxes) {
      const on = this.lit.has(box.g.kernel);
      box.el.classList.toggle("ie-lit", on);
      for (const tr of box.tbody.children) tr.classList.toggle("ie-lit", on);
    }
  }

  reveal() {
    if (!this.groups.length) return;
    const box = this.boxes.find((b) => this.lit.has(b.g.kernel));
    if (box && box.el.scrollIntoView) box.el.scrollIntoView({ block: "nearest" });
  }
}
