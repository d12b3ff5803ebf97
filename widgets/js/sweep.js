// A sweep (widgets/sweep.py) above the explorer view: the table of every point, sortable by any
// column, with heat on run time, memory and error; a click on a row opens that point in the
// explorer view below (its parts are fetched then, under its key `p3`), ticking two rows shows
// their diff (what the second changed against the first).
// The static export mounts the view itself (mountSweep, diffs embedded as parts `d{i}-{j}`); the
// live widget reports the click and the pair to Python (sweepBar), which sends the point or the diff.

import { h, clear } from "./dom.js";
import { App } from "./app.js";
import { Store } from "./store.js";
import { heatColor, heatInk, heatLevel, scaleTop } from "./heat.js";
import { diffBlock } from "./sessionbar.js";
import "./sweep.css";

const list = (value) => (Array.isArray(value) ? value : []);
const num = (v) => (typeof v === "number" && Number.isFinite(v) ? v : null);

function bytes(n) {
  if (n === null) return "";
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let v = n;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) { v /= 1024; u += 1; }
  return `${u ? v.toFixed(1) : v} ${units[u]}`;
}

const memoryOf = (r) => num(r.peak_bytes) ?? num(r.planned_peak_bytes);
const settingsOf = (r) => Object.entries(r.config || {}).map(([k, v]) => `${k}=${v}`).join(", ") || "defaults";
const shapeOf = (r) => list(r.shapes).map((s) => list(s).join("x")).join(" × ");

/** The columns: key, header, value for sorting, text, and the heat kind when the column has heat. */
function columns(summary) {
  const shapes = list(summary.rows).some((r) => list(r.shapes).length);
  const cuda = String(summary.meta?.device ?? "").startsWith("cuda");
  const cols = [
    { key: "index", label: "#", value: (r) => r.index, text: (r) => `${r.index}${r.index === summary.best ? " ★" : ""}` },
    { key: "settings", label: "settings", value: settingsOf, text: settingsOf },
    shapes ? { key: "shapes", label: "shapes", value: shapeOf, text: shapeOf } : null,
    { key: "status", label: "status", value: (r) => r.status, text: (r) => r.status },
    { key: "compile_s", label: "compile s", value: (r) => num(r.compile_s), text: (r) => (num(r.compile_s) === null ? "" : r.compile_s.toFixed(2)), numeric: true },
    { key: "run_ms", label: "run ms", value: (r) => num(r.run_ms), text: (r) => (num(r.run_ms) === null ? "" : r.run_ms.toFixed(3)), heat: "time", numeric: true },
    { key: "ratio", label: "× best", value: (r) => num(r.ratio), text: (r) => (num(r.ratio) === null ? "" : r.ratio.toFixed(2)), numeric: true },
    { key: "memory", label: cuda ? "peak memory" : "planned peak", value: memoryOf, text: (r) => bytes(memoryOf(r)), heat: "time", numeric: true },
    { key: "max_error", label: "max error", value: (r) => num(r.max_error), text: (r) => (num(r.max_error) === null ? "" : r.max_error.toExponential(2)), heat: "error", numeric: true },
    { key: "ok", label: "numerics", value: (r) => (r.ok === null || r.ok === undefined ? null : r.ok ? 1 : 0), text: (r) => (r.ok === true ? "ok" : r.ok === false ? "DIVERGES" : "") },
    { key: "kernels", label: "kernels", value: (r) => num(r.kernels), text: (r) => (num(r.kernels) === null ? "" : String(r.kernels)), numeric: true },
    { key: "graphs", label: "graphs", value: (r) => num(r.graphs), text: (r) => (num(r.graphs) === null ? "" : String(r.graphs)), numeric: true },
    { key: "recompiles", label: "recompiles", value: (r) => num(r.recompiles), text: (r) => (num(r.recompiles) === null ? "" : String(r.recompiles)), numeric: true },
    { key: "worker", label: "worker", value: (r) => `${r.worker ?? ""} ${r.gpu ?? ""}`, text: (r) => [r.worker, r.gpu].filter(Boolean).join(" · ") },
    { key: "error", label: "error", value: (r) => r.error ?? "", text: (r) => (r.error ? `${r.stage}: ${r.error}` : "") },
  ];
  return cols.filter(Boolean);
}

