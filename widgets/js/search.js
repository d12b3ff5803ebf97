// One search box for everything in a trace: FX and post-grad nodes, loop-IR nodes, buffers, fused
// groups, kernels, the user's source lines and autotune configs. Hits of the graph on screen are
// listed by kind in a dropdown (a capped list: a trace can hold 100k names); Enter or a click jumps
// there, switching stage. Other graphs with hits are named with their counts.
//
// The index of a graph is built from the same parts the views load (store.js), the first time the
// box is used: the graph on screen first, the other graphs behind it. A query is then one pass over
// flat arrays of lower-cased strings, fast enough to run on every keystroke.

import { h, clear } from "./dom.js";

/** Kinds of hits, in the order the dropdown lists them. */
export const HIT_KINDS = [
  ["fx", "Dynamo FX nodes"],
  ["post_grad", "Post-grad nodes"],
  ["loop_ir", "Loop-IR nodes"],
  ["buffer", "Buffers"],
  ["fused", "Fused groups"],
  ["kernel", "Kernels"],
  ["source", "Source lines"],
  ["autotune", "Autotune configs"],
];
const PER_KIND = 8; // hits shown per kind
const GRAPH_PARTS = ["fx", "post_grad", "loop_ir", "fused", "kernels", "autotune"];

const list = (value) => (Array.isArray(value) ? value : []);
const basename = (path) => String(path).split(/[\\/]/).pop();

/**
 * One searchable item: `key` (its id, lower case) is matched first, `text` (what else describes
 * it) after; `sel` is what a jump selects and `stage` the stage it shows (default: the selection's).
 */
function entry(kind, id, label, detail, sel, text = "", stage = null) {
  return { kind, key: String(id).toLowerCase(), text: String(text).toLowerCase(), label: String(label), detail: String(detail ?? ""), sel, stage };
}

/** The searchable items of one graph, from its parts. */
export function graphEntries({ fx, post_grad: postGrad, loop_ir: loopIr, fused, kernels, autotune }) {
  const out = [];
  for (const [kind, part] of [["fx", fx], ["post_grad", postGrad]]) {
    for (const n of list(part && part.nodes)) {
      const name = String(n.name);
      out.push(entry(kind, name, name, n.target ?? n.op ?? "", { kind, id: name }, n.target ?? ""));
    }
  }
  const buffers = new Map(); // buffer -> the loop-IR node that writes it (the first that lists it)
  for (const op of list(loopIr)) {
    const name = String(op.name);
    out.push(entry("loop_ir", name, name, op.kind ?? "", { kind: "loop_ir", id: name }, list(op.buffers).join(" ")));
    for (const b of list(op.buffers)) if (!buffers.has(String(b))) buffers.set(String(b), name);
  }
  for (const [buf, op] of buffers) out.push(entry("buffer", buf, buf, `written by ${op}`, { kind: "loop_ir", id: op }));
  for (const f of list(fused && fused.fused)) {
    const name = String(f.name);
    out.push(entry("fused", name, name, f.kind ?? "", { kind: "fused", id: name }));
  }
  const kernelIds = new Set();
  for (const k of list(kernels)) {
    const id = String(k.id);
    kernelIds.add(id);
    out.push(entry("kernel", id, String(k.name ?? id), k.language ?? "", { kind: "kernel", id }, k.name ?? ""));
  }
  for (const r of list(autotune)) {
    const kernel = String(r.kernel ?? "");
    const sel = kernelIds.has(kernel) ? { kind: "kernel", id: kernel } : null;
    const time = typeof r.time_ms === "number" ? ` · ${r.time_ms.toFixed(4)} ms` : "";
    out.push(entry("autotune", r.choice ?? "", String(r.choice ?? ""), `${kernel}${time}${r.chosen ? " · chosen" : ""}`, sel, kernel, "autotune"));
  }
  return out;
}

/** The user's source lines the trace kept ({file: {line: text}}), searchable as file:line or text. */
export function sourceEntries(sources) {
  const out = [];
  for (const [file, lines] of Object.entries(sources || {})) {
    const short = basename(file);
    for (const [line, code] of Object.entries(lines || {})) {
      const sel = { kind: "user_line", id: file, line: Number(line) };
      out.push(entry("source", `${short}:${line}`, `${short}:${line}`, String(code).trim(), sel, `${file}:${line} ${code}`));
    }
  }
  return out;
}

