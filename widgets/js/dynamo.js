// The Dynamo stage: what Dynamo reported while it traced (compiler/SCHEMA.md "Dynamo stage"):
// frames, graph breaks, recompiles, guards grouped by kind, symbols and Dynamo's own metrics.
// It is one part for the whole trace (`dynamo`), not per graph. Every user line it names is a
// button that selects that line (`user_line`), so the side panel shows the line's text and what
// the graph made of it; rows pointing at the selected line light up here.

import { h, clear } from "./dom.js";
import { userLineKey } from "./model.js";
import { VirtualList } from "./virtual.js";
import "./dynamo.css";

const list = (value) => (Array.isArray(value) ? value : []);
const GUARD_ROW_H = 24;
const GUARD_ROWS_VISIBLE = 14;
// Dynamo's metric name -> column title (as compiler/render/dynamo.py's terminal table).
const METRIC_COLUMNS = [
  ["entire_frame_compile_time_s", "total s"],
  ["backend_compile_time_s", "backend s"],
  ["inductor_compile_time_s", "inductor s"],
  ["guard_count", "guards"],
  ["shape_env_guard_count", "shape guards"],
  ["graph_op_count", "graph ops"],
  ["num_graph_breaks", "breaks"],
  ["cache_size", "cache entries"],
];

const isLine = (ul) => Array.isArray(ul) && ul.length >= 2;
const lineKey = (ul) => (isLine(ul) ? userLineKey(ul[0], ul[1]) : null);
const baseName = (file) => String(file).split("/").pop();

/** "file.py:12" as a button selecting that user line; plain text when there is no line. */
function lineButton(ul, ctx) {
  if (!isLine(ul)) return h("span", { class: "ie-muted" }, "no user line");
  const [file, line] = ul;
  return h(
    "button",
    { class: "ie-chip ie-chip-user_line", type: "button", title: `${file}:${line}`, "data-file": String(file), "data-line": String(line), onclick: (e) => { e.stopPropagation(); ctx.select({ kind: "user_line", id: String(file), line: Number(line) }); } },
    `${baseName(file)}:${line}`,
  );
}

function graphChips(ids, ctx) {
  const all = list(ids).map(String);
  if (!all.length) return h("span", { class: "ie-muted" }, "–");
  return all.map((gid) => h("button", { class: "ie-chip ie-chip-graph", type: "button", "data-graph": gid, title: `show graph ${gid}`, onclick: () => ctx.graph(gid) }, gid));
}

function section(key, title, count, body, open = true) {
  return h("details", { class: "ie-dyn-section", "data-section": key, open }, h("summary", null, h("strong", null, title), " ", h("span", { class: "ie-count" }, String(count))), body);
}

function table(columns, rows, cls) {
  return h("table", { class: `ie-table ${cls}` }, h("thead", null, h("tr", null, columns.map((c) => h("th", null, c)))), h("tbody", null, rows));
}

function metricText(value) {
  if (value === null || value === undefined) return "";
  if (typeof value === "number" && !Number.isInteger(value)) return value.toFixed(3);
  return typeof value === "string" ? value : JSON.stringify(value);
}

export class DynamoStage {
  /** @param {object|null} dynamo the trace's `dynamo` part, or null when the trace has none */
  constructor(dynamo, ctx) {
    this.ctx = ctx;
    this.root = h("div", { class: "ie-stage ie-scroll ie-dynamo-stage", "data-stage": "dynamo" });
    this.lineItems = []; // [element, userLineKey]: rows that light up when their line is selected
    this.guardLists = [];
    this.selectedGuard = null;
    if (!dynamo || typeof dynamo !== "object") {
      this.root.appendChild(h("p", { class: "ie-muted ie-dyn-empty" }, "This trace has no Dynamo stage (it was saved before guards, graph breaks and symbols were recorded, or by a capture that did not collect them)."));
      return;
    }
    const guards = dynamo.guards && typeof dynamo.guards === "object" ? dynamo.guards : {};
    this.root.append(
      this._frames(list(dynamo.frames)),
      this._breaks(list(dynamo.graph_breaks)),
      this._recompiles(list(dynamo.recompiles)),
      this._guards(guards),
      this._symbols(list(dynamo.symbols)),
      this._metrics(list(dynamo.compile_metrics)),
    );
  }

