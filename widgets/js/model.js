// Indexes one trace graph by id and answers provenance questions: "what is
// linked to this selection?" The trace stores provenance as id lists in both
// directions (compiler/SCHEMA.md); this module only follows them.

export const STAGES = [
  ["export", "Export"],
  ["dynamo", "Dynamo"],
  ["fx", "Dynamo FX"],
  ["post_grad", "Post-grad FX"],
  ["loop_ir", "Loop IR"],
  ["fused", "Fused"],
  ["kernels", "Kernels"],
  ["wrapper", "Wrapper"],
  ["memory", "Memory"],
  ["autotune", "Autotune"],
  ["compile_time", "Compile time"],
];

/** Which stage shows a selection of this kind. */
export const STAGE_OF_KIND = {
  fx: "fx",
  post_grad: "post_grad",
  loop_ir: "loop_ir",
  fused: "fused",
  kernel: "kernels",
  kernel_line: "kernels",
  wrapper_line: "wrapper",
  // a bisect's culprit ("culprit") lights what it names in every stage and keeps the stage shown
};

const list = (value) => (Array.isArray(value) ? value : []);

function indexBy(items, key) {
  const map = new Map();
  for (const item of list(items)) {
    if (item && item[key] !== undefined && item[key] !== null) map.set(String(item[key]), item);
  }
  return map;
}

export const userLineKey = (file, line) => `${file}\u0000${line}`;

/** An empty linked set, the shape every view reads. */
export function emptyLinks() {
  return {
    fx: new Set(),
    post_grad: new Set(),
    loop_ir: new Set(),
    fused: new Set(),
    kernels: new Set(),
    kernelLines: new Map(), // kernel id -> Set(line number)
    wrapperLines: new Set(),
    userLines: new Set(), // userLineKey(file, line)
  };
}

export class GraphIndex {
  constructor(graph) {
    this.graph = graph;
    this.fxNodes = list(graph.fx && graph.fx.nodes);
    this.pgNodes = list(graph.post_grad && graph.post_grad.nodes);
    this.fx = indexBy(this.fxNodes, "name");
    this.pg = indexBy(this.pgNodes, "name");
    this.ir = indexBy(graph.loop_ir, "name");
    this.fused = indexBy(graph.fused, "name");
    this.kernels = indexBy(graph.kernels, "id");
    this.kernelLines = (graph.wrapper && graph.wrapper.kernel_lines) || {};
    this._byUserLine = null;
  }

  get label() {
    const g = this.graph;
    return `${g.id} · ${g.kind} · Dynamo graph ${g.dynamo_graph}`;
  }

  /** FX and post-grad node names per user source line, built on first use. */
  byUserLine() {
    if (!this._byUserLine) {
      const map = new Map();
      const add = (kind, node) => {
        const ul = node.user_line;
        if (!Array.isArray(ul) || ul.length < 2) return;
        const key = userLineKey(ul[0], ul[1]);
        if (!map.has(key)) map.set(key, { fx: [], post_grad: [] });
        map.get(key)[kind].push(String(node.name));
      };
      this.fxNodes.forEach((n) => add("fx", n));
      this.pgNodes.forEach((n) => add("post_grad", n));
      this._byUserLine = map;
    }
    return this._byUserLine;
  }

  /** Everything linked to `sel` ({kind, id, line?}); the selection itself is included. */
  linked(sel) {
    const out = emptyLinks();
    if (!sel || !sel.kind) return out;
    const id = sel.id === undefined || sel.id === null ? "" : String(sel.id);
    switch (sel.kind) {
      case "fx": {
        const node = this.fx.get(id);
        if (!node) break;
        out.fx.add(id);
        this._addUserLine(out, node);
        list(node.kernels).forEach((k) => out.kernels.add(String(k)));
        this._fromPostGrad(out, list(node.post_grad), null);
        break;
      }
      case "post_grad": {
        if (!this.pg.has(id)) break;
        this._fromPostGrad(out, [id], null);
        break;
      }
      case "loop_ir": {
        const op = this.ir.get(id);
        if (!op) break;
        out.loop_ir.add(id);
        if (op.group) out.fused.add(String(op.group));
        const kernels = list(op.kernels).map(String);
        this._fromPostGrad(out, list(op.origins), { loopIr: new Set([id]), kernels: new Set(kernels) });
        break;
      }
      case "fused": {
        const group = this.fused.get(id);
        if (!group) break;
        out.fused.add(id);
        const kernels = list(group.kernels).map(String);
        const nodes = list(group.nodes).map(String);
        this._fromPostGrad(out, list(group.origins), { loopIr: new Set(nodes), kernels: new Set(kernels) });
        nodes.forEach((n) => out.loop_ir.add(n));
        break;
      }
      case "kernel":
        this._fromKernel(out, id, null);
        break;
      case "kernel_line":
        this._fromKernel(out, id, Number(sel.line));
        break;
      case "wrapper_line": {
        const kernel = this.kernelLines[String(sel.line)];
        out.wrapperLines.add(Number(sel.line));
        if (kernel !== undefined) this._fromKernel(out, String(kernel), null);
        break;
      }
      case "user_line": {
        out.userLines.add(userLineKey(id, sel.line));
        const hit = this.byUserLine().get(userLineKey(id, sel.line));
        if (!hit) break;
        for (const name of hit.fx) {
          const node = this.fx.get(name);
          out.fx.add(name);
          list(node.kernels).forEach((k) => out.kernels.add(String(k)));
          this._fromPostGrad(out, list(node.post_grad), null);
        }
        this._fromPostGrad(out, hit.post_grad, null);
        break;
      }
      default:
        break;
    }
    return out;
  }

