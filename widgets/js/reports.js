// What running the compiled program measured: a profile (c.profile()), a numerics report
// (c.check_numerics()) and hardware counters (c.counters()), top-level lists of the trace
// (compiler/SCHEMA.md), newest last. One Reports object holds what is on screen (the newest of each
// unless the user picks another) and answers, by the ids every view already has, "how long did this
// take", "how far off is it" and "where did its warps stall".

import { userLineKey } from "./model.js";

const list = (value) => (Array.isArray(value) ? value : []);
const obj = (value) => (value && typeof value === "object" && !Array.isArray(value) ? value : {});

/** Numbers of a report as numbers: non-finite values are stored as strings ("inf", "nan"). */
export function num(value) {
  if (typeof value === "number") return value;
  if (typeof value !== "string") return null;
  const text = value.trim().toLowerCase();
  if (text === "inf" || text === "infinity") return Infinity;
  if (text === "-inf" || text === "-infinity") return -Infinity;
  if (text === "nan") return NaN;
  const parsed = Number(text);
  return Number.isNaN(parsed) ? null : parsed;
}

/** A short label of one report for the picker. */
function label(kind, report, i) {
  const when = typeof report.created === "string" && report.created ? ` · ${report.created.replace("T", " ").replace(/\.\d+|Z$/g, "")}` : "";
  if (kind === "profile") {
    const ms = num(report.total_ms);
    return `#${i + 1} ${report.device ?? "?"}${ms === null ? "" : ` · ${ms.toFixed(3)} ms`}${when}`;
  }
  return `#${i + 1} vs ${report.reference ?? "eager"}${report.first_divergent ? ` · diverges at ${report.first_divergent}` : " · ok"}`;
}

const byGraphKernel = (rows) => {
  const map = new Map();
  for (const row of list(rows)) map.set(`${row.graph}\u0000${row.kernel}`, row);
  return map;
};

/** userLineKey -> ms of a profile's `[[file, line, ms]]` rows. */
function lineMap(rows) {
  const map = new Map();
  for (const row of list(rows)) if (Array.isArray(row) && row.length >= 3) map.set(userLineKey(row[0], row[1]), num(row[2]));
  return map;
}

/** Line number -> counters of one kernel's own source lines (library lines inlined into it are left out). */
function ownLines(row) {
  const lines = new Map();
  for (const line of list(row.lines)) if (line && (line.file === null || line.file === undefined)) lines.set(Number(line.line), line);
  return lines;
}

export class Reports {
  /** @param {Array} profiles the trace's `profiles` (or []) @param {Array} numerics its `numerics` @param {Array} counters its `counters` */
  constructor(profiles, numerics, choice = {}, counters = []) {
    this.profiles = list(profiles);
    this.numerics = list(numerics);
    this.counterReports = list(counters);
    // Every kernel's newest counters, whichever report measured it (k.counters() measures one at a time).
    this._counters = new Map();
    for (const report of this.counterReports) for (const row of list(obj(report).kernels)) this._counters.set(`${row.graph}\u0000${row.kernel}`, row);
    this.counters = this.counterReports.length ? obj(this.counterReports[this.counterReports.length - 1]) : null;
    this._lineSamples = new Map();
    for (const row of list(this.counters && this.counters.line_samples)) {
      if (Array.isArray(row) && row.length >= 3) this._lineSamples.set(userLineKey(row[0], row[1]), num(row[2]));
    }
    this.profileIdx = this._pick(choice.profile, this.profiles.length);
    this.numericsIdx = this._pick(choice.numerics, this.numerics.length);
    this.profile = this.profileIdx >= 0 ? obj(this.profiles[this.profileIdx]) : null;
    this.report = this.numericsIdx >= 0 ? obj(this.numerics[this.numericsIdx]) : null;
    this._kernelTime = byGraphKernel(this.profile && this.profile.kernels);
    this._kernelError = byGraphKernel(this.report && this.report.kernels);
    this._lineMs = lineMap(this.profile && this.profile.line_ms);
    this._lineTotalMs = lineMap(this.profile && this.profile.line_total_ms);
    this.firstDivergent = this._firstDivergent();
  }

  _pick(wanted, count) {
    if (!count) return -1;
    return Number.isInteger(wanted) && wanted >= 0 && wanted < count ? wanted : count - 1;
  }

  get hasTime() {
    return this.profile !== null;
  }

  get hasError() {
    return this.report !== null;
  }

  get hasCounters() {
    return this._counters.size > 0;
  }

  /** The counters row of a kernel (SCHEMA.md: duration_ns, memory_sol, compute_sol, bound_by, stalls, lines...), or null. */
  kernelCounters(graph, kernel) {
    return this._counters.get(`${graph}\u0000${kernel}`) || null;
  }

  /** Line -> {samples, not_issued, instructions, stalls, text} of a kernel's own source, with the kernel's total. */
  kernelLineStalls(graph, kernel) {
    const row = this.kernelCounters(graph, kernel);
    return row ? { total: num(row.samples) || 0, lines: ownLines(row) } : null;
  }

  /** Node name -> warp stall samples of one graph's `fx` or `post_grad` nodes (the newest counters report). */
  nodeStalls(graph, kind) {
    const key = kind === "fx" ? "fx_node_samples" : "post_grad_samples";
    return this._numbers(this.counters && obj(this.counters[key])[graph]);
  }

