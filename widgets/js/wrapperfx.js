// The Wrapper stage with the wrapper as an FX graph beside its text (compiler/SCHEMA.md,
// graphs[].wrapper.fx): a "graph" / "code" toggle when the graph was built, nodes coloured by
// what the call does (alloc, kernel, extern, reinterpret...). A kernel or extern node stands for an
// explorer kernel: clicking it selects that kernel, and a selection lights the nodes of its kernels.
// When Inductor could not build the graph, the reason is shown above the code.

import { h } from "./dom.js";
import { GraphView } from "./graphview.js";
import { WrapperStage } from "./stages.js";

const list = (value) => (Array.isArray(value) ? value : []);

/** Wrapper FX nodes as GraphView draws them: the node's kind is its class, a kernel node is labelled by its kernel. */
export function graphNodes(nodes) {
  return list(nodes).map((n) => ({
    name: String(n.name),
    op: String(n.kind || "other"),
    // torch._VariableFunctionsClass.empty_strided reads as empty_strided
    target: n.kernel ? String(n.kernel) : n.kind === "input" || n.kind === "output" ? n.kind : String(n.target ?? "").split(".").pop(),
    args: n.args ?? "",
    inputs: list(n.inputs).map(String),
    shape: null,
    dtype: n.buffer && n.buffer !== n.name ? `→ ${n.buffer}` : "",
  }));
}

export class WrapperFxStage {
  /** @param {{source: string, kernel_lines: object, fx?: object}} wrapper the wrapper part */
  constructor(wrapper, ctx) {
    this.ctx = ctx;
    this.code = new WrapperStage(wrapper, ctx);
    this.fx = wrapper && wrapper.fx && typeof wrapper.fx === "object" ? wrapper.fx : null;
    this.graph = null;
    this.sel = null;
    this.links = null;
    if (!this.fx || this.fx.status !== "built" || !list(this.fx.nodes).length) {
      this.root = this.code.root;
      if (this.fx) {
        const why = this.fx.status === "built" ? "it has no nodes" : `${this.fx.status}${this.fx.reason ? `: ${this.fx.reason}` : ""}`;
        this.root.insertBefore(h("p", { class: "ie-muted ie-wrapper-fx-note" }, `No FX graph of the wrapper (${why}).`), this.root.firstChild);
      }
      return;
    }
    this.nodes = list(this.fx.nodes);
    this.kernelOf = new Map(this.nodes.filter((n) => n.kernel).map((n) => [String(n.name), String(n.kernel)]));
    this.graphBtn = h("button", { class: "ie-btn", type: "button", "data-view": "graph", onclick: () => this.showGraph(true) }, "graph");
    this.codeBtn = h("button", { class: "ie-btn ie-pressed", type: "button", "data-view": "code", onclick: () => this.showGraph(false) }, "code");
    const dropped = Number(this.fx.dropped_lines) || 0;
    this.graphBox = h("div", { class: "ie-graph-box ie-wrapper-graph", hidden: true });
    this.root = h(
      "div",
      { class: "ie-stage ie-wrapper-fx-stage", "data-stage": "wrapper" },
      h(
        "div",
        { class: "ie-stage-head" },
        this.graphBtn,
        this.codeBtn,
        h("span", { class: "ie-muted ie-wrapper-fx-info" }, `${this.nodes.length} FX nodes${dropped ? ` · ${dropped} text-only lines have no FX form` : ""}`),
      ),
      this.graphBox,
      this.code.root,
    );
    this.code.root.removeAttribute("data-stage"); // the outer element is the stage now
  }

  shown() {
    if (this.graph && !this.graphBox.hidden) this.graph.render();
  }

  /** Switch between the FX graph and the wrapper's text; the graph is laid out the first time. */
  showGraph(on) {
    this.graphBtn.classList.toggle("ie-pressed", on);
    this.codeBtn.classList.toggle("ie-pressed", !on);
    this.graphBox.hidden = !on;
    this.code.root.hidden = on;
    if (on && !this.graph) {
      this.graph = new GraphView(this.graphBox, graphNodes(this.nodes), {
        kind: "wrapper",
        onSelect: (name) => {
          const kernel = this.kernelOf.get(name);
          if (kernel) this.ctx.select({ kind: "kernel", id: kernel });
        },
      });
      this.graph.initialView();
      if (this.links) this.update(this.sel, this.links);
    }
  }

  update(sel, links) {
    this.sel = sel;
    this.links = links;
    this.code.update(sel, links);
    if (!this.graph) return;
    let selected = null;
    const lit = new Set();
    for (const [name, kernel] of this.kernelOf) {
      if (sel && sel.kind === "kernel" && String(sel.id) === kernel && selected === null) selected = name;
      else if (links.kernels.has(kernel)) lit.add(name);
    }
    this.graph.highlight(selected, lit);
  }

  reveal(sel, links) {
    this.code.reveal(sel, links);
    if (!this.graph || this.graphBox.hidden) return;
    const target = [...this.kernelOf].find(([, kernel]) => links.kernels.has(kernel));
    if (target && !this.graph.element(target[0])) this.graph.centerOn(target[0]);
  }
}
