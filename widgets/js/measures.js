// What the profile, the numerics report and the hardware counters say about the selection, for the
// side panel (links.js): time (ms per run, share of the total), error (max_rel, within tolerance,
// notes) and warp stalls (what bounds a kernel, samples by reason per kernel line) of a kernel, a
// kernel line, an FX or post-grad node, or a user line; and a heat gutter for the user-source lines.

import { h } from "./dom.js";
import { formatError, formatMs, formatShare, heatColor, heatLevel } from "./heat.js";
import { num } from "./reports.js";

const STALL_TOP = 6;
const pct = (v) => `${(num(v) || 0).toFixed(1)}%`;
const rate = (bytesPerSecond) => `${((num(bytesPerSecond) || 0) / 1e9).toFixed(0)} GB/s`;

/** Reason -> samples, largest first, as "long_sb 52%, wait 20%" for titles. */
function topReasons(stalls, total, n = 3) {
  return Object.entries(stalls || {})
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([reason, count]) => `${reason} ${total ? ((100 * count) / total).toFixed(0) : 0}%`)
    .join(", ");
}

/** The tooltip of a kernel line's stall heat. */
export function stallTitle(line, kernelTotal) {
  const samples = num(line.samples) || 0;
  const share = kernelTotal ? ` (${((100 * samples) / kernelTotal).toFixed(1)}% of the kernel)` : "";
  return `${samples} warp stall samples${share}: ${topReasons(line.stalls, samples)}`;
}

/** Samples by reason as small bars, largest first. */
function stallBreakdown(stalls, total) {
  const rows = Object.entries(stalls || {}).sort((a, b) => b[1] - a[1]).slice(0, STALL_TOP);
  if (!rows.length || !total) return null;
  return h(
    "div",
    { class: "ie-stall-reasons" },
    rows.map(([reason, count]) =>
      h(
        "div",
        { class: "ie-stall-reason", "data-reason": reason, "data-samples": String(count) },
        h("span", { class: "ie-k" }, reason),
        h("span", { class: "ie-bar" }, h("span", { class: "ie-bar-fill", style: `width: ${((100 * count) / total).toFixed(1)}%; background: ${heatColor("stalls", count / total)}` })),
        h("span", { class: "ie-num ie-muted" }, `${((100 * count) / total).toFixed(0)}%`),
      ),
    ),
  );
}

function kernelCounterRows(c) {
  if (!c) return [];
  // An extern call (cuBLAS, cuDNN, attention) is measured as the device kernels it launched, combined.
  const launched = c.language === "extern" && Array.isArray(c.device_kernels) ? c.device_kernels : [];
  return [
    launched.length ? kv("launched", launched.join(" · "), "ie-measure-launched") : null,
    kv("counters", `${((num(c.duration_ns) || 0) / 1e3).toFixed(2)} us · ${c.bound_by}-bound · memory ${pct(c.memory_sol)} · compute ${pct(c.compute_sol)} of peak`, "ie-measure-counters"),
    kv("occupancy", `${pct(c.achieved_occupancy)} of ${pct(c.theoretical_occupancy)} · ${c.registers} registers · DRAM ${rate(c.dram_bandwidth)} · L2 ${rate(c.l2_bandwidth)}`),
    stallBreakdown(c.stalls, num(c.samples)),
  ].filter(Boolean);
}

function kernelLineCounterRows(stalls, line) {
  const row = stalls && stalls.lines.get(line);
  if (!row) return [];
  const samples = num(row.samples) || 0;
  return [
    kv("stalls", `${samples} warp stall samples · ${stalls.total ? ((100 * samples) / stalls.total).toFixed(1) : 0}% of the kernel · ${(num(row.instructions) || 0).toLocaleString()} instructions`, "ie-measure-stalls"),
    stallBreakdown(row.stalls, samples),
  ].filter(Boolean);
}

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
  if (e.local_max_rel !== null) {
    const own = e.local_ok === true ? "within tolerance" : e.local_ok === false ? "outside tolerance" : "not compared";
    rows.push(kv("local error", `max rel ${formatError(e.local_max_rel)} · max abs ${formatError(e.local_max_abs)} · ${own} (its own nodes run on the compiled program's inputs to it)`, `ie-measure-local ie-err-${e.local_ok === false ? "diverges" : "ok"}`));
  }
  if (e.divergence) rows.push(kv("leaves tolerance", e.divergence === "local" ? "its own error (local)" : "only the error its inputs carried from the kernels before it (propagated)", `ie-measure-divergence ie-err-${e.divergence}`));
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
  if (!reports || !sel || (!reports.hasTime && !reports.hasError && !reports.hasCounters)) return null;
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
        ...(sel.kind === "kernel_line" ? kernelLineCounterRows(reports.kernelLineStalls(graph, id), Number(sel.line)) : kernelCounterRows(reports.kernelCounters(graph, id))),
      ];
      break;
    }
    case "fx":
    case "post_grad": {
      const name = String(sel.id);
      rows = timeRows(reports.nodeTimes(graph, sel.kind).get(name), total, " (its kernels' time, split by what each node costs)");
      const err = reports.nodeErrors(graph, sel.kind).get(name);
      if (err !== undefined) rows.push(kv("error", `max rel ${formatError(err)} (worst buffer of its kernels)`, "ie-measure-error"));
      const stalls = reports.nodeStalls(graph, sel.kind).get(name);
      if (stalls !== undefined) rows.push(kv("stalls", `${Math.round(stalls)} warp stall samples (its kernels' lines, shared evenly)`, "ie-measure-stalls"));
      break;
    }
    case "user_line": {
      rows = timeRows(reports.lineMs(sel.id, sel.line), total, " on the ops it traced itself (all graphs)");
      const below = reports.lineTotalMs(sel.id, sel.line);
      if (below !== null && below > (reports.lineMs(sel.id, sel.line) || 0)) rows.push(...timeRows(below, total, " with every line it called"));
      const samples = reports.lineSamples(sel.id, sel.line);
      if (samples !== null) rows.push(kv("stalls", `${Math.round(samples)} warp stall samples in the kernels it became`, "ie-measure-stalls"));
      break;
    }
    default:
      break;
  }
  return rows.length ? rows : null;
}

/** A small coloured bar in front of a user-source line by its time (or, without a profile, its warp stall samples), or null. */
export function lineHeatGutter(reports, file, line) {
  if (reports && !reports.hasTime && reports.hasCounters) {
    const samples = reports.lineSamples(file, line);
    if (samples === null) return h("span", { class: "ie-heat-gutter" });
    const color = heatColor("stalls", heatLevel("stalls", samples, reports.maxLineSamples) ?? 0);
    return h("span", { class: "ie-heat-gutter ie-heat", style: `background: ${color}`, title: `${Math.round(samples)} warp stall samples`, "data-samples": String(samples) });
  }
  if (!reports || !reports.hasTime) return null;
  const ms = reports.lineMs(file, line);
  const below = reports.lineTotalMs(file, line);
  if (ms === null && below === null) return h("span", { class: "ie-heat-gutter" });
  const color = heatColor("time", heatLevel("time", ms || 0, reports.maxLineMs) ?? 0);
  const title = `${formatMs(ms || 0)} ms per run${below !== null && below > (ms || 0) ? ` · ${formatMs(below)} ms with what it called` : ""}`;
  return h("span", { class: "ie-heat-gutter ie-heat", style: `background: ${color}`, title, "data-ms": String(ms || 0) });
}
