// SVG view of one FX graph: layout once, then draw only what is inside the
// viewport (plus a margin) on every pan or zoom. A 2,000-node graph therefore
// costs about as much to show as a 50-node one; the full SVG is never built.
// Big graphs are drawn by module (lod.js): closed modules are boxes that open on click.

import { h, s, clear } from "./dom.js";
import { layoutGraph } from "./layout.js";
import { GROUP_PREFIX, ModuleGroups } from "./lod.js";
import { mark } from "./perf.js";

const MIN_SCALE = 0.05;
const MAX_SCALE = 3;
const LOD_SCALE = 0.4; // below this zoom, boxes are drawn without text

function shapeText(node) {
  if (Array.isArray(node.shape)) return `[${node.shape.join(", ")}]`;
  return node.shape === null || node.shape === undefined ? "" : String(node.shape);
}

function truncate(value, max) {
  const str = String(value);
  return str.length > max ? `${str.slice(0, max - 1)}…` : str;
}

export function nodeLabels(node) {
  if (node.op === "module") return [truncate(node.target || "(model)", 38), `${node.size} nodes · click to open`];
  const target = node.op === "placeholder" || node.op === "output" ? node.op : String(node.target ?? node.op ?? "");
  const shape = shapeText(node);
  return [truncate(node.name, 38), truncate(shape ? `${target} · ${shape}` : target, 38)];
}

export class GraphView {
  /**
   * @param {HTMLElement} container where the view goes
   * @param {Array} nodes FX nodes from the trace ({name, op, target, shape, inputs, ...})
   * @param {{onSelect: (name: string) => void, kind: string}} options
   */
  constructor(container, nodes, options) {
    this.nodes = nodes;
    this.groups = new ModuleGroups(nodes);
    mark("graph grouped");
    this.onSelect = options.onSelect;
    this.elements = new Map(); // name -> <g>
    this.edgeElements = new Map(); // index -> <path>
    this.selected = null;
    this.lit = new Set();
    this.selectedShown = null;
    this.litShown = new Set();
    this.matchShown = null;
    this.matches = [];
    this.matchIndex = -1;
    this.heat = null; // heat.js nodeHeat: fill colours by time or error
    this.view = { x: 0, y: 0, k: 1 };
    this._frame = 0;
    this._relayout();
    mark("graph laid out");
    this._buildDom(container, options.kind || "fx");
  }

  /** Lay out what is drawn now (every node, or open modules' nodes and closed module boxes). */
  _relayout() {
    const drawn = this.groups.grouped ? this.groups.visibleNodes() : this.nodes;
    this.byName = new Map(drawn.map((n) => [String(n.name), n]));
    const t0 = performance.now();
    this.layout = layoutGraph(drawn, nodeLabels);
    this.layoutMs = performance.now() - t0;
    for (const el of this.elements.values()) el.remove();
    for (const el of this.edgeElements.values()) el.remove();
    this.elements.clear();
    this.edgeElements.clear();
    this._buildRankIndex();
    if (this.info) this._describe();
  }

  _describe() {
    const drawn = this.layout.pos.size;
    const all = this.nodes.length;
    const text = drawn === all ? `${all} nodes · ${this.layout.engine} layout` : `${all} nodes · ${drawn} drawn (modules closed) · ${this.layout.engine} layout`;
    clear(this.info).appendChild(document.createTextNode(text));
  }

  /**
   * Swap in node records with more fields (the full part, after a first drawing from its outline):
   * the same names, modules and inputs, so the layout stands; drawn nodes are drawn again.
   */
  setNodes(nodes) {
    this.nodes = nodes;
    if (!this.groups.setNodes(nodes)) {
      // not the nodes drawn (a part that does not match its outline): lay out anew
      this.groups = new ModuleGroups(nodes);
      this._relayout();
      this._reclassify();
      this._schedule(true);
      return;
    }
    const byName = new Map();
    for (const n of nodes) if (this.byName.has(String(n.name))) byName.set(String(n.name), n);
    for (const [name, drawn] of this.byName) {
      const node = byName.get(name);
      if (node && drawn.op !== "module") this.byName.set(name, this.groups.grouped ? { ...node, inputs: drawn.inputs } : node);
    }
    for (const el of this.elements.values()) el.remove();
    this.elements.clear();
    this._schedule(true);
  }

  /** Open module `path` (a closed box was clicked) and keep it in view. */
  openModule(path) {
    const members = this.groups.members(path);
    this.groups.openModule(path);
    this._relayout();
    this._reclassify();
    const first = members.map((n) => this.groups.representative(n)).find((n) => this.layout.pos.has(n));
    if (first) this.centerOn(first);
    else this._schedule(true);
  }