  /** Warp stall samples on one user line (the newest counters report), or null. */
  lineSamples(file, line) {
    const v = this._lineSamples.get(userLineKey(file, line));
    return v === undefined ? null : v;
  }

  get maxLineSamples() {
    let max = 0;
    for (const v of this._lineSamples.values()) if (Number.isFinite(v) && v > max) max = v;
    return max;
  }

  /** Total device time per run of the profile on screen (ms), the share every time is of. */
  get totalMs() {
    return this.profile ? num(this.profile.total_ms) : null;
  }

  /** Picker labels: [[index, text]] for profiles and numerics reports. */
  labels(kind) {
    const rows = kind === "profile" ? this.profiles : this.numerics;
    return rows.map((r, i) => [i, label(kind, obj(r), i)]);
  }

  /** {ms, fraction, calls} of a kernel, or null when the profile did not see it run. */
  kernelTime(graph, kernel) {
    const row = this._kernelTime.get(`${graph}\u0000${kernel}`);
    if (!row) return null;
    return { ms: num(row.ms), fraction: num(row.fraction), calls: num(row.calls) };
  }

  /**
   * The numerics row of a kernel, or null: its propagated error (ok, max_rel, max_abs, mismatched: against
   * the whole graph run from its inputs), its local error (local_ok, local_max_rel, ...: its own nodes run
   * on the compiled program's inputs to it; null in reports saved before local errors), `divergence`
   * ("local", "propagated" or null: which of them leaves tolerance) and notes.
   */
  kernelError(graph, kernel) {
    const row = this._kernelError.get(`${graph}\u0000${kernel}`);
    if (!row) return null;
    const notes = [...new Set(list(row.buffers).filter((b) => b && b.note).map((b) => `${b.buffer}: ${b.note}`))];
    const flag = (value) => (value === true ? true : value === false ? false : null);
    const ok = flag(row.ok);
    const localOk = flag(row.local_ok);
    return {
      ok,
      max_rel: num(row.max_rel),
      max_abs: num(row.max_abs),
      mismatched: num(row.mismatched),
      compiled_vs_float64: num(row.compiled_vs_float64),
      eager_vs_float64: num(row.eager_vs_float64),
      local_ok: localOk,
      local_max_rel: num(row.local_max_rel),
      local_max_abs: num(row.local_max_abs),
      local_mismatched: num(row.local_mismatched),
      // which error leaves tolerance (written since local errors; the same rule for reports saved before)
      divergence: typeof row.divergence === "string" ? row.divergence : localOk === false ? "local" : ok === false ? "propagated" : null,
      notes,
    };
  }

  /** The first kernel whose propagated error leaves tolerance when no kernel's own error does ({graph, kernel}), or null. */
  get accumulated() {
    if (!this.report || this.report.first_divergent) return null;
    const row = list(this.report.kernels).find((k) => k && k.ok === false);
    return row ? { graph: String(row.graph), kernel: String(row.kernel) } : null;
  }

  /** Node name -> ms of one graph's `fx` or `post_grad` nodes (empty without a profile). */
  nodeTimes(graph, kind) {
    const key = kind === "fx" ? "fx_node_ms" : "post_grad_ms";
    return this._numbers(this.profile && obj(this.profile[key])[graph]);
  }

  /** Node name -> max_rel of one graph's `fx` or `post_grad` nodes (empty without a report). */
  nodeErrors(graph, kind) {
    const key = kind === "fx" ? "fx_error" : "post_grad_error";
    return this._numbers(this.report && obj(this.report[key])[graph]);
  }

  _numbers(values) {
    const map = new Map();
    for (const [name, value] of Object.entries(obj(values))) {
      const v = num(value);
      if (v !== null) map.set(name, v);
    }
    return map;
  }

  /** ms per run spent on one user line (summed over graphs), or null. */
  lineMs(file, line) {
    const v = this._lineMs.get(userLineKey(file, line));
    return v === undefined ? null : v;
  }

  /** ms per run of one line with everything it called included (a model's call site: all of it), or null. */
  lineTotalMs(file, line) {
    const v = this._lineTotalMs.get(userLineKey(file, line));
    return v === undefined ? null : v;
  }

  /** The largest line time: the top of the source gutter's scale. */
  get maxLineMs() {
    let max = 0;
    for (const v of this._lineMs.values()) if (Number.isFinite(v) && v > max) max = v;
    return max;
  }

  /** {graph, kernel, key, nodes} of the first kernel whose output left tolerance, or null. */
  _firstDivergent() {
    const key = this.report && this.report.first_divergent;
    if (!key) return null;
    const row = list(this.report.kernels).find((k) => k.key === key);
    // Keys are kernel ids, qualified "g1/id" only when two graphs share an id.
    const [graph, kernel] = row ? [String(row.graph), String(row.kernel)] : key.includes("/") ? key.split(/\/(.*)/s, 2) : [null, key];
    return { key, graph, kernel, nodes: obj(this.report.first_divergent_nodes) };
  }
}

/** The Reports of a trace, from the parts the summary lists (none: an empty Reports). */
export async function loadReports(store, choice) {
  const parts = new Set(list(store.summary && store.summary.parts));
  const get = (key) => (parts.has(key) ? store.get(key).catch(() => []) : Promise.resolve([]));
  const [profiles, numerics, counters] = await Promise.all([get("profiles"), get("numerics"), get("counters")]);
  return new Reports(profiles, numerics, choice, counters);
}
