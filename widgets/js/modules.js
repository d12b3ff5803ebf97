// The FX graph by module: one row per module path (`nn.Module` the nodes were traced in) with its
// node count, the kernels computing those nodes and, with a profile, the time spread to them. Answers
// "which layer costs the time" without reading the graph. Clicking a row selects the module's first
// node, so the side panel shows its kernels and lines.

import { h } from "./dom.js";
import { formatMs } from "./heat.js";

const list = (value) => (Array.isArray(value) ? value : []);
const TOP_LEVEL = "(top level)";

/** Rows {path, nodes, kernels, ms, first} of FX nodes grouped by module path. */
export function moduleRows(nodes, times) {
  const rows = new Map();
  for (const node of list(nodes)) {
    if (node.op === "placeholder" || node.op === "output") continue;
    const path = node.module ? String(node.module) : TOP_LEVEL;
    let row = rows.get(path);
    if (!row) rows.set(path, (row = { path, nodes: 0, kernels: new Set(), ms: null, first: String(node.name) }));
    row.nodes += 1;
    for (const k of list(node.kernels)) row.kernels.add(String(k));
    const ms = times.get(String(node.name));
    if (ms !== undefined) row.ms = (row.ms ?? 0) + ms;
  }
  return [...rows.values()];
}

const COLUMNS = [
  ["path", "module", (r) => r.path],
  ["nodes", "nodes", (r) => r.nodes],
  ["kernels", "kernels", (r) => r.kernels.size],
  ["ms", "time (ms)", (r) => r.ms],
];

/** The table element; sorted by time when profiled, else by node count; headers sort. */
export function modulesTable(nodes, times, select) {
  const rows = moduleRows(nodes, times);
  const timed = rows.some((r) => r.ms !== null);
  const columns = timed ? COLUMNS : COLUMNS.slice(0, 3);
  const body = h("tbody");
  const heads = new Map();
  let sort = { id: timed ? "ms" : "nodes", dir: -1 };
  const draw = () => {
    const value = columns.find(([id]) => id === sort.id)[2];
    const sorted = [...rows].sort((a, b) => {
      const x = value(a);
      const y = value(b);
      if (x === null || y === null) return x === null ? (y === null ? 0 : 1) : -1;
      return (typeof x === "number" ? x - y : String(x).localeCompare(String(y))) * sort.dir;
    });
    body.replaceChildren(
      ...sorted.map((r) =>
        h(
          "tr",
          { class: "ie-module-row", "data-module": r.path, onclick: () => select(r.first), title: `select ${r.first}, the module's first node` },
          h("td", null, r.path),
          h("td", { class: "ie-num" }, String(r.nodes)),
          h("td", { class: "ie-num" }, String(r.kernels.size)),
          timed ? h("td", { class: "ie-num", "data-ms": r.ms === null ? null : String(r.ms) }, r.ms === null ? "–" : formatMs(r.ms)) : null,
        ),
      ),
    );
    for (const [id, th] of heads) th.setAttribute("aria-sort", id !== sort.id ? "none" : sort.dir === 1 ? "ascending" : "descending");
  };
  const header = h(
    "tr",
    null,
    columns.map(([id, label]) => {
      const th = h("th", { "data-sort": id, onclick: () => {
        sort = { id, dir: sort.id === id ? -sort.dir : id === "path" ? 1 : -1 };
        draw();
      } }, label);
      heads.set(id, th);
      return th;
    }),
  );
  draw();
  return h("table", { class: "ie-table ie-modules" }, h("thead", null, header), body);
}