  /** Close every module again, as the first view drew them. */
  collapseAll() {
    this.groups = new ModuleGroups(this.nodes);
    this._relayout();
    this._reclassify();
    this.fit();
  }

  _buildRankIndex() {
    // Nodes bucketed by rank so the visible ones are found without scanning all of them.
    this.rows = [];
    for (const [name, p] of this.layout.pos) (this.rows[p.rank] ||= []).push(name);
    this.rowY = this.rows.map((row) => (row ? this.layout.pos.get(row[0]).y : 0));
  }

  _buildDom(container, kind) {
    this.search = h("input", {
      class: "ie-search",
      type: "search",
      placeholder: "search nodes",
      "aria-label": "search nodes by name",
    });
    this.searchInfo = h("span", { class: "ie-muted ie-search-info" });
    this.search.addEventListener("input", () => this.runSearch(this.search.value));
    this.search.addEventListener("keydown", (ev) => {
      if (ev.key === "Enter") this.nextMatch(ev.shiftKey ? -1 : 1);
    });
    const button = (label, title, fn) => h("button", { class: "ie-btn", type: "button", title, onclick: fn }, label);
    this.toolbar = h(
      "div",
      { class: "ie-graph-toolbar" },
      this.search,
      this.searchInfo,
      button("fit", "fit the whole graph", () => this.fit()),
      button("1:1", "actual size", () => this.zoomTo(1)),
      button("+", "zoom in", () => this.zoomBy(1.25)),
      button("−", "zoom out", () => this.zoomBy(0.8)),
      this.groups.grouped ? button("close modules", "draw every module as one box again", () => this.collapseAll()) : null,
      (this.info = h("span", { class: "ie-muted ie-graph-info" })),
    );
    this._describe();
    this.edgeLayer = s("g", { class: "ie-edges" });
    this.nodeLayer = s("g", { class: "ie-nodes" });
    this.viewport = s("g", { class: "ie-viewport" }, this.edgeLayer, this.nodeLayer);
    this.svg = s(
      "svg",
      { class: "ie-graph-svg", role: "img", "aria-label": `${kind} graph`, "data-graph-kind": kind },
      s("defs", null, s("marker", { id: `ie-arrow-${kind}`, viewBox: "0 0 10 10", refX: "10", refY: "5", markerWidth: "7", markerHeight: "7", orient: "auto-start-reverse" }, s("path", { d: "M 0 0 L 10 5 L 0 10 z", class: "ie-arrow" }))),
      this.viewport,
    );
    this.arrowId = `ie-arrow-${kind}`;
    this.root = h("div", { class: "ie-graph" }, this.toolbar, h("div", { class: "ie-graph-canvas" }, this.svg));
    container.appendChild(this.root);
    this._bindPanZoom();
  }

  /** First paint: the whole graph when it is readable that way, else its top at a readable zoom. */
  initialView() {
    const box = this.svg.getBoundingClientRect();
    const W = box.width || 800;
    const H = box.height || 500;
    const { width, height } = this.layout;
    const fitK = Math.min(W / width, H / height, 1);
    if (fitK >= 0.6) this.fit();
    else {
      // Too big to read whole: start at the top, centred on the first nodes.
      const k = Math.max(0.75, Math.min(1, W / width));
      const top = this.rows.find((row) => row && row.length) || [];
      const cx = top.length ? top.reduce((acc, n) => acc + this.layout.pos.get(n).x, 0) / top.length : width / 2;
      this.view = { k, x: W / 2 - cx * k, y: 10 };
      this._schedule(true);
    }
  }

  fit() {
    const box = this.svg.getBoundingClientRect();
    const W = box.width || 800;
    const H = box.height || 500;
    const { width, height } = this.layout;
    const k = Math.max(MIN_SCALE, Math.min(W / width, H / height, 1.5));
    this.view = { k, x: (W - width * k) / 2, y: (H - height * k) / 2 };
    this._schedule(true);
  }

  zoomTo(k) {
    const box = this.svg.getBoundingClientRect();
    this._zoomAround(box.width / 2, box.height / 2, k / this.view.k);
  }

  zoomBy(factor) {
    const box = this.svg.getBoundingClientRect();
    this._zoomAround(box.width / 2, box.height / 2, factor);
  }

  _zoomAround(px, py, factor) {
    const k = Math.max(MIN_SCALE, Math.min(MAX_SCALE, this.view.k * factor));
    const f = k / this.view.k;
    this.view = { k, x: px - (px - this.view.x) * f, y: py - (py - this.view.y) * f };
    this._schedule();
  }

