// A kernel's launch and tuning facts out of its meta, as a small table, and the rest folded: the same
// keys in the same order as compiler/model/kernel_facts.py (the terminal view).

import { h } from "./dom.js";

export const FACT_KEYS = ["grid", "num_warps", "num_stages", "num_ctas", "config", "heuristic", "size_hints",
  "reduction_hint", "registers", "spills", "shared_memory", "configs_tried"];

const empty = (v) => v === undefined || v === null || (Array.isArray(v) && !v.length) ||
  (typeof v === "object" && !Array.isArray(v) && !Object.keys(v).length);

function text(value) {
  if (Array.isArray(value)) return value.map(String).join(" x ");
  if (value && typeof value === "object") return Object.entries(value).map(([k, v]) => `${k} ${v}`).join(", ");
  return String(value);
}

/** [label, value] rows; each block size of the chosen config gets its own row. */
export function launchFacts(meta) {
  const rows = [];
  for (const key of FACT_KEYS) {
    const value = meta[key];
    if (empty(value)) continue;
    if (key === "config" && typeof value === "object" && !Array.isArray(value)) {
      for (const [name, size] of Object.entries(value)) rows.push([name, String(size)]);
    } else rows.push([key, text(value)]);
  }
  return rows;
}

/** The facts table and a folded "raw meta" section with everything else (each only when not empty). */
export function kernelFacts(meta) {
  const rows = launchFacts(meta || {});
  const rest = Object.fromEntries(Object.entries(meta || {}).filter(([k]) => !FACT_KEYS.includes(k)));
  return [
    rows.length ? h("table", { class: "ie-kfacts" }, h("tbody", null, rows.map(([label, value]) =>
      h("tr", { "data-fact": label }, h("th", null, label), h("td", null, value))))) : null,
    Object.keys(rest).length ? h("details", { class: "ie-kraw" }, h("summary", null, "raw meta"),
      h("pre", { class: "ie-v" }, JSON.stringify(rest, null, 1))) : null,
  ].filter(Boolean);
}
