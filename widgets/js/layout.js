// Layered (top-to-bottom) layout of an FX graph. Small graphs go through dagre
// (crossing minimisation, routed edges). dagre's cost grows with the number of
// dummy nodes long edges create, so past a budget we use a linear-time layered
// layout of our own: longest-path ranks, a few barycenter sweeps, straight
// curves for edges. A 2,000-node transformer lays out in tens of milliseconds.

import dagre from "@dagrejs/dagre";

export const NODE_H = 40;
const RANK_SEP = 34;
const NODE_SEP = 18;
const CHAR_W = 7;
/** Graph size (nodes + dummy nodes of long edges) above which dagre is skipped. */
export const DAGRE_BUDGET = 260;

export function nodeWidth(labels) {
  const longest = Math.max(...labels.map((l) => l.length));
  return Math.max(80, Math.min(280, longest * CHAR_W + 20));
}

/** Ranks by longest path; sources (placeholders, get_attr) sit just above their first user. */
function rankNodes(names, preds, succs) {
  const order = topoOrder(names, preds, succs);
  const rank = new Map();
  for (const n of order) {
    let r = 0;
    for (const p of preds.get(n)) if (rank.has(p)) r = Math.max(r, rank.get(p) + 1);
    rank.set(n, r);
  }
  for (let i = order.length - 1; i >= 0; i--) {
    const n = order[i];
    if (preds.get(n).length === 0 && succs.get(n).length > 0) {
      let r = Infinity;
      for (const u of succs.get(n)) if (rank.has(u)) r = Math.min(r, rank.get(u) - 1);
      if (r !== Infinity) rank.set(n, Math.max(0, r));
    }
  }
  return { order, rank };
}

function topoOrder(names, preds, succs) {
  const indeg = new Map(names.map((n) => [n, preds.get(n).length]));
  const queue = names.filter((n) => indeg.get(n) === 0);
  const order = [];
  for (let i = 0; i < queue.length; i++) {
    const n = queue[i];
    order.push(n);
    for (const u of succs.get(n)) {
      indeg.set(u, indeg.get(u) - 1);
      if (indeg.get(u) === 0) queue.push(u);
    }
  }
  if (order.length < names.length) {
    // A cycle cannot come out of FX, but a hand-edited trace might hold one: keep the rest in input order.
    const seen = new Set(order);
    names.forEach((n) => {
      if (!seen.has(n)) order.push(n);
    });
  }
  return order;
}

/** Place one rank's nodes near their desired x without overlaps, keeping the mean displacement zero. */
function placeRank(nodes, desired, width, anchored) {
  nodes.sort((a, b) => desired.get(a) - desired.get(b));
  const xs = [];
  let prevRight = -Infinity;
  for (const n of nodes) {
    const w = width.get(n);
    const x = Math.max(desired.get(n), prevRight + NODE_SEP + w / 2);
    xs.push(x);
    prevRight = x + w / 2;
  }
  // Shift the packed rank back so anchored nodes (not weights/inputs) sit, on average, where they want to.
  let shift = 0;
  let count = 0;
  nodes.forEach((n, i) => {
    if (!anchored(n)) return;
    shift += desired.get(n) - xs[i];
    count += 1;
  });
  if (!count) nodes.forEach((n, i) => (shift += desired.get(n) - xs[i]));
  shift /= count || nodes.length || 1;
  const out = new Map();
  nodes.forEach((n, i) => out.set(n, xs[i] + shift));
  return out;
}