  centerOn(name) {
    if (!this.layout.pos.has(name) && this.groups.reveal(name)) {
      this._relayout();
      this._reclassify();
    }
    const p = this.layout.pos.get(name);
    if (!p) return;
    const box = this.svg.getBoundingClientRect();
    const k = Math.max(this.view.k, 0.6);
    this.view = { k, x: (box.width || 800) / 2 - p.x * k, y: (box.height || 500) / 2 - p.y * k };
    this._schedule(true);
  }

  _bindPanZoom() {
    let drag = null;
    this.svg.addEventListener("wheel", (ev) => {
      ev.preventDefault();
      const box = this.svg.getBoundingClientRect();
      this._zoomAround(ev.clientX - box.left, ev.clientY - box.top, Math.exp(-ev.deltaY * 0.0015));
    }, { passive: false });
    this.svg.addEventListener("pointerdown", (ev) => {
      if (ev.button !== 0) return;
      drag = { x: ev.clientX, y: ev.clientY, vx: this.view.x, vy: this.view.y, moved: false, id: ev.pointerId };
    });
    this.svg.addEventListener("pointermove", (ev) => {
      if (!drag) return;
      const dx = ev.clientX - drag.x;
      const dy = ev.clientY - drag.y;
      if (!drag.moved && Math.abs(dx) + Math.abs(dy) > 4) {
        drag.moved = true;
        this.svg.setPointerCapture(drag.id);
        this.svg.classList.add("ie-dragging");
      }
      if (drag.moved) {
        this.view = { ...this.view, x: drag.vx + dx, y: drag.vy + dy };
        this._schedule();
      }
    });
    const end = (ev) => {
      if (!drag) return;
      const wasDrag = drag.moved;
      drag = null;
      this.svg.classList.remove("ie-dragging");
      if (wasDrag) return;
      const g = ev.target.closest ? ev.target.closest("g.ie-node") : null;
      if (!g || ev.type !== "pointerup") return;
      const name = g.getAttribute("data-name");
      if (name.startsWith(GROUP_PREFIX)) this.openModule(name.slice(GROUP_PREFIX.length));
      else this.onSelect(name);
    };
    this.svg.addEventListener("pointerup", end);
    this.svg.addEventListener("pointercancel", end);
  }

  _schedule(now = false) {
    if (now) {
      this.render();
      return;
    }
    if (this._frame) return;
    this._frame = requestAnimationFrame(() => {
      this._frame = 0;
      this.render();
    });
  }

  /** Draw the nodes and edges inside the viewport; drop the ones that left it. */
  render() {
    const { k, x, y } = this.view;
    this.viewport.setAttribute("transform", `translate(${x},${y}) scale(${k})`);
    this.svg.classList.toggle("ie-lod-low", k < LOD_SCALE);
    const box = this.svg.getBoundingClientRect();
    const W = box.width || 800;
    const H = box.height || 500;
    const margin = 200 / k;
    const x0 = -x / k - margin, x1 = (W - x) / k + margin;
    const y0 = -y / k - margin, y1 = (H - y) / k + margin;
    const visible = new Set();
    for (let r = 0; r < this.rows.length; r++) {
      const row = this.rows[r];
      if (!row || this.rowY[r] < y0 || this.rowY[r] > y1) continue;
      for (const name of row) {
        const p = this.layout.pos.get(name);
        if (p.x + p.w / 2 >= x0 && p.x - p.w / 2 <= x1) visible.add(name);
      }
    }
    for (const [name, el] of this.elements) {
      if (!visible.has(name)) {
        el.remove();
        this.elements.delete(name);
      }
    }
    for (const name of visible) if (!this.elements.has(name)) this._drawNode(name);
    const edges = this.layout.edges;
    for (let i = 0; i < edges.length; i++) {
      const e = edges[i];
      const a = this.layout.pos.get(e.from);
      const b = this.layout.pos.get(e.to);
      const inside = Math.max(a.y, b.y) >= y0 && Math.min(a.y, b.y) <= y1 && Math.max(a.x, b.x) >= x0 && Math.min(a.x, b.x) <= x1;
      const el = this.edgeElements.get(i);
      if (inside && !el) this._drawEdge(i, e, a, b);
      else if (!inside && el) {
        el.remove();
        this.edgeElements.delete(i);
      }
    }
  }