  /**
   * Everything a level of a bisect's culprit names (the summary's `culprits`: fx, post_grad, fused,
   * kernels, user_lines), lit together. Post-grad nodes named with kernels light only those kernels and
   * their lines that compute them; kernels named alone light all they are linked to; a level naming only
   * lines lights what those lines made.
   */
  linkedCulprit(culprit) {
    const out = emptyLinks();
    if (!culprit) return out;
    const kernels = new Set(list(culprit.kernels).map(String).filter((k) => this.kernels.has(k)));
    const postGrad = list(culprit.post_grad).map(String).filter((n) => this.pg.has(n));
    const merge = (links) => {
      for (const key of ["fx", "post_grad", "loop_ir", "fused", "kernels", "wrapperLines", "userLines"]) links[key].forEach((v) => out[key].add(v));
      for (const [kid, lines] of links.kernelLines) out.kernelLines.set(kid, new Set([...(out.kernelLines.get(kid) || []), ...lines]));
    };
    if (postGrad.length) {
      const loopIr = new Set([...kernels].flatMap((k) => list(this.kernels.get(k).loop_ir).map(String)));
      this._fromPostGrad(out, postGrad, kernels.size ? { loopIr, kernels } : null);
    } else {
      kernels.forEach((k) => this._fromKernel(out, k, null));
    }
    for (const name of list(culprit.fx).map(String)) {
      if (!this.fx.has(name)) continue;
      out.fx.add(name);
      this._addUserLine(out, this.fx.get(name));
    }
    list(culprit.fused).forEach((group) => merge(this.linked({ kind: "fused", id: group })));
    const named = kernels.size || postGrad.length || list(culprit.fx).length || list(culprit.fused).length;
    for (const ul of list(culprit.user_lines)) {
      if (!Array.isArray(ul) || ul.length < 2) continue;
      if (named) out.userLines.add(userLineKey(ul[0], ul[1]));
      else merge(this.linked({ kind: "user_line", id: ul[0], line: ul[1] }));
    }
    return out;
  }

  _addUserLine(out, node) {
    const ul = node && node.user_line;
    if (Array.isArray(ul) && ul.length >= 2) out.userLines.add(userLineKey(ul[0], ul[1]));
  }

  /**
   * Follow post-grad nodes down (loop IR, fused groups, kernels, kernel lines)
   * and up (Dynamo FX nodes, user lines). `only` narrows loop IR and kernels to
   * those of a loop-IR node or fused group, so selecting one group does not
   * light up an unrelated kernel that shares an origin.
   */
  _fromPostGrad(out, names, only) {
    const pgSet = new Set(names.map(String));
    for (const name of pgSet) {
      const node = this.pg.get(name);
      out.post_grad.add(name);
      if (!node) continue;
      list(node.fx).forEach((f) => out.fx.add(String(f)));
      this._addUserLine(out, node);
      for (const op of list(node.loop_ir).map(String)) {
        if (only && !only.loopIr.has(op)) continue;
        out.loop_ir.add(op);
        const ir = this.ir.get(op);
        if (ir && ir.group) out.fused.add(String(ir.group));
      }
      for (const k of list(node.kernels).map(String)) {
        if (only && !only.kernels.has(k)) continue;
        out.kernels.add(k);
      }
    }
    if (only) only.kernels.forEach((k) => out.kernels.add(k));
    for (const kid of out.kernels) {
      const kernel = this.kernels.get(kid);
      if (!kernel) continue;
      const lines = new Set();
      for (const [line, nodes] of Object.entries(kernel.line_nodes || {})) {
        if (list(nodes).some((n) => pgSet.has(String(n)))) lines.add(Number(line));
      }
      if (lines.size) out.kernelLines.set(kid, lines);
      list(kernel.wrapper_lines).forEach((l) => out.wrapperLines.add(Number(l)));
    }
  }

  _fromKernel(out, kid, line) {
    const kernel = this.kernels.get(kid);
    if (!kernel) return;
    out.kernels.add(kid);
    if (kernel.group) out.fused.add(String(kernel.group));
    list(kernel.wrapper_lines).forEach((l) => out.wrapperLines.add(Number(l)));
    const kernelIr = new Set(list(kernel.loop_ir).map(String));
    if (line === null) {
      kernelIr.forEach((op) => out.loop_ir.add(op));
      list(kernel.fx_nodes).forEach((n) => out.fx.add(String(n)));
      list(kernel.post_grad_nodes).forEach((n) => {
        out.post_grad.add(String(n));
        this._addUserLine(out, this.pg.get(String(n)));
      });
      list(kernel.user_lines).forEach((ul) => {
        if (Array.isArray(ul) && ul.length >= 2) out.userLines.add(userLineKey(ul[0], ul[1]));
      });
      out.kernelLines.set(kid, new Set(Object.keys(kernel.line_nodes || {}).map(Number)));
      return;
    }
    out.kernelLines.set(kid, new Set([line]));
    for (const name of list((kernel.line_nodes || {})[String(line)]).map(String)) {
      const node = this.pg.get(name);
      out.post_grad.add(name);
      if (!node) continue;
      list(node.fx).forEach((f) => out.fx.add(String(f)));
      this._addUserLine(out, node);
      list(node.loop_ir).forEach((op) => {
        if (kernelIr.has(String(op))) out.loop_ir.add(String(op));
      });
    }
  }
}