/** Sort: numbers before blanks whichever the direction, then by the row's index. */
function compare(col, dir) {
  return (a, b) => {
    const x = col.value(a);
    const y = col.value(b);
    if (x === null && y === null) return a.index - b.index;
    if (x === null) return 1;
    if (y === null) return -1;
    const order = typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y));
    return (order || a.index - b.index) * (dir === "desc" && order ? -1 : 1);
  };
}

export class SweepTable {
  /**
   * @param {object} summary SweepParts.summary()
   * @param {(point: number) => void} onPick a row clicked (a point with a trace)
   * @param {(a: number, b: number) => void} onPair two rows ticked, in the order ticked
   */
  constructor(summary, onPick, onPair) {
    this.summary = summary;
    this.rows = list(summary.rows);
    this.cols = columns(summary);
    this.onPick = onPick;
    this.onPair = onPair;
    this.sort = { key: "index", dir: "asc" };
    this.ticked = [];
    this.shown = null;
    this.tops = {};
    for (const col of this.cols) if (col.heat) this.tops[col.key] = scaleTop(this.rows.map((r) => col.value(r)).filter((v) => v !== null));
    this.body = h("tbody");
    this.head = h("tr", null, h("th", { title: "tick two rows to diff them" }, "diff"),
      this.cols.map((c) => h("th", { "data-col": c.key, onclick: () => this.sortBy(c.key) }, c.label)));
    const meta = summary.meta || {};
    const ran = this.rows.filter((r) => r.status === "ok").length;
    this.diffBox = h("div", { class: "ie-sweep-diffbox" });
    this.root = h(
      "div",
      { class: "ie-sweep-bar", role: "group", "aria-label": "sweep" },
      h("div", { class: "ie-sweep-head" },
        h("strong", null, `sweep of ${meta.function ?? "?"}`),
        h("span", null, `${this.rows.length} points · ${ran} ran · ${this.rows.length - ran} not`),
        h("span", { class: "ie-muted" }, `${meta.engine ?? ""} on ${meta.device ?? ""} · ${list(meta.workers).join(", ")}${typeof meta.wall_s === "number" ? ` · ${meta.wall_s.toFixed(1)} s` : ""}${meta.cancelled ? " · cancelled" : ""}`)),
      h("table", { class: "ie-sweep-table" }, h("thead", null, this.head), this.body),
      h("div", { class: "ie-sweep-note ie-muted" }, "★ the fastest point whose numerics held · click a row to open it · tick two rows to diff them · click a header to sort"),
      this.diffBox,
    );
    this.draw();
  }

  sortBy(key) {
    const dir = this.sort.key === key && this.sort.dir === "asc" ? "desc" : "asc";
    this.sort = { key, dir };
    this.draw();
  }

  /** The row indices in the order shown. */
  order() {
    return [...this.rows].sort(compare(this.cols.find((c) => c.key === this.sort.key), this.sort.dir)).map((r) => r.index);
  }

  draw() {
    for (const th of this.head.querySelectorAll("th[data-col]")) {
      if (th.dataset.col === this.sort.key) th.dataset.sort = this.sort.dir;
      else delete th.dataset.sort;
    }
    const byIndex = new Map(this.rows.map((r) => [r.index, r]));
    clear(this.body).append(...this.order().map((i) => this._row(byIndex.get(i))));
  }

  _row(r) {
    const tick = h("input", { type: "checkbox", class: "ie-sweep-tick", "aria-label": `diff point ${r.index}`, disabled: !r.key });
    tick.checked = this.ticked.includes(r.index);
    tick.addEventListener("click", (event) => event.stopPropagation());
    tick.addEventListener("change", () => this.tick(r.index, tick.checked));
    const cells = this.cols.map((c) => {
      const td = h("td", { "data-col": c.key, class: c.numeric ? "ie-num" : null }, c.text(r));
      const v = c.value(r);
      if (c.heat && v !== null) {
        const level = heatLevel(c.heat, v, this.tops[c.key]);
        if (level !== null) {
          td.style.background = heatColor(c.heat, level);
          td.style.color = heatInk(c.heat, level);
          td.dataset.heat = level.toFixed(3);
        }
      }
      return td;
    });
    const cls = ["ie-sweep-row", r.index === this.summary.best ? "ie-sweep-best" : "", r.status === "failed" ? "ie-sweep-failed" : "",
      r.key ? "" : "ie-sweep-notrace", r.index === this.shown ? "ie-selected" : ""].filter(Boolean).join(" ");
    return h("tr", { class: cls, "data-point": String(r.index), "data-status": r.status, onclick: () => r.key && this.onPick(r.index) },
      h("td", null, tick), cells);
  }