  _track(el, ul) {
    const key = lineKey(ul);
    if (key) this.lineItems.push([el, key]);
    return el;
  }

  _frames(frames) {
    const rows = frames.map((f) =>
      h("tr", { class: "ie-dyn-frame", "data-compile-id": String(f.compile_id ?? ""), "data-skipped": f.skipped ? "true" : null },
        h("td", { class: "ie-mono" }, String(f.compile_id ?? "")),
        h("td", { class: "ie-mono" }, String(f.function ?? "")),
        h("td", null, lineButton(f.filename ? [f.filename, f.line] : null, this.ctx)),
        h("td", null, f.skipped
          ? h("span", { class: "ie-dyn-skipped", title: String(f.skipped) }, h("span", { class: "ie-badge ie-skip-badge" }, "ran eagerly"), " ", String(f.skipped))
          : graphChips(f.graphs, this.ctx))),
    );
    const body = frames.length ? table(["compile id", "function", "defined at", "graphs"], rows, "ie-dyn-frames") : h("p", { class: "ie-muted" }, "No frame was compiled.");
    return section("frames", "Frames", frames.length, body);
  }

  _breaks(breaks) {
    const body = breaks.length
      ? breaks.map((b, i) =>
          this._track(
            h(
              "div",
              { class: "ie-card ie-dyn-break", "data-index": String(i) },
              h("div", { class: "ie-card-head" },
                h("span", { class: "ie-badge ie-break-badge" }, "graph break"),
                b.frame_skipped ? h("span", { class: "ie-badge ie-skip-badge" }, "frame skipped") : null,
                h("strong", null, String(b.reason ?? "graph break")),
                lineButton(b.user_line, this.ctx)),
              b.frame_skipped
                ? h("p", { class: "ie-dyn-skip-why" }, "Dynamo gave up on the whole function, which ran eagerly (no compiled graph): ", String(b.frame_skipped))
                : null,
              h("div", { class: "ie-kv" }, h("span", { class: "ie-k" }, "graphs"), h("span", { class: "ie-v" }, graphChips(b.graphs_before, this.ctx), " ⟶ ", graphChips(b.graphs_after, this.ctx))),
              b.compile_id || b.resume
                ? h("div", { class: "ie-kv" }, h("span", { class: "ie-k" }, "compiles"), h("span", { class: "ie-v" }, `${b.compile_id ?? "?"} breaks, ${b.resume ?? "?"} resumes`))
                : null,
              b.explanation ? h("p", { class: "ie-dyn-explanation" }, String(b.explanation)) : null,
              list(b.hints).length ? h("ul", { class: "ie-dyn-hints" }, list(b.hints).map((hint) => h("li", null, String(hint)))) : null,
            ),
            b.user_line,
          ),
        )
      : h("p", { class: "ie-muted" }, "No graph break: Dynamo traced every frame whole.");
    return section("graph_breaks", "Graph breaks", breaks.length, body);
  }

  _recompiles(recompiles) {
    const rows = recompiles.map((r) =>
      h("tr", { class: "ie-dyn-recompile" },
        h("td", { class: "ie-mono" }, String(r.compile_id ?? "")),
        h("td", { class: "ie-mono" }, String(r.function ?? "")),
        h("td", null, list(r.reasons).map((reason) => h("pre", { class: "ie-dyn-reason" }, String(reason)))),
        h("td", null, graphChips(r.graphs, this.ctx))),
    );
    const body = recompiles.length ? table(["compile id", "function", "failed guard", "new graphs"], rows, "ie-dyn-recompiles") : h("p", { class: "ie-muted" }, "No recompile.");
    return section("recompiles", "Recompiles", recompiles.length, body, recompiles.length > 0);
  }

