// The "linked" side panel: what the current selection is connected to in every
// other stage, including the user's own source lines and the exact kernel lines.
// Every entry is clickable and jumps to that item in its stage.

import { h, clear } from "./dom.js";
import { tokenizeLines } from "./highlight.js";
import { renderTokens } from "./sourceview.js";
import { userLineKey } from "./model.js";
import { chip } from "./stages.js";
import { lineHeatGutter, measureRows } from "./measures.js";

const MAX_CHIPS = 60;
const MAX_KERNEL_LINES = 40;
const CONTEXT_LINES = 2;

export function describe(sel) {
  if (!sel) return "nothing";
  switch (sel.kind) {
    case "fx": return `Dynamo FX node ${sel.id}`;
    case "post_grad": return `post-grad node ${sel.id}`;
    case "loop_ir": return `loop-IR node ${sel.id}`;
    case "fused": return `fused group ${sel.id}`;
    case "kernel": return `kernel ${sel.id}`;
    case "kernel_line": return `line ${sel.line} of ${sel.id}`;
    case "wrapper_line": return `wrapper line ${sel.line}`;
    case "user_line": return `${sel.id}:${sel.line}`;
    case "culprit": return sel.label ? `culprit: ${sel.label}` : `culprit level ${sel.id}`;
    default: return String(sel.kind);
  }
}

function section(key, title, items) {
  return h("section", { class: "ie-links-section", "data-section": key }, h("h4", null, title), items);
}

function chips(kind, ids, go) {
  const all = [...ids];
  const shown = all.slice(0, MAX_CHIPS).map((id) => chip(kind, id, go));
  if (all.length > MAX_CHIPS) shown.push(h("span", { class: "ie-muted" }, ` +${all.length - MAX_CHIPS} more`));
  return h("div", { class: "ie-chips" }, shown);
}

/**
 * User source lines: every line the trace kept for each file involved, the linked ones lit.
 * `breaks` (userLineKey -> reason) marks the lines where Dynamo broke the graph, `cudagraphs` (userLineKey ->
 * why) those whose work a CUDA graph does not hold; `reports` gives the heat gutter of profiled time per line.
 */
function userSource(sources, links, select, breaks, reports, cudagraphs) {
  const files = new Map();
  for (const key of links.userLines) {
    const [file, line] = key.split("\u0000");
    if (!files.has(file)) files.set(file, new Set());
    files.get(file).add(Number(line));
  }
  const out = [];
  for (const [file, lines] of files) {
    const known = (sources && sources[file]) || {};
    // The linked lines with a little context: a whole file would bury them.
    const near = (n) => [...lines].some((l) => Math.abs(l - n) <= CONTEXT_LINES);
    const numbers = new Set([...Object.keys(known).map(Number).filter(near), ...lines]);
    const rows = [];
    let last = null;
    for (const n of [...numbers].sort((a, b) => a - b)) {
      if (last !== null && n > last + 1) rows.push(h("div", { class: "ie-muted ie-gap" }, "  ⋯"));
      last = n;
      const broke = breaks && breaks.get(userLineKey(file, n));
      const leftOut = cudagraphs && cudagraphs.get(userLineKey(file, n));
      const text = known[String(n)];
      rows.push(
        h(
          "div",
          {
            class: `ie-user-line ie-src-line${lines.has(n) ? " ie-lit" : ""}`,
            "data-file": file,
            "data-line": String(n),
            "data-break": broke ? "true" : null,
            "data-cudagraph": leftOut ? "true" : null,
            onclick: () => select({ kind: "user_line", id: file, line: n }),
          },
          lineHeatGutter(reports, file, n),
          h("span", { class: "ie-ln" }, String(n)),
          broke ? h("span", { class: "ie-badge ie-break-mark", title: `graph break: ${broke}` }, "graph break") : null,
          leftOut ? h("span", { class: "ie-badge ie-cg-mark", title: leftOut }, "no CUDA graph") : null,
          text === undefined
            ? h("span", { class: "ie-code-text ie-muted ie-no-text" }, "(the trace holds no text for this line)")
            : h("span", { class: "ie-code-text" }, renderTokens(tokenizeLines(text, "python")[0] || [])),
        ),
      );
    }
    out.push(h("div", { class: "ie-user-file" }, h("div", { class: "ie-path", title: file }, file), h("pre", { class: "ie-code" }, rows)));
  }
  return out;
}