  _drawEdge(i, e, a, b) {
    let d;
    if (e.points && e.points.length >= 2) d = `M${e.points.map((q) => `${q.x},${q.y}`).join(" L")}`;
    else {
      const sy = a.y + a.h / 2, ty = b.y - b.h / 2, my = (sy + ty) / 2;
      d = `M${a.x},${sy} C${a.x},${my} ${b.x},${my} ${b.x},${ty}`;
    }
    const path = s("path", { class: "ie-edge", d, "marker-end": `url(#${this.arrowId})`, "data-from": e.from, "data-to": e.to });
    if (this.litShown.has(e.from) && this.litShown.has(e.to)) path.classList.add("ie-lit");
    this.edgeLayer.appendChild(path);
    this.edgeElements.set(i, path);
  }

  _drawNode(name) {
    const node = this.byName.get(name);
    const p = this.layout.pos.get(name);
    const [title, sub] = nodeLabels(node);
    const op = String(node.op || "").replace(/[^a-z_]/g, "");
    const tip = node.op === "module" ? `module ${node.target || "(model)"}: ${node.size} nodes; click to open` : `${name}\n${node.target ?? ""}${node.args ? ` ${node.args}` : ""}\n${shapeText(node)} ${node.dtype ?? ""}`;
    const g = s(
      "g",
      { class: `ie-node ie-op-${op}`, "data-name": name, transform: `translate(${p.x - p.w / 2},${p.y - p.h / 2})` },
      s("title", null, tip),
      s("rect", { width: p.w, height: p.h, rx: 5 }),
      s("text", { x: 9, y: 16, class: "ie-node-title" }, title),
      s("text", { x: 9, y: 31, class: "ie-node-sub" }, sub),
    );
    this._classify(g, name);
    this.nodeLayer.appendChild(g);
    this.elements.set(name, g);
  }

  _classify(g, name) {
    g.classList.toggle("ie-selected", this.selectedShown === name);
    g.classList.toggle("ie-lit", this.litShown.has(name));
    g.classList.toggle("ie-match", this.matchShown ? this.matchShown.has(name) : false);
    const color = this.heat ? this.heat.colors.get(name) : undefined;
    g.classList.toggle("ie-heat", color !== undefined);
    if (color !== undefined) {
      g.style.setProperty("--ie-heat", color);
      g.style.setProperty("--ie-heat-ink", this.heat.inks.get(name));
      g.setAttribute("data-heat", String(this.heat.values.get(name)));
    } else {
      g.style.removeProperty("--ie-heat");
      g.style.removeProperty("--ie-heat-ink");
      g.removeAttribute("data-heat");
    }
  }

  /** Fill nodes by a measured value (heat.js nodeHeat), or stop (null). */
  setHeat(heat) {
    this.heat = heat;
    for (const [name, g] of this.elements) this._classify(g, name);
  }

  /** What is drawn for a set of node names: the nodes, or the closed module boxes holding them. */
  _shown(names) {
    if (!this.groups.grouped) return names;
    return new Set([...names].map((n) => this.groups.representative(n)));
  }

  _reclassify() {
    this.selectedShown = this.selected === null ? null : this.groups.grouped ? this.groups.representative(this.selected) : this.selected;
    this.litShown = this._shown(this.lit);
    this.matchShown = this.matchSet ? this._shown(this.matchSet) : null;
    for (const [name, g] of this.elements) this._classify(g, name);
    for (const path of this.edgeElements.values()) {
      path.classList.toggle("ie-lit", this.litShown.has(path.getAttribute("data-from")) && this.litShown.has(path.getAttribute("data-to")));
    }
  }

  /** Mark the selected node and the linked ones; drawn nodes update now, others when drawn. */
  highlight(selected, lit) {
    this.selected = selected;
    this.lit = lit;
    this._reclassify();
  }

  runSearch(query) {
    const q = query.trim().toLowerCase();
    this.matches = q ? this.nodes.map((n) => String(n.name)).filter((n) => n.toLowerCase().includes(q)) : [];
    this.matchSet = new Set(this.matches);
    this.matchShown = this._shown(this.matchSet);
    this.matchIndex = -1;
    clear(this.searchInfo).appendChild(document.createTextNode(q ? `${this.matches.length} match${this.matches.length === 1 ? "" : "es"}` : ""));
    for (const [name, g] of this.elements) this._classify(g, name);
    if (this.matches.length) this.nextMatch(1);
  }

  nextMatch(step) {
    if (!this.matches.length) return;
    this.matchIndex = (this.matchIndex + step + this.matches.length) % this.matches.length;
    this.centerOn(this.matches[this.matchIndex]);
  }

  /** The drawn <g> of a node, if it is in view. */
  element(name) {
    return this.elements.get(name) || null;
  }
}
