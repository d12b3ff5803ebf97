// Level of detail for big graphs: nodes are grouped by the nn.Module they were traced in (each
// node's `module` path, e.g. "layers.3.attn"), and a module shown closed is one box with a count.
// The graph drawn is the open modules' own nodes plus one box per closed child module, with the
// edges between them; clicking a box opens it. A first view opens modules breadth first while the
// drawing stays under a budget, so a 100,000-node model starts as a few hundred boxes.

export const GROUP_PREFIX = "module:";
export const LOD_MIN_NODES = 600; // below this the whole graph is drawn, no grouping
const OPEN_BUDGET = 700; // items drawn by the first view at most

class ModuleNode {
  constructor(path, parent = null) {
    this.path = path;
    this.parent = parent;
    this.children = new Map(); // segment -> ModuleNode
    this.nodes = []; // indices (in ModuleGroups.nodes) of the nodes whose innermost module is exactly this one
    this.size = 0; // nodes in this module and below
  }
}

export class ModuleGroups {
  /** @param {Array} nodes FX nodes ({name, inputs, module}) */
  constructor(nodes) {
    this.nodes = nodes;
    this.root = new ModuleNode("");
    this.modules = new Map([["", this.root]]);
    this.moduleOf = new Map(); // node name -> ModuleNode it sits in
    this.moduleAt = new Array(nodes.length); // node index -> ModuleNode it sits in
    let at = this.root;
    let atPath = "";
    for (let i = 0; i < nodes.length; i++) {
      const n = nodes[i];
      const path = typeof n.module === "string" ? n.module : "";
      if (path !== atPath) {
        at = this.modules.get(path) || this._module(path);
        atPath = path;
      }
      for (let m = at; m; m = m.parent) m.size += 1;
      at.nodes.push(i);
      this.moduleAt[i] = at;
      this.moduleOf.set(String(n.name), at);
    }
    this.open = new Set([""]);
    this._reps = new Map(); // ModuleNode -> the closed module drawn for its nodes ("" when none), while `open` holds
    this._openWithinBudget();
  }

  /** The module at `path`, made with its parents when first seen. */
  _module(path) {
    let at = this.root;
    let prefix = "";
    for (const segment of path.split(".")) {
      prefix = prefix ? `${prefix}.${segment}` : segment;
      if (!at.children.has(segment)) {
        const child = new ModuleNode(prefix, at);
        at.children.set(segment, child);
        this.modules.set(prefix, child);
      }
      at = at.children.get(segment);
    }
    return at;
  }

  /**
   * Node records with more fields (the full part behind an outline), in the same order with the same
   * names, modules and inputs; false (nothing changed) when they are not.
   */
  setNodes(nodes) {
    if (nodes.length !== this.nodes.length) return false;
    for (let i = 0; i < nodes.length; i++) {
      const a = nodes[i], b = this.nodes[i];
      if (String(a.name) !== String(b.name) || (typeof a.module === "string" ? a.module : "") !== (typeof b.module === "string" ? b.module : "")) return false;
    }
    this.nodes = nodes;
    return true;
  }

  get grouped() {
    return this.nodes.length >= LOD_MIN_NODES && this.root.children.size > 0;
  }

  _visibleCount() {
    let count = 0;
    const walk = (m) => {
      count += m.nodes.length;
      for (const child of m.children.values()) {
        if (this.open.has(child.path)) walk(child);
        else count += 1;
      }
    };
    walk(this.root);
    return count;
  }

  _openWithinBudget() {
    if (!this.grouped) {
      for (const path of this.modules.keys()) this.open.add(path);
      return;
    }
    // Single-child chains open for free; then the largest closed modules first, while it fits.
    let count = this._visibleCount();
    const queue = [this.root];
    while (queue.length) {
      queue.sort((a, b) => b.size - a.size);
      const m = queue.shift();
      for (const child of m.children.values()) {
        const growth = child.children.size + child.nodes.length - 1;
        if (count + growth <= OPEN_BUDGET || m.children.size === 1) {
          this.open.add(child.path);
          count += growth;
          queue.push(child);
        }
      }
    }
    this._reps.clear();
  }

  /** The closed module box standing for `name`, or `name` itself when it is drawn. */
  representative(name) {
    const m = this.moduleOf.get(name);
    return m ? this._closedAbove(m) || name : name;
  }

  /** The closed module box drawn for the nodes of module `m`, or "" when they are drawn themselves. */
  _closedAbove(m) {
    let rep = this._reps.get(m);
    if (rep === undefined) {
      let closed = null;
      for (let at = m; at; at = at.parent) if (!this.open.has(at.path)) closed = at.path;
      rep = closed === null ? "" : GROUP_PREFIX + closed;
      this._reps.set(m, rep);
    }
    return rep;
  }

  /** Open every module on the way to node `name`; true when something opened. */
  reveal(name) {
    const m = this.moduleOf.get(name);
    if (!m) return false;
    let changed = false;
    for (let p = m.path; p; p = p.includes(".") ? p.slice(0, p.lastIndexOf(".")) : "") {
      if (!this.open.has(p)) {
        this.open.add(p);
        changed = true;
      }
    }
    if (changed) this._reps.clear();
    return changed;
  }

  openModule(path) {
    this.open.add(path);
    this._reps.clear();
  }

  closeModule(path) {
    for (const p of [...this.open]) if (p === path || p.startsWith(`${path}.`)) this.open.delete(p);
    this._reps.clear();
  }

  /** Node names inside module `path` (all depths). */
  members(path) {
    const out = [];
    const walk = (m) => {
      for (const i of m.nodes) out.push(String(this.nodes[i].name));
      for (const child of m.children.values()) walk(child);
    };
    const m = this.modules.get(path);
    if (m) walk(m);
    return out;
  }

  /** What to draw: real nodes of open modules and one pseudo node per closed module, with edges. */
  visibleNodes() {
    const out = [];
    const groups = new Map();
    const walk = (m) => {
      for (const i of m.nodes) out.push({ ...this.nodes[i], inputs: [] });
      for (const child of m.children.values()) {
        if (this.open.has(child.path)) walk(child);
        else {
          const box = { name: GROUP_PREFIX + child.path, op: "module", target: child.path, module: child.path, size: child.size, inputs: [] };
          groups.set(box.name, box);
          out.push(box);
        }
      }
    };
    walk(this.root);
    const byName = new Map(out.map((n) => [String(n.name), n]));
    for (let i = 0; i < this.nodes.length; i++) {
      const n = this.nodes[i];
      const to = byName.get(this._closedAbove(this.moduleAt[i]) || String(n.name));
      if (!to) continue;
      for (const raw of Array.isArray(n.inputs) ? n.inputs : []) {
        const from = this.representative(String(raw));
        if (from !== String(to.name) && byName.has(from) && !to.inputs.includes(from)) to.inputs.push(from);
      }
    }
    return out;
  }
}