function kernelLines(gi, kernelSources, links, sel, select, go) {
  const out = [];
  for (const [kid, lines] of links.kernelLines) {
    const kernel = gi.kernels.get(kid);
    if (!kernel || !lines.size) continue;
    const text = String(kernelSources.get(kid) ?? "").split("\n");
    const lang = kernel.language === "cpp" ? "cpp" : "python";
    const sorted = [...lines].sort((a, b) => a - b);
    const rows = sorted.slice(0, MAX_KERNEL_LINES).map((n) => {
      const selected = sel && sel.kind === "kernel_line" && String(sel.id) === kid && Number(sel.line) === n;
      return h(
        "div",
        {
          class: `ie-kline ie-src-line ie-lit${selected ? " ie-selected" : ""}`,
          "data-kernel": kid,
          "data-line": String(n),
          onclick: () => select({ kind: "kernel_line", id: kid, line: n }),
        },
        h("span", { class: "ie-ln" }, String(n)),
        h("span", { class: "ie-code-text" }, renderTokens(tokenizeLines((text[n - 1] ?? "").trim(), lang)[0] || [])),
      );
    });
    if (sorted.length > MAX_KERNEL_LINES) rows.push(h("div", { class: "ie-muted" }, `+${sorted.length - MAX_KERNEL_LINES} more lines`));
    out.push(h("div", { class: "ie-klines" }, chip("kernel", kid, go), h("pre", { class: "ie-code" }, rows)));
  }
  return out;
}

/**
 * The side panel for selection `sel`. With nothing selected, `open` is what the stage shows anyway (the
 * kernel whose source the Kernels stage opened): the head names it, with a button that selects it.
 */
export function renderLinks(panel, { sources, breaks, cudagraphs, gi, kernelSources, sel, open, links, reports, graph, select, go, clearSelection }) {
  clear(panel);
  const shown = sel ? null : open || null;
  panel.appendChild(
    h(
      "div",
      { class: "ie-links-head" },
      h("span", { class: "ie-muted" }, "selected: "),
      h("strong", { class: "ie-selection-label" }, describe(sel)),
      sel ? h("button", { class: "ie-btn", type: "button", title: "clear the selection", onclick: clearSelection }, "clear") : null,
      shown
        ? [
            h("span", { class: "ie-muted" }, " · open: "),
            h("strong", { class: "ie-open-label" }, describe(shown)),
            h("button", { class: "ie-btn ie-select-open", type: "button", title: `select ${describe(shown)}: light what it is linked to`, onclick: () => select(shown) }, "select"),
          ]
        : null,
    ),
  );
  if (!sel) {
    const hint = shown
      ? `Select ${describe(shown)} (its row, or a marked line of its source) to see what it came from here and in every stage.`
      : "Click a graph node, a kernel line, a loop-IR node or a fused group: what it became, and what it came from, lights up here and in every stage.";
    panel.appendChild(h("p", { class: "ie-muted ie-hint" }, hint));
    return;
  }
  const parts = [
    ["measured", "Measured", measureRows(reports, graph, sel)],
    ["source", "Your source", links.userLines.size ? userSource(sources, links, select, breaks, reports, cudagraphs) : null],
    ["fx", "Dynamo FX nodes", links.fx.size ? chips("fx", links.fx, go) : null],
    ["post_grad", "Post-grad nodes", links.post_grad.size ? chips("post_grad", links.post_grad, go) : null],
    ["loop_ir", "Loop-IR nodes", links.loop_ir.size ? chips("loop_ir", links.loop_ir, go) : null],
    ["fused", "Fused groups", links.fused.size ? chips("fused", links.fused, go) : null],
    ["kernels", "Kernels", links.kernels.size ? chips("kernel", links.kernels, go) : null],
    ["kernel_lines", "Kernel lines", links.kernelLines.size && gi ? kernelLines(gi, kernelSources, links, sel, select, go) : null],
  ];
  let any = false;
  for (const [key, title, body] of parts) {
    if (!body) continue;
    any = true;
    panel.appendChild(section(key, title, body));
  }
  if (!any) panel.appendChild(h("p", { class: "ie-muted" }, "Nothing in the trace is linked to this."));
}

export { userLineKey };