  _guards(byKind) {
    const kinds = Object.entries(byKind).filter(([, group]) => Array.isArray(group));
    const total = kinds.reduce((n, [, group]) => n + group.length, 0);
    this.guardDetail = h("div", { class: "ie-dyn-guard-detail ie-muted" }, "Click a guard: its user line shows in the side panel.");
    const groups = kinds.map(([kind, group]) => {
      const box = h("div", { class: "ie-dyn-guard-box" });
      const details = h("details", { class: "ie-dyn-guard-group", "data-guard-kind": kind }, h("summary", null, h("span", { class: "ie-mono" }, kind), " ", h("span", { class: "ie-count ie-guard-count" }, String(group.length))), box);
      // Rows are built when a group is first opened; large groups build only the rows in view.
      details.addEventListener("toggle", () => {
        if (!details.open || box.firstChild) return;
        const vlist = new VirtualList(group.length, (i) => this._guardRow(kind, group[i], i), { rowHeight: GUARD_ROW_H, className: "ie-dyn-guard-list", label: `${kind} guards` });
        vlist.root.style.height = `${Math.min(group.length, GUARD_ROWS_VISIBLE) * GUARD_ROW_H + 2}px`;
        vlist.onRow = (i, el) => this._styleGuard(el, kind, i, group[i]);
        box.appendChild(vlist.root);
        vlist.render();
        this.guardLists.push([vlist, kind, group]);
      });
      return details;
    });
    const body = kinds.length ? [this.guardDetail, groups] : h("p", { class: "ie-muted" }, "No guards recorded.");
    return section("guards", "Guards by kind", total, body);
  }

  _guardRow(kind, g, i) {
    return h(
      "div",
      { class: "ie-row ie-dyn-guard", role: "listitem", "data-guard-kind": kind, "data-index": String(i), title: String(g.code ?? ""), onclick: () => this._pickGuard(kind, g, i) },
      h("span", { class: "ie-mono ie-ellipsis ie-dyn-source" }, String(g.source ?? "global")),
      h("code", { class: "ie-ellipsis ie-dyn-code" }, String(g.code ?? "")),
      isLine(g.user_line) ? h("span", { class: "ie-muted ie-ellipsis" }, `${baseName(g.user_line[0])}:${g.user_line[1]}`) : h("span", { class: "ie-muted" }, "–"),
    );
  }

  _styleGuard(el, kind, i, g) {
    const sel = this.selectedGuard;
    el.classList.toggle("ie-selected", Boolean(sel && sel[0] === kind && sel[1] === i));
    el.classList.toggle("ie-lit", Boolean(this.litLine && lineKey(g.user_line) === this.litLine));
  }

  _restyleGuards() {
    for (const [vlist, kind, group] of this.guardLists) for (const [i, el] of vlist.rows) this._styleGuard(el, kind, i, group[i]);
  }

  /** Show the guard whole above the groups and select the user line that installed it. */
  _pickGuard(kind, g, i) {
    this.selectedGuard = [kind, i];
    this._restyleGuards();
    // h() skips the null of an absent user code; the DOM's own append() would print "null"
    clear(this.guardDetail).appendChild(h("div", null,
      h("div", { class: "ie-card-head" }, h("span", { class: "ie-badge" }, kind), h("strong", { class: "ie-mono" }, String(g.source ?? "global guard")), lineButton(g.user_line, this.ctx), g.compile_id ? h("span", { class: "ie-muted" }, `compile ${g.compile_id}`) : null),
      h("pre", { class: "ie-code ie-dyn-guard-code" }, String(g.code ?? "")),
      g.user_code ? h("div", { class: "ie-kv" }, h("span", { class: "ie-k" }, "user code"), h("code", { class: "ie-v" }, String(g.user_code))) : null,
    ));
    this.guardDetail.classList.remove("ie-muted");
    if (isLine(g.user_line)) this.ctx.select({ kind: "user_line", id: String(g.user_line[0]), line: Number(g.user_line[1]) });
  }