  /** Tick or untick a row; a third tick drops the oldest; two ticked rows ask for their diff. */
  tick(index, on) {
    this.ticked = this.ticked.filter((i) => i !== index);
    if (on) this.ticked.push(index);
    if (this.ticked.length > 2) this.ticked.shift();
    this.draw();
    if (this.ticked.length === 2) this.onPair(this.ticked[0], this.ticked[1]);
    else this.showDiff(null);
  }

  /** Mark the point shown below the table. */
  show(index) {
    this.shown = index;
    this.root.dataset.point = index === null ? "" : String(index);
    this.draw();
  }

  /** The diff of the ticked pair under the table (static page), or a note; null clears it. */
  showDiff(diff, note) {
    clear(this.diffBox);
    if (note) this.diffBox.appendChild(h("div", { class: "ie-muted" }, note));
    const block = diff ? diffBlock({ diff }) : null;
    if (block) this.diffBox.appendChild(block);
  }
}

/** Static export: the table and, below it, the explorer view of the point clicked (parts decoded then). */
export function mountSweep(el, summary, fetchPart, options = {}) {
  const view = h("div", { class: "ie-sweep-view" });
  const root = h("div", { class: "ie-sweep", "data-pending": "0" });
  let app = null;
  let current = 0;
  const open = async (index) => {
    const row = list(summary.rows).find((r) => r.index === index);
    if (!row || !row.key) return;
    const ticket = ++current;
    table.show(index);
    root.dataset.pending = "1";
    try {
      const head = await fetchPart(row.key);
      if (ticket !== current) return;
      const stage = app ? app.stage : options.stage;
      app = new App(view, new Store(head, (key) => fetchPart(`${row.key}/${key}`)), { standalone: options.standalone, initial: { stage } });
    } catch (error) {
      clear(view).appendChild(h("div", { class: "ie-error" }, `Could not open point ${index}: ${error && error.message ? error.message : error}`));
    } finally {
      if (ticket === current) root.dataset.pending = "0";
    }
  };
  const pair = async (a, b) => {
    const [i, j] = a < b ? [a, b] : [b, a];
    try {
      table.showDiff(await fetchPart(`d${i}-${j}`));
    } catch (error) {
      table.showDiff(null, `No diff of points ${i} and ${j} in this page (a page embeds every pair up to 8 points, else each point against the best): diff them in Python with sweep.diff(${i}, ${j}).`);
    }
    open(j);
  };
  const table = new SweepTable(summary, open, pair);
  root.append(table.root, view);
  clear(el).appendChild(root);
  const first = summary.best ?? list(summary.rows).find((r) => r.key)?.index;
  if (first !== undefined && first !== null) open(first);
  else view.appendChild(h("p", { class: "ie-muted" }, "No point of this sweep left a trace to open."));
  return { root, table, open, get app() { return app; } };
}

/**
 * Live widget: the table for a SweepWidget (traits `sweep`, `pick`, `pair`), or null for another
 * widget. A click or a pair goes to Python, which sends the point (and the diff, in the session bar).
 */
export function sweepBar(model) {
  const summary = model.get("sweep");
  if (!summary || !Array.isArray(summary.rows)) return null;
  const table = new SweepTable(
    summary,
    (point) => {
      model.set("pick", { point });
      model.save_changes();
    },
    (a, b) => {
      model.set("pair", [a, b]);
      model.save_changes();
    },
  );
  const sync = () => table.show((model.get("pick") || {}).point ?? null);
  sync();
  model.on("change:pick", sync);
  table.dispose = () => model.off("change:pick", sync);
  return table;
}
