// "What if" in the fused view: the selected group, an "unfuse" button, and beside it the comparison
// Python sends back for c.what_if(unfuse=group) (widgets/what_if_payload.py): the verdict, kernels
// before and after with their bytes (and ms once measured), the totals; or the refusal's message.
// A group of several scheduler nodes is unfused; a group of one loop holding several of the user's lines
// (Inductor inlined them while lowering) is cut at its lines by the same call; any other group is one
// scheduler node with nothing to undo, and the button says so without asking Python.
// Only the live widget can recompile: commWhatIf returns null elsewhere (a trace, the HTML export),
// and the fused view then shows no button.

import { h, clear } from "./dom.js";
import "./whatif.css";

const num = (v) => (typeof v === "number" && Number.isFinite(v) ? v : null);

function bytes(n) {
  if (num(n) === null) return "–";
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let v = n;
  let u = 0;
  while (Math.abs(v) >= 1024 && u < units.length - 1) { v /= 1024; u += 1; }
  return `${u ? v.toFixed(1) : v} ${units[u]}`;
}

const ms = (v) => (num(v) === null ? "–" : v.toFixed(4));

function numerics(side) {
  if (side.numerics_ok === null || side.numerics_ok === undefined) return "–";
  const worst = num(side.max_rel) === null ? "" : `, max rel ${side.max_rel.toPrecision(3)}`;
  return `${side.numerics_ok ? "within tolerance" : "diverges"}${worst}`;
}

/**
 * The live widget's "what if" request over the comm: (graph, group, measure) => Promise of the reply. A reply
 * for another compilation (a newer revision was shown meanwhile) is dropped by its id.
 */
export function commWhatIf(model) {
  if (!model.get("what_if_ready")) return null;
  const waiting = new Map();
  let next = 0;
  const onMessage = (msg) => {
    if (!msg || msg.type !== "what_if" || !waiting.has(msg.id)) return;
    const resolve = waiting.get(msg.id);
    waiting.delete(msg.id);
    resolve(msg);
  };
  model.on("msg:custom", onMessage);
  const ask = (graph, group, measure) =>
    new Promise((resolve) => {
      const id = `w${next++}`;
      waiting.set(id, resolve);
      model.send({ type: "what_if", graph, group, measure, id });
    });
  ask.close = () => model.off("msg:custom", onMessage);
  return ask;
}

function kernelTable(rows) {
  const head = ["", "before", "bytes", "ms", "after", "bytes", "ms", "nodes"];
  return h(
    "table",
    { class: "ie-table ie-whatif-kernels" },
    h("thead", null, h("tr", null, head.map((c) => h("th", null, c)))),
    h(
      "tbody",
      null,
      rows.map((r) =>
        h(
          "tr",
          { "data-status": String(r.status ?? "") },
          h("td", null, h("span", { class: "ie-badge" }, String(r.status ?? ""))),
          h("td", { class: "ie-whatif-before" }, String(r.before ?? "")),
          h("td", null, bytes(r.before_bytes)),
          h("td", null, ms(r.before_ms)),
          h("td", { class: "ie-whatif-after" }, String(r.after ?? "")),
          h("td", null, bytes(r.after_bytes)),
          h("td", null, ms(r.after_ms)),
          h("td", { class: "ie-muted" }, (r.nodes || []).join(", ")),
        ),
      ),
    ),
  );
}

function totalsTable(totals) {
  const a = totals.before || {};
  const b = totals.after || {};
  const rows = [
    ["kernels", String(a.kernels ?? "–"), String(b.kernels ?? "–"), "kernels"],
    ["bytes moved", bytes(a.bytes), bytes(b.bytes), "bytes"],
    ["peak memory (planned)", bytes(a.peak_bytes), bytes(b.peak_bytes), "peak"],
    ["ms per call", ms(a.ms), ms(b.ms), "ms"],
    ["numerics vs eager", numerics(a), numerics(b), "numerics"],
  ];
  return h(
    "table",
    { class: "ie-table ie-whatif-totals" },
    h("thead", null, h("tr", null, ["", "before", "after"].map((c) => h("th", null, c)))),
    h("tbody", null, rows.map(([label, x, y, key]) => h("tr", { "data-total": key }, h("th", null, label), h("td", null, x), h("td", null, y)))),
  );
}