function fastLayout(names, allPreds, succs, width) {
  let preds = allPreds;
  const { order, rank } = rankNodes(names, preds, succs);
  const ranks = [];
  for (const n of order) {
    const r = rank.get(n);
    (ranks[r] ||= []).push(n);
  }
  const x = new Map();
  for (const nodes of ranks) {
    if (!nodes) continue;
    let cursor = 0;
    for (const n of nodes) {
      x.set(n, cursor + width.get(n) / 2);
      cursor += width.get(n) + NODE_SEP;
    }
    const half = cursor / 2;
    nodes.forEach((n) => x.set(n, x.get(n) - half));
  }
  // Nodes with no neighbour on the sweep's side (weights, placeholders) follow the
  // other side instead of staying where they are: otherwise they pin their rank
  // and the main chain drifts sideways layer after layer.
  const sweep = (rankList, neighbours, other) => {
    for (const nodes of rankList) {
      if (!nodes || nodes.length === 0) continue;
      const desired = new Map();
      for (const n of nodes) {
        let nb = neighbours.get(n);
        if (nb.length === 0) nb = other.get(n);
        if (nb.length === 0) desired.set(n, x.get(n));
        else desired.set(n, nb.reduce((acc, m) => acc + x.get(m), 0) / nb.length);
      }
      for (const [n, v] of placeRank(nodes.slice(), desired, width, anchored)) x.set(n, v);
    }
  };
  // Weights and inputs (nodes without inputs) do not pull their users sideways:
  // a chain of layers each reading its own weights would otherwise slide a
  // little further per layer.
  const isSource = (n) => allPreds.get(n).length === 0;
  const mainPreds = new Map(names.map((n) => {
    const main = preds.get(n).filter((p) => !isSource(p));
    return [n, main.length ? main : preds.get(n)];
  }));
  preds = mainPreds;
  const anchored = (n) => !isSource(n);
  for (let pass = 0; pass < 3; pass++) {
    sweep(ranks, preds, succs);
    sweep(ranks.slice().reverse(), succs, preds);
  }
  sweep(ranks, preds, succs);
  // The last down sweep moved users after their weights were placed: settle weights next to them.
  for (const nodes of ranks) {
    if (!nodes || nodes.length === 0) continue;
    const desired = new Map();
    for (const n of nodes) {
      const nb = isSource(n) ? succs.get(n) : [];
      desired.set(n, nb.length ? nb.reduce((acc, m) => acc + x.get(m), 0) / nb.length : x.get(n));
    }
    for (const [n, v] of placeRank(nodes.slice(), desired, width, anchored)) x.set(n, v);
  }
  const pos = new Map();
  for (const n of names) {
    pos.set(n, { x: x.get(n), y: rank.get(n) * (NODE_H + RANK_SEP) + NODE_H / 2, w: width.get(n), h: NODE_H, rank: rank.get(n) });
  }
  const edges = [];
  for (const n of names) {
    for (const p of allPreds.get(n)) edges.push({ from: p, to: n, points: null });
  }
  return normalise(pos, edges, "fast");
}

function dagreLayout(names, preds, width) {
  const g = new dagre.graphlib.Graph();
  g.setGraph({ rankdir: "TB", nodesep: NODE_SEP, ranksep: RANK_SEP, marginx: 0, marginy: 0 });
  g.setDefaultEdgeLabel(() => ({}));
  names.forEach((n) => g.setNode(n, { width: width.get(n), height: NODE_H }));
  names.forEach((n) => preds.get(n).forEach((p) => g.setEdge(p, n)));
  dagre.layout(g);
  const pos = new Map();
  names.forEach((n) => {
    const d = g.node(n);
    pos.set(n, { x: d.x, y: d.y, w: width.get(n), h: NODE_H, rank: Math.round(d.y / (NODE_H + RANK_SEP)) });
  });
  const edges = g.edges().map((e) => ({ from: e.v, to: e.w, points: g.edge(e).points }));
  return normalise(pos, edges, "dagre");
}

function normalise(pos, edges, engine) {
  let minX = Infinity, minY = Infinity, maxX = -Infinity, maxY = -Infinity;
  for (const p of pos.values()) {
    minX = Math.min(minX, p.x - p.w / 2);
    maxX = Math.max(maxX, p.x + p.w / 2);
    minY = Math.min(minY, p.y - p.h / 2);
    maxY = Math.max(maxY, p.y + p.h / 2);
  }
  if (pos.size === 0) minX = minY = maxX = maxY = 0;
  const pad = 20;
  for (const p of pos.values()) {
    p.x += pad - minX;
    p.y += pad - minY;
  }
  for (const e of edges) {
    if (e.points) e.points = e.points.map((q) => ({ x: q.x + pad - minX, y: q.y + pad - minY }));
  }
  return { pos, edges, width: maxX - minX + 2 * pad, height: maxY - minY + 2 * pad, engine };
}

/**
 * Lay out FX nodes ({name, inputs}) whose boxes show `labels(node)`.
 * Returns {pos: Map(name -> {x, y, w, h, rank}), edges: [{from, to, points}], width, height, engine}.
 */
export function layoutGraph(nodes, labels, options = {}) {
  const names = [];
  const seen = new Set();
  for (const n of nodes) {
    const name = String(n.name);
    if (seen.has(name)) continue;
    seen.add(name);
    names.push(name);
  }
  const preds = new Map(names.map((n) => [n, []]));
  const succs = new Map(names.map((n) => [n, []]));
  for (const n of nodes) {
    const name = String(n.name);
    const inputs = Array.isArray(n.inputs) ? n.inputs : [];
    for (const raw of inputs) {
      const p = String(raw);
      if (!seen.has(p) || p === name || preds.get(name).includes(p)) continue;
      preds.get(name).push(p);
      succs.get(p).push(name);
    }
  }
  const width = new Map(nodes.map((n) => [String(n.name), nodeWidth(labels(n))]));
  const budget = options.dagreBudget ?? DAGRE_BUDGET;
  if (names.length <= budget) {
    const { rank } = rankNodes(names, preds, succs);
    let span = names.length;
    for (const n of names) for (const p of preds.get(n)) span += Math.max(0, rank.get(n) - rank.get(p) - 1);
    if (span <= budget) return dagreLayout(names, preds, width);
  }
  return fastLayout(names, preds, succs, width);
}
