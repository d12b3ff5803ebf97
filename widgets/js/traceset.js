// A TraceSet (a multi-rank job, widgets/traceset.py) above the explorer view: where the ranks
// diverge, a rank picker and a compile picker. Picking shows that one compilation in the normal
// explorer view below; its parts are fetched then, under its key (`c3` is its summary, `c3/g0/fx`
// a part), so the other ranks' compilations are never loaded unless someone picks them.
// The static export mounts the view itself (mountTraceSet); the live widget only reports the
// pick to Python (traceSetBar), which sends the new compilation.

import { h, clear } from "./dom.js";
import { App } from "./app.js";
import { Store } from "./store.js";
import "./traceset.css";

const list = (value) => (Array.isArray(value) ? value : []);

function compileLabel(c) {
  const bits = [`${c.compile_id} ${c.function ?? ""}`.trim()];
  if (typeof c.graph_nodes === "number") bits.push(`${c.graph_nodes} nodes`);
  else if (!c.graph) bits.push("no graph");
  if (list(c.graph_breaks).length) bits.push(`${list(c.graph_breaks).length} graph break${list(c.graph_breaks).length > 1 ? "s" : ""}`);
  if (list(c.recompile_reasons).length) bits.push("recompile");
  return bits.join(" · ");
}

function rankLabel(r) {
  const compiles = list(r.compiles).length;
  return `rank ${r.rank} · ${compiles} compile${compiles === 1 ? "" : "s"}${r.graph_break_count ? ` · ${r.graph_break_count} breaks` : ""}${r.recompile_count ? ` · ${r.recompile_count} recompiles` : ""}`;
}

export class TraceSetBar {
  /** @param {object} summary TraceSetParts.summary() @param {(rank: string, compileId: string) => void} onPick */
  constructor(summary, onPick) {
    this.summary = summary;
    this.ranks = list(summary.ranks);
    this.onPick = onPick;
    this.rankPicker = h("select", { class: "ie-rank-picker", "aria-label": "rank" }, this.ranks.map((r) => h("option", { value: r.rank }, rankLabel(r))));
    this.compilePicker = h("select", { class: "ie-compile-picker", "aria-label": "compile id" });
    this.rankPicker.addEventListener("change", () => this.pick(this.rankPicker.value, this.compileId));
    this.compilePicker.addEventListener("change", () => this.pick(this.rank, this.compilePicker.value));
    this.root = h(
      "div",
      { class: "ie-traceset-bar", role: "group", "aria-label": "TraceSet" },
      h("div", { class: "ie-ts-head" },
        h("strong", null, `${this.ranks.length} ranks`),
        h("span", { class: "ie-path", title: String(summary.path ?? "") }, String(summary.path ?? "")),
        h("label", null, h("span", { class: "ie-muted" }, "rank "), this.rankPicker),
        h("label", null, h("span", { class: "ie-muted" }, "compile "), this.compilePicker)),
      this._divergence(list(summary.divergence)),
      list(summary.problems).map((p) => h("div", { class: "ie-ts-problem" }, String(p))),
      this._rankTable(),
    );
    this.rank = null;
    this.compileId = null;
  }

  _rank(rank) {
    return this.ranks.find((r) => r.rank === String(rank)) || null;
  }

  /** Ask for (rank, compile id); a compile id the rank lacks falls back to the rank's first compile. */
  pick(rank, compileId) {
    const r = this._rank(rank);
    if (!r || !list(r.compiles).length) return;
    const c = list(r.compiles).find((x) => x.compile_id === compileId) || r.compiles[0];
    this.onPick(r.rank, c.compile_id);
  }

  /** Show (rank, compile id) as the current pick in the pickers and the rank table. */
  show(rank, compileId) {
    const r = this._rank(rank);
    if (!r) return;
    this.rank = r.rank;
    this.compileId = compileId;
    this.rankPicker.value = r.rank;
    clear(this.compilePicker).append(...list(r.compiles).map((c) => h("option", { value: c.compile_id }, compileLabel(c))));
    this.compilePicker.value = compileId;
    for (const tr of this.rankRows) tr.classList.toggle("ie-selected", tr.dataset.rank === r.rank);
    this.root.dataset.rank = r.rank;
    this.root.dataset.compileId = compileId;
  }

