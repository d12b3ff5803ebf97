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

/**
 * Place one rank's nodes (integer ids) near their desired x without overlaps.
 * The packed rank is shifted back so anchored nodes (not weights or inputs) sit,
 * on average, where they want to.
 */
function placeRank(nodes, desired, width, anchored, x) {
  nodes.sort((a, b) => desired[a] - desired[b]);
  let prevRight = -Infinity;
  let shift = 0;
  let count = 0;
  for (const n of nodes) {
    const w = width[n];
    const pos = Math.max(desired[n], prevRight + NODE_SEP + w / 2);
    x[n] = pos;
    prevRight = pos + w / 2;
    if (anchored[n]) {
      shift += desired[n] - pos;
      count += 1;
    }
  }
  if (!count) for (const n of nodes) shift += desired[n] - x[n];
  shift /= count || nodes.length || 1;
  for (const n of nodes) x[n] += shift;
}

/** Linear-time layered layout on integer ids (Maps of strings are too slow at 2,000 nodes). */
function fastLayout(names, predsByName, succsByName, widthByName) {
  const { rank: rankByName } = rankNodes(names, predsByName, succsByName);
  const N = names.length;
  const id = new Map(names.map((n, i) => [n, i]));
  const preds = names.map((n) => predsByName.get(n).map((p) => id.get(p)));
  const succs = names.map((n) => succsByName.get(n).map((p) => id.get(p)));
  const width = Float64Array.from(names, (n) => widthByName.get(n));
  const rank = Int32Array.from(names, (n) => rankByName.get(n));
  const isSource = Uint8Array.from(preds, (p) => (p.length === 0 ? 1 : 0));
  const anchored = Uint8Array.from(isSource, (v) => 1 - v);
  // Weights and inputs do not pull their users sideways: a chain of layers each
  // reading its own weights would otherwise slide a little further per layer.
  const mainPreds = preds.map((p) => {
    const main = p.filter((q) => !isSource[q]);
    return main.length ? main : p;
  });
  const ranks = [];
  for (let i = 0; i < N; i++) (ranks[rank[i]] ||= []).push(i);
  const x = new Float64Array(N);
  for (const nodes of ranks) {
    if (!nodes) continue;
    let cursor = 0;
    for (const n of nodes) {
      x[n] = cursor + width[n] / 2;
      cursor += width[n] + NODE_SEP;
    }
    for (const n of nodes) x[n] -= cursor / 2;
  }
  const desired = new Float64Array(N);
  const mean = (list) => {
    let acc = 0;
    for (const m of list) acc += x[m];
    return acc / list.length;
  };
  // Nodes with no neighbour on the sweep's side follow the other side instead of
  // staying put: otherwise they pin their rank and the main chain drifts.
  const sweep = (rankList, neighbours, other) => {
    for (const nodes of rankList) {
      if (!nodes || nodes.length === 0) continue;
      for (const n of nodes) {
        const nb = neighbours[n].length ? neighbours[n] : other[n];
        desired[n] = nb.length ? mean(nb) : x[n];
      }
      placeRank(nodes, desired, width, anchored, x);
    }
  };
  const reversed = ranks.slice().reverse();
  for (let pass = 0; pass < 3; pass++) {
    sweep(ranks, mainPreds, succs);
    sweep(reversed, succs, mainPreds);
  }
  sweep(ranks, mainPreds, succs);
  // The last down sweep moved users after their weights were placed: settle weights next to them.
  for (const nodes of ranks) {
    if (!nodes || nodes.length === 0) continue;
    for (const n of nodes) desired[n] = isSource[n] && succs[n].length ? mean(succs[n]) : x[n];
    placeRank(nodes, desired, width, anchored, x);
  }
  const pos = new Map();
  for (let i = 0; i < N; i++) {
    pos.set(names[i], { x: x[i], y: rank[i] * (NODE_H + RANK_SEP) + NODE_H / 2, w: width[i], h: NODE_H, rank: rank[i] });
  }
  const edges = [];
  for (let i = 0; i < N; i++) for (const p of preds[i]) edges.push({ from: names[p], to: names[i], points: null });
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