/** The comparison (or the refusal) for one group. */
export function whatIfResult(reply) {
  if (reply.error) return h("div", { class: "ie-whatif-result ie-error", role: "alert", "data-group": reply.group }, reply.error);
  return h(
    "div",
    { class: "ie-whatif-result", "data-group": reply.group },
    h("p", { class: "ie-whatif-verdict" }, h("strong", null, String(reply.verdict ?? ""))),
    kernelTable(reply.kernels || []),
    totalsTable(reply.totals || {}),
    reply.note ? h("p", { class: "ie-muted" }, String(reply.note)) : null,
  );
}

/**
 * What pressing the button does for a group ({nodes, lines, kind}: its scheduler nodes, the user's lines its
 * kernels compute, its kind): "unfuse" several nodes, "cut" one loop of several lines, or nothing (with why).
 */
const LOOPS = new Set(["single", "pointwise", "reduction"]); // a fused group of one loop is "single" (scheduler_ir.py)

export function whatIfOffer(group) {
  const nodes = group ? group.nodes : 0;
  const lines = group ? group.lines : 0;
  if (nodes > 1) return { action: "unfuse", label: "unfuse", title: "c.what_if(unfuse=group): compile again with this group's nodes as separate kernels" };
  if (nodes === 1 && lines > 1 && LOOPS.has(group.kind)) {
    return {
      action: "cut",
      label: "cut at lines",
      title: `c.what_if(unfuse=group): Inductor inlined these ${lines} lines into one loop while lowering; compile again storing the value each line hands to the next, one kernel per line`,
    };
  }
  const why = group && group.kind === "extern" ? "an extern call (a library kernel), never fused" : lines > 1 ? "one scheduler node" : "one loop of one line of yours";
  return { action: null, label: "unfuse", title: `nothing to unfuse: this group is ${why} (c.what_if(materialize=node) stores a value a loop computes inline)` };
}

/**
 * The box under the fused groups: the selected group, its button, and its answer. Answers are kept per
 * group, so selecting a group again shows what was asked of it. `about(name)` gives a group's
 * {nodes, lines, kind} (whatIfOffer).
 */
export class WhatIfBox {
  constructor(graph, ask, about = () => null) {
    this.graph = graph;
    this.ask = ask;
    this.about = about;
    this.group = null;
    this.answers = new Map(); // group -> reply, or "busy"
    this.measure = h("input", { type: "checkbox", class: "ie-whatif-measure" });
    this.root = h("div", { class: "ie-whatif", "aria-live": "polite" });
    this.draw();
  }

  show(group) {
    if (group === this.group) return;
    this.group = group;
    this.draw();
  }

  unfuse() {
    const group = this.group;
    if (!group || this.answers.get(group) === "busy" || !whatIfOffer(this.about(group)).action) return;
    this.answers.set(group, "busy");
    this.draw();
    this.ask(this.graph, group, this.measure.checked).then((reply) => {
      this.answers.set(group, reply);
      if (this.group === group) this.draw();
    });
  }

  draw() {
    const group = this.group;
    const answer = group ? this.answers.get(group) : undefined;
    const busy = answer === "busy";
    const offer = whatIfOffer(group ? this.about(group) : null);
    const question = offer.action === "cut" ? " were cut at its lines?" : " were unfused?";
    const head = h(
      "div",
      { class: "ie-whatif-head" },
      h("span", null, "What if ", group ? h("strong", null, group) : h("span", { class: "ie-muted" }, "(select a group)"), question),
      h(
        "button",
        { class: "ie-whatif-unfuse", type: "button", "data-action": offer.action || "none", disabled: group && offer.action && !busy ? null : "", title: offer.title, onclick: () => this.unfuse() },
        busy ? "compiling…" : offer.label,
      ),
      h("label", { title: "time both sides and check them against eager (slower)" }, this.measure, " measure"),
    );
    const why = group && !offer.action ? h("p", { class: "ie-muted ie-whatif-why" }, offer.title) : null;
    clear(this.root).append(...[head, why, answer && !busy ? whatIfResult(answer) : null].filter(Boolean));
    this.root.dataset.state = busy ? "busy" : answer ? (answer.error ? "error" : "done") : "idle";
  }
}