  _divergence(items) {
    if (!items.length) return h("div", { class: "ie-ts-divergence ie-ts-alike" }, "The ranks compiled alike.");
    return h(
      "details",
      { class: "ie-ts-divergence", open: true },
      h("summary", null, h("strong", null, `The ranks diverge (${items.length})`)),
      h("ul", null, items.map((d) =>
        h("li", { class: "ie-ts-div", "data-kind": String(d.kind ?? "") },
          h("span", { class: "ie-badge" }, String(d.kind ?? "")),
          " ",
          String(d.summary ?? ""),
          h("div", { class: "ie-ts-div-ranks" }, Object.entries(d.ranks || {}).map(([rank, what]) => {
            const r = this._rank(rank);
            const has = r && d.compile_id && list(r.compiles).some((c) => c.compile_id === d.compile_id);
            const text = `rank ${rank}: ${what}`;
            return has
              ? h("button", { class: "ie-chip ie-ts-goto", type: "button", "data-rank": rank, title: `show ${d.compile_id} on rank ${rank}`, onclick: () => this.pick(rank, d.compile_id) }, text)
              : h("span", { class: "ie-ts-what ie-muted" }, text);
          })),
        ))),
    );
  }

  _rankTable() {
    const columns = ["rank", "torch", "compiles", "graphs", "graph breaks", "recompiles", "compile s", "problems"];
    this.rankRows = this.ranks.map((r) =>
      h("tr", { class: "ie-ts-rank", "data-rank": r.rank, onclick: () => this.pick(r.rank, this.compileId) },
        [r.rank, r.torch ?? "?", list(r.compiles).length, r.graphs ?? "", r.graph_break_count ?? "", r.recompile_count ?? "",
          typeof r.seconds === "number" ? r.seconds.toFixed(2) : "", list(r.problems).length].map((v) => h("td", null, String(v)))),
    );
    return h(
      "details",
      { class: "ie-ts-ranks", open: this.ranks.length <= 8 },
      h("summary", null, "Ranks"),
      h("table", { class: "ie-table" }, h("thead", null, h("tr", null, columns.map((c) => h("th", null, c)))), h("tbody", null, this.rankRows)),
    );
  }
}

/** Static export: the bar and, below it, the explorer of the compilation picked (parts decoded on pick). */
export function mountTraceSet(el, summary, fetchPart, options = {}) {
  const view = h("div", { class: "ie-ts-view" });
  const root = h("div", { class: "ie-traceset", "data-pending": "0" });
  let app = null;
  let current = 0;
  const bar = new TraceSetBar(summary, (rank, compileId) => open(rank, compileId));
  root.append(bar.root, view);
  clear(el).appendChild(root);
  const open = async (rank, compileId) => {
    const r = list(summary.ranks).find((x) => x.rank === rank);
    const c = r && list(r.compiles).find((x) => x.compile_id === compileId);
    if (!c) return;
    const ticket = ++current;
    bar.show(rank, compileId);
    root.dataset.pending = "1";
    try {
      const head = await fetchPart(c.key);
      if (ticket !== current) return;
      const stage = app ? app.stage : options.stage;
      app = new App(view, new Store(head, (key) => fetchPart(`${c.key}/${key}`)), { standalone: options.standalone, initial: { stage } });
    } catch (error) {
      clear(view).appendChild(h("div", { class: "ie-error" }, `Could not load rank ${rank} ${compileId}: ${error && error.message ? error.message : error}`));
    } finally {
      if (ticket === current) root.dataset.pending = "0";
    }
  };
  const first = list(summary.ranks).find((r) => list(r.compiles).length);
  if (first) open(first.rank, first.compiles[0].compile_id);
  else view.appendChild(h("p", { class: "ie-muted" }, "No rank of this TraceSet compiled anything."));
  return { root, bar, open, get app() { return app; } };
}

/**
 * Live widget: the bar for a TraceSetWidget (traits `traceset` and `pick`), or null for a widget
 * showing one compilation. A pick goes to Python, which sends the compilation as a new revision.
 */
export function traceSetBar(model) {
  const summary = model.get("traceset");
  if (!summary || !Array.isArray(summary.ranks)) return null;
  const bar = new TraceSetBar(summary, (rank, compileId) => {
    model.set("pick", { rank, compile_id: compileId });
    model.save_changes();
    bar.show(rank, compileId);
  });
  const sync = () => {
    const p = model.get("pick") || {};
    bar.show(p.rank, p.compile_id);
  };
  sync();
  model.on("change:pick", sync);
  bar.dispose = () => model.off("change:pick", sync);
  return bar;
}
