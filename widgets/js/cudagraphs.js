// CUDA graphs (mode="reduce-overhead") in the explorer view, from a graph's `cudagraphs` part
// (compiler/SCHEMA.md, "CUDA graphs"): the post-grad graph coloured by partition (captured or not), a
// column of the Kernels stage, a banner saying why a region is not captured (each cause a chip that
// selects its node or line), and a mark on the user's line that caused it in the side panel.

import { h } from "./dom.js";
import { chip } from "./stages.js";
import { userLineKey } from "./model.js";
import "./cudagraphs.css";

const list = (value) => (Array.isArray(value) ? value : []);
const CAPTURED = ["hsl(145, 55%, 78%)", "hsl(165, 55%, 70%)"]; // alternate shades tell partitions apart
const LEFT_OUT = "hsl(2, 85%, 84%)";
const INK = "#000000";

/** The graph's cudagraphs part, or null when it was compiled without CUDA graphs. */
export function cudagraphsPart(gd) {
  return (gd.head.parts || []).includes("cudagraphs") ? gd.part("cudagraphs").catch(() => null) : Promise.resolve(null);
}

/** Why partition `p` is not in a CUDA graph, in words ("" when it replays from one). */
function whyNot(part, p) {
  if (p.replays) return "";
  const reasons = [...new Set(list(p.reasons).map((r) => r.reason))].join(", ");
  if (reasons) return reasons;
  return part.skip ? `graph skipped: ${part.skip.kind}` : "not recorded";
}

/** kernel id -> {captured, partition, reason}. */
export function kernelStates(part) {
  const out = new Map();
  if (!part) return out;
  for (const p of list(part.partitions)) {
    for (const id of list(p.kernels)) {
      const own = list(p.reasons).filter((r) => list(r.kernels).includes(id)).map((r) => r.reason);
      out.set(String(id), { captured: Boolean(p.replays), partition: p.index, reason: p.replays ? "" : [...new Set(own)].join(", ") || whyNot(part, p) });
    }
  }
  return out;
}

/** A legend of the partition colours. */
function legend() {
  const swatch = (color, text) => h("span", { class: "ie-cg-swatch-box" }, h("span", { class: "ie-cg-swatch", style: `background: ${color}` }), text);
  return h("span", { class: "ie-legend", "data-heat-kind": "cudagraph", title: "post-grad nodes by CUDA graph partition" }, swatch(CAPTURED[0], "in a CUDA graph"), swatch(LEFT_OUT, "not"));
}

/** A graphview heat of the post-grad nodes by partition: captured ones green (shades alternate), the rest red. */
export function partitionHeat(part) {
  const colors = new Map();
  const inks = new Map();
  const values = new Map();
  for (const p of list(part.partitions)) {
    const color = p.replays ? CAPTURED[p.index % 2] : LEFT_OUT;
    const text = p.replays ? `partition ${p.index}: in a CUDA graph (${p.function})` : `partition ${p.index}: not in a CUDA graph (${whyNot(part, p)})`;
    for (const name of list(p.post_grad_nodes)) {
      colors.set(String(name), color);
      inks.set(String(name), INK);
      values.set(String(name), text);
    }
  }
  return { kind: "cudagraph", top: 0, colors, inks, values, legend };
}

/** userLineKey -> what keeps that line's work out of CUDA graphs. */
export function cudagraphLines(part) {
  const out = new Map();
  if (!part) return out;
  const add = (line, text) => {
    if (Array.isArray(line) && line.length === 2) out.set(userLineKey(String(line[0]), Number(line[1])), text);
  };
  if (part.skip) add(part.skip.line, `CUDA graphs skipped: ${part.skip.kind} (${part.skip.message})`);
  for (const p of list(part.partitions)) for (const r of list(p.reasons)) add(r.line, `not in a CUDA graph: ${r.reason} (${r.op || r.node})`);
  return out;
}

function lineChip(line, select) {
  if (!Array.isArray(line) || line.length !== 2) return null;
  const [file, n] = line;
  const name = String(file).split("/").pop();
  return h("button", { class: "ie-chip ie-chip-user_line", type: "button", "data-kind": "user_line", title: `${file}:${n}`, onclick: () => select({ kind: "user_line", id: String(file), line: Number(n) }) }, `${name}:${n}`);
}

/** The banner over a stage: how the graph runs in CUDA graphs, and each cause of a region left out. */
export function cudagraphBanner(part, ctx) {
  if (!part) return null;
  const partitions = list(part.partitions);
  const replaying = partitions.filter((p) => p.replays).length;
  const head = part.state === "no GPU" ? `CUDA graphs: none on ${part.device} (they need a GPU)` : `CUDA graphs: ${part.state}, ${replaying} of ${partitions.length} partitions`;
  const causes = [];
  if (part.skip && part.state !== "no GPU") {
    const s = part.skip;
    causes.push(
      h(
        "div",
        { class: "ie-cg-cause", "data-cause": "skip" },
        h("span", { class: "ie-badge ie-cg-skip" }, `skipped: ${s.kind}`),
        " ",
        s.node ? chip("post_grad", s.node, ctx.go) : null,
        list(s.kernels).map((k) => chip("kernel", k, ctx.go)),
        lineChip(s.line, ctx.select),
        h("span", { class: "ie-muted" }, ` ${s.message}`),
      ),
    );
  }
  if (part.state !== "no GPU") {
    for (const p of partitions) {
      for (const r of list(p.reasons)) {
        causes.push(
          h(
            "div",
            { class: "ie-cg-cause", "data-cause": "partition", "data-partition": String(p.index) },
            h("span", { class: "ie-badge ie-cg-left-out" }, `partition ${p.index}: ${r.reason}`),
            " ",
            r.post_grad ? chip("post_grad", r.post_grad, ctx.go, { label: `${r.op || r.post_grad}` }) : null,
            list(r.kernels).map((k) => chip("kernel", k, ctx.go)),
            lineChip(r.line, ctx.select),
          ),
        );
      }
    }
  }
  return h("div", { class: `ie-cg-banner ie-cg-${String(part.state).replace(/[^a-z]/gi, "")}`, "data-state": String(part.state) }, h("strong", null, head), causes);
}
