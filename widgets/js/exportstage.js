// The Export stage of an AOT compilation (explorer.export; compiler/SCHEMA.md "export"): what
// torch.export produced before Inductor ran, i.e. the signature (which inputs are parameters, buffers
// or the user's), the value range of every dynamic dim, the exported graph as code, and the .pt2
// package the compilation's runs load. One part for the whole trace (`export`), fetched when the
// stage is first opened; a JIT compilation has no such stage and shows no button for it.

import { h } from "./dom.js";
import "./exportstage.css";

const list = (value) => (Array.isArray(value) ? value : []);

function section(key, title, count, body) {
  return h("details", { class: "ie-exp-section", "data-section": key, open: true },
    h("summary", null, h("strong", null, title), count === null ? null : [" ", h("span", { class: "ie-count" }, String(count))]), body);
}

function table(columns, rows, cls) {
  return h("table", { class: `ie-table ${cls}` }, h("thead", null, h("tr", null, columns.map((c) => h("th", null, c)))), h("tbody", null, rows));
}

function specRows(specs) {
  return list(specs).map((s) =>
    h("tr", { class: "ie-exp-spec", "data-kind": String(s.kind ?? ""), "data-name": String(s.name ?? "") },
      h("td", null, h("span", { class: `ie-badge ie-exp-kind${s.kind === "USER_INPUT" || s.kind === "USER_OUTPUT" ? " ie-exp-user" : ""}` }, String(s.kind ?? ""))),
      h("td", { class: "ie-mono" }, String(s.name ?? "")),
      h("td", { class: "ie-mono" }, s.target === null || s.target === undefined ? "" : String(s.target))));
}

export class ExportStage {
  /** @param {object|null} exported the trace's `export` part, or null when the trace has none */
  constructor(exported) {
    this.root = h("div", { class: "ie-stage ie-scroll ie-export-stage", "data-stage": "export" });
    if (!exported || typeof exported !== "object") {
      this.root.appendChild(h("p", { class: "ie-muted ie-exp-empty" }, "This compilation was not exported: explorer.export(model, args) compiles through torch.export and AOTInductor and shows the exported program here."));
      return;
    }
    const ranges = Object.entries(exported.range_constraints || {});
    const graph = String(exported.graph || "");
    this.root.append(
      section("program", "Exported program", null, h("div", { class: "ie-exp-program" },
        h("div", { class: "ie-kv" }, h("span", { class: "ie-k" }, "tracing"), h("span", { class: "ie-v ie-exp-strict" }, exported.strict ? "strict (Dynamo)" : "non-strict (Python)")),
        h("div", { class: "ie-kv" }, h("span", { class: "ie-k" }, "dynamic_shapes"), h("span", { class: "ie-v ie-mono ie-exp-dynamic" }, exported.dynamic_shapes ? String(exported.dynamic_shapes) : "none (static shapes)")),
        h("div", { class: "ie-kv" }, h("span", { class: "ie-k" }, "package"), h("span", { class: "ie-v ie-mono ie-exp-package" }, String(exported.package_path || "not kept"))))),
      section("inputs", "Inputs", list(exported.inputs).length, table(["kind", "name", "target"], specRows(exported.inputs), "ie-exp-inputs")),
      section("outputs", "Outputs", list(exported.outputs).length, table(["kind", "name", "target"], specRows(exported.outputs), "ie-exp-outputs")),
      section("ranges", "Dynamic dims", ranges.length, ranges.length
        ? table(["symbol", "lower", "upper"], ranges.map(([sym, [lo, hi]]) => h("tr", { class: "ie-exp-range", "data-symbol": sym }, h("td", { class: "ie-mono" }, sym), h("td", null, String(lo)), h("td", null, String(hi)))), "ie-exp-ranges")
        : h("p", { class: "ie-muted" }, "Every dim is static: the package runs only at the example inputs' shapes.")),
      section("graph", "Graph", graph ? graph.split("\n").length : 0, h("pre", { class: "ie-code ie-exp-graph" }, graph)),
    );
  }

  update() {}
}