/** How well `e` matches `q` (lower case): 0 its id, 1 its id's start, 2 inside its id, 3 its text; -1 none. */
function rank(e, q) {
  if (e.key === q) return 0;
  const at = e.key.indexOf(q);
  if (at === 0) return 1;
  if (at > 0) return 2;
  return e.text.includes(q) ? 3 : -1;
}

/**
 * Hits of `query` in `entries`, grouped by kind: {kind: {total, hits}} with at most `perKind` hits
 * per kind, best ranked first (then in trace order).
 */
export function findHits(entries, query, perKind = PER_KIND) {
  const q = query.trim().toLowerCase();
  const groups = {};
  if (!q) return groups;
  for (const e of entries) {
    const r = rank(e, q);
    if (r < 0) continue;
    const g = (groups[e.kind] ||= { total: 0, byRank: [[], [], [], []] });
    g.total += 1;
    if (g.byRank[r].length < perKind) g.byRank[r].push(e);
  }
  for (const g of Object.values(groups)) {
    g.hits = g.byRank.flat().slice(0, perKind);
    delete g.byRank;
  }
  return groups;
}

/** Number of entries that match `query` at all (for the other graphs' counts). */
export function countHits(entries, query) {
  const q = query.trim().toLowerCase();
  let n = 0;
  if (q) for (const e of entries) if (e.key.includes(q) || e.text.includes(q)) n += 1;
  return n;
}

let nextBoxId = 0;

/** The search box of an App (app.js): a combobox with a grouped listbox of hits. */
export class SearchBox {
  constructor(app) {
    this.app = app;
    this.entries = new Map(); // graph index -> Promise<entry[]>
    this.ready = new Map(); // graph index -> entry[] once built
    this.sources = null;
    this.options = []; // [{el, hit}] of the dropdown, in order
    this.active = -1;
    const id = `ie-gsearch${nextBoxId++}`;
    this.input = h("input", {
      class: "ie-gsearch-input",
      type: "search",
      placeholder: "search everything  ( / )",
      role: "combobox",
      "aria-label": "search nodes, kernels, buffers, source lines, configs",
      "aria-autocomplete": "list",
      "aria-keyshortcuts": "/",
      "aria-expanded": "false",
      "aria-controls": `${id}-list`,
      autocomplete: "off",
      spellcheck: "false",
    });
    this.pop = h("div", { class: "ie-gsearch-pop ie-scroll", id: `${id}-list`, role: "listbox", "aria-label": "search hits", hidden: true });
    this.root = h("div", { class: "ie-gsearch", role: "search" }, this.input, this.pop);
    this.input.addEventListener("input", () => this.run());
    this.input.addEventListener("focus", () => {
      this._index();
      if (this.input.value.trim()) this.run();
    });
    // Clicks in the dropdown keep the focus in the input (mousedown below), so a blur means the
    // focus went elsewhere: close at once (a delayed close would also shut the next query's list).
    this.input.addEventListener("blur", () => this.close());
    this.input.addEventListener("keydown", (ev) => this._key(ev));
    // Clicks on hits must not take the focus from the input before they are handled.
    this.pop.addEventListener("mousedown", (ev) => ev.preventDefault());
  }

  focus() {
    this.input.focus();
    this.input.select();
  }

  /** The entries of graph `gi`, built once from its parts. */
  _graph(gi) {
    if (!this.entries.has(gi)) {
      const parts = GRAPH_PARTS.map((p) => this.app.graphs[gi].part(p).catch(() => null));
      const built = Promise.all(parts).then((values) => {
        const own = graphEntries(Object.fromEntries(GRAPH_PARTS.map((p, i) => [p, values[i]])));
        this.ready.set(gi, own);
        return own;
      });
      this.entries.set(gi, built);
    }
    return this.entries.get(gi);
  }

  /** Index what is not indexed yet: the graph on screen and the sources first, the other graphs behind. */
  _index() {
    const here = this.app.graphIdx;
    const first = [];
    if (!this.sources) {
      const has = list(this.app.summary.parts).includes("sources");
      this.sources = (has ? this.app.store.get("sources").then(sourceEntries, () => []) : Promise.resolve([])).then((s) => (this.sourceList = s));
      first.push(this.sources);
    }
    if (!this.entries.has(here)) first.push(this._graph(here));
    const rest = this.app.graphs.map((_, i) => i).filter((i) => !this.entries.has(i) && i !== here);
    if (first.length) this.app._track(Promise.all(first).then(() => this.run()));
    if (rest.length) this.app._track(Promise.all(rest.map((i) => this._graph(i))).then(() => this.run()));
  }