  _symbols(symbols) {
    const rows = symbols.map((s) => {
      const spec = s.specialized !== null && s.specialized !== undefined && s.specialized !== "" ? `${s.specialized}${s.specialization_reason ? ` (${s.specialization_reason})` : ""}` : s.unbacked ? "unbacked" : "";
      const range = s.initial_range && s.initial_range !== s.range ? `${s.initial_range} → ${s.range}` : String(s.range ?? "");
      return this._track(
        h("tr", { class: "ie-dyn-symbol", "data-symbol": String(s.name ?? "") },
          h("td", { class: "ie-mono" }, String(s.name ?? "")),
          h("td", { class: "ie-mono" }, String(s.source ?? "")),
          h("td", { class: "ie-num" }, String(s.value ?? "")),
          h("td", { class: "ie-mono" }, range),
          h("td", null, spec),
          h("td", null, list(s.guards).map((g) => h("div", { class: "ie-dyn-symguard" }, h("code", null, String(g.expr ?? "")), " ", isLine(g.user_line) ? lineButton(g.user_line, this.ctx) : null))),
          h("td", null, lineButton(s.user_line, this.ctx))),
        s.user_line,
      );
    });
    const body = symbols.length
      ? table(["symbol", "source", "value", "range", "specialization", "guards on it", "created at"], rows, "ie-dyn-symbols")
      : h("p", { class: "ie-muted" }, "No symbols: every shape was static (compile with dynamic=True, or mark dimensions dynamic, to see them).");
    return section("symbols", "Symbols", symbols.length, body, symbols.length > 0);
  }

  _metrics(metrics) {
    const columns = METRIC_COLUMNS.filter(([key]) => metrics.some((m) => m.values && m.values[key] !== undefined && m.values[key] !== null));
    const rows = metrics.map((m) => {
      const v = m.values || {};
      return h("tr", { class: "ie-dyn-metric" },
        h("td", { class: "ie-mono" }, String(m.compile_id ?? "")),
        h("td", null, String(m.kind ?? "")),
        h("td", { class: "ie-mono" }, String(v.co_name ?? "")),
        columns.map(([key]) => h("td", { class: "ie-num" }, metricText(v[key]))));
    });
    const body = metrics.length ? table(["compile id", "kind", "function", ...columns.map(([, title]) => title)], rows, "ie-dyn-metrics") : h("p", { class: "ie-muted" }, "Dynamo reported no compilation metrics.");
    return section("metrics", "Compile metrics", metrics.length, body, false);
  }

  shown() {
    for (const [vlist] of this.guardLists) vlist.render();
  }

  update(sel) {
    this.litLine = sel && sel.kind === "user_line" ? userLineKey(sel.id, sel.line) : null;
    for (const [el, key] of this.lineItems) el.classList.toggle("ie-lit", key === this.litLine);
    this._restyleGuards();
  }

  /** Bring the first break or symbol of the selected user line into view (guards stay in their groups). */
  reveal() {
    const hit = this.lineItems.find(([, key]) => key === this.litLine);
    if (hit) hit[0].scrollIntoView({ block: "nearest" });
  }
}

/** The stage button's count, saying what it counts: guards, graph breaks and frames that ran eagerly when
 * there are any (from the summary). */
export function dynamoCount(summary) {
  const d = summary && summary.dynamo;
  if (!d) return "–";
  const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;
  const breaks = d.graph_breaks ? ` · ${plural(d.graph_breaks, "break")}` : "";
  const skipped = list(d.skipped_frames).length ? ` · ${list(d.skipped_frames).length} ran eagerly` : "";
  return `${plural(d.guards, "guard")}${breaks}${skipped}`;
}

/** The graph picker's entry for graph `g`; a graph that runs after a graph break is marked, the break as its title. */
export function graphOption(summary, g, i) {
  const after = summary && summary.dynamo && summary.dynamo.after_break ? summary.dynamo.after_break[g.id] : undefined;
  return h(
    "option",
    { value: String(i), "data-graph": g.id, "data-after-break": after ? "true" : null, title: after ? `runs after a graph break: ${after}` : null },
    g.label,
    after ? " · ⤷ after graph break" : "",
  );
}

/** userLineKey -> reason of every graph break (the side panel marks those source lines); empty without breaks. */
export async function breakLines(store, summary) {
  const out = new Map();
  if (!summary.dynamo || !summary.dynamo.graph_breaks) return out;
  const dynamo = await store.get("dynamo").catch(() => null);
  for (const b of list(dynamo && dynamo.graph_breaks)) {
    const key = lineKey(b.user_line);
    if (key && !out.has(key)) out.set(key, String(b.reason ?? "graph break"));
  }
  return out;
}
