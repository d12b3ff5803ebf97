// What the profile and the numerics report say about the selection, for the side panel (links.js):
// time (ms per run, share of the total) and error (max_rel, within tolerance, notes) of a kernel,
// an FX or post-grad node, or a user line; and a heat gutter for the user-source lines.

import { h } from "./dom.js";
import { formatError, formatMs, formatShare, heatColor, heatLevel } from "./heat.js";

const kv = (label, value, cls = "") => h("div", { class: `ie-kv ${cls}` }, h("span", { class: "ie-k" }, label), h("span", { class: "ie-v" }, value));

function timeRows(ms, total, extra) {
  if (ms === null || ms === undefined) return [];
  const share = total ? ms / total : null;
  return [kv("time", `${formatMs(ms)} ms per run${share === null ? "" : ` · ${formatShare(share)} of ${formatMs(total)} ms`}${extra || ""}`, "ie-measure-time")];
}

function kernelErrorRows(e, isFirst) {
  if (!e) return [];
  const state = e.ok === true ? "within tolerance" : e.ok === false ? "outside tolerance" : "not compared";
  const rows = [
    kv("error", `max rel ${formatError(e.max_rel)} · max abs ${formatError(e.max_abs)} · ${state}`, `ie-measure-error ie-err-${e.ok === true ? "ok" : e.ok === false ? "diverges" : "not-compared"}`),
  ];
  if (e.mismatched !== null) rows.push(kv("mismatched", `${formatShare(e.mismatched)} of elements`));
  if (e.compiled_vs_float64 !== null && e.eager_vs_float64 !== null) {
    const closer = e.compiled_vs_float64 <= e.eager_vs_float64 ? "compiled is closer to float64 than eager" : "eager is closer to float64";
    rows.push(kv("vs float64", `compiled ${formatError(e.compiled_vs_float64)} · eager ${formatError(e.eager_vs_float64)} (${closer})`));
  }
  if (isFirst) rows.push(h("div", { class: "ie-badge ie-first-divergent" }, "first divergent kernel"));
  for (const note of e.notes) rows.push(h("div", { class: "ie-muted ie-measure-note" }, note));
  return rows;
}

/** The "Measured" section's rows for `sel` in graph `graph`, or null when nothing was measured. */
export function measureRows(reports, graph, sel) {
  if (!reports || !sel || (!reports.hasTime && !reports.hasError)) return null;
  const total = reports.totalMs;
  let rows = [];
  switch (sel.kind) {
    case "kernel":
    case "kernel_line":
    case "wrapper_line": {
      const id = String(sel.id);
      const t = reports.kernelTime(graph, id);
      const first = reports.firstDivergent;
      rows = [
        ...(t ? timeRows(t.ms, total, t.calls ? ` · ${t.calls} call${t.calls === 1 ? "" : "s"}` : "") : []),
        ...kernelErrorRows(reports.kernelError(graph, id), Boolean(first && first.kernel === id && (first.graph === null || first.graph === graph))),
      ];
      break;
    }
    case "fx":
    case "post_grad": {
      const name = String(sel.id);
      rows = timeRows(reports.nodeTimes(graph, sel.kind).get(name), total, " (its kernels' time, shared evenly)");
      const err = reports.nodeErrors(graph, sel.kind).get(name);
      if (err !== undefined) rows.push(kv("error", `max rel ${formatError(err)} (worst buffer of its kernels)`, "ie-measure-error"));
      break;
    }
    case "user_line":
      rows = timeRows(reports.lineMs(sel.id, sel.line), total, " (all graphs)");
      break;
    default:
      break;
  }
  return rows.length ? rows : null;
}

/** A small coloured bar in front of a user-source line by its time, or null. */
export function lineHeatGutter(reports, file, line) {
  if (!reports || !reports.hasTime) return null;
  const ms = reports.lineMs(file, line);
  if (ms === null) return h("span", { class: "ie-heat-gutter" });
  const color = heatColor("time", heatLevel("time", ms, reports.maxLineMs) ?? 0);
  return h("span", { class: "ie-heat-gutter ie-heat", style: `background: ${color}`, title: `${formatMs(ms)} ms per run`, "data-ms": String(ms) });
}