  /** Run the query over what is indexed so far and redraw the dropdown. */
  run() {
    const query = this.input.value;
    const here = this.app.graphIdx;
    if (!query.trim()) return this.close();
    if (!this.ready.has(here) || !this.sourceList) {
      this._index();
      this._draw(null, [], query);
      return;
    }
    const groups = findHits(this.ready.get(here).concat(this.sourceList), query);
    const others = [];
    this.app.graphs.forEach((gd, i) => {
      if (i === here || !this.ready.has(i)) return;
      const n = countHits(this.ready.get(i), query);
      if (n) others.push({ index: i, id: gd.id, count: n });
    });
    this._draw(groups, others, query);
  }

  _draw(groups, others, query) {
    clear(this.pop);
    this.options = [];
    this.active = -1;
    if (groups === null) {
      this.pop.appendChild(h("div", { class: "ie-muted ie-gsearch-note" }, "indexing…"));
    } else {
      for (const [kind, title] of HIT_KINDS) {
        const g = groups[kind];
        if (!g) continue;
        const headId = `${this.pop.id}-${kind}`;
        const rows = g.hits.map((hit) => {
          const el = h(
            "div",
            { class: "ie-gsearch-hit", role: "option", id: `${this.pop.id}-o${this.options.length}`, "aria-selected": "false", "data-kind": kind, "data-id": hit.key, onclick: () => this.jump(hit) },
            h("span", { class: "ie-gsearch-label" }, hit.label),
            hit.detail ? h("span", { class: "ie-muted ie-gsearch-detail" }, hit.detail) : null,
          );
          this.options.push({ el, hit });
          return el;
        });
        const more = g.total > g.hits.length ? h("span", { class: "ie-muted" }, ` · first ${g.hits.length}`) : null;
        this.pop.appendChild(
          h("div", { class: "ie-gsearch-group", role: "group", "aria-labelledby": headId, "data-kind": kind }, h("div", { class: "ie-gsearch-head", id: headId }, title, " ", h("span", { class: "ie-count" }, String(g.total)), more), rows),
        );
      }
      if (!this.options.length) this.pop.appendChild(h("div", { class: "ie-muted ie-gsearch-note" }, `nothing matches “${query.trim()}” in ${this.app.gd.id}`));
      if (others.length) {
        this.pop.appendChild(
          h(
            "div",
            { class: "ie-gsearch-others" },
            h("span", { class: "ie-muted" }, "other graphs: "),
            others.map((o) => h("button", { class: "ie-chip", type: "button", "data-graph": o.id, onclick: () => this.openGraph(o.index) }, `${o.id} (${o.count})`)),
          ),
        );
      }
      if (this.options.length) this.setActive(0);
    }
    this.pop.hidden = false;
    this.input.setAttribute("aria-expanded", "true");
  }

  setActive(i) {
    if (!this.options.length) return;
    const old = this.options[this.active];
    if (old) old.el.setAttribute("aria-selected", "false");
    this.active = (i + this.options.length) % this.options.length;
    const now = this.options[this.active].el;
    now.setAttribute("aria-selected", "true");
    this.input.setAttribute("aria-activedescendant", now.id);
    now.scrollIntoView({ block: "nearest" });
  }

  get isOpen() {
    return !this.pop.hidden;
  }

  close() {
    this.pop.hidden = true;
    this.input.setAttribute("aria-expanded", "false");
    this.input.removeAttribute("aria-activedescendant");
  }

  /** Show the hit: its stage, selected. The focus goes back to the view, so its keys work. */
  jump(hit) {
    this.close();
    this.app.root.focus({ preventScroll: true });
    if (hit.stage) {
      this.app.setStage(hit.stage);
      return this.app.select(hit.sel);
    }
    return this.app.go(hit.sel);
  }

  /** Switch to another graph and search it with the same query. */
  openGraph(index) {
    return this.app.setGraph(this.app.graphs[index].id).then(() => {
      this.input.focus();
      this.run();
    });
  }

  _key(ev) {
    if (ev.key === "ArrowDown" || ev.key === "ArrowUp") {
      if (!this.isOpen) this.run();
      else this.setActive(this.active + (ev.key === "ArrowDown" ? 1 : -1));
    } else if (ev.key === "Enter") {
      if (!this.isOpen) this.run();
      const option = this.options[Math.max(0, this.active)];
      if (option) this.jump(option.hit);
    } else if (ev.key === "Escape" && this.isOpen) {
      this.close();
    } else return;
    ev.preventDefault();
    ev.stopPropagation();
  }
}
