// Heat: colours for measured values (time from a profile, error from a numerics report, warp stall
// samples from hardware counters), the "colour by" control of the graph views and the legend that
// says what a colour means. Time and stalls are linear from 0 to the largest value on screen (shares
// add up); error is logarithmic over six decades below the largest, since relative errors span
// orders of magnitude.

import { h, clear } from "./dom.js";

const ERROR_DECADES = 6;

/** 0..1 position of `value` on the scale of `kind` whose top is `max`; null when not a value. */
export function heatLevel(kind, value, max) {
  if (value === null || value === undefined || Number.isNaN(value)) return null;
  if (!Number.isFinite(value)) return 1;
  if (!(max > 0)) return 0;
  if (kind === "error") {
    if (value <= 0) return 0;
    const top = Number.isFinite(max) ? Math.log10(max) : 0;
    return Math.min(1, Math.max(0, (Math.log10(value) - (top - ERROR_DECADES)) / ERROR_DECADES));
  }
  return Math.min(1, Math.max(0, value / max));
}

/** [hue, saturation %, lightness %] of a level: pale yellow to red for time, pale lilac to magenta for
 * error, pale cyan to blue for stalls. */
function heatHsl(kind, level) {
  const t = Math.min(1, Math.max(0, level));
  if (kind === "error") return [Math.round(275 + 45 * t), 80, Math.round(90 - 38 * t)];
  if (kind === "stalls") return [Math.round(185 + 40 * t), 85, Math.round(88 - 36 * t)];
  return [Math.round(52 - 52 * t), 95, Math.round(86 - 34 * t)];
}

/** The CSS colour of a level (heatHsl). */
export function heatColor(kind, level) {
  const [hue, saturation, lightness] = heatHsl(kind, level);
  return `hsl(${hue}, ${saturation}%, ${lightness}%)`;
}

/** sRGB channels (0..1) of an HSL colour, by CSS Color 4's conversion. */
function hslToRgb(hue, saturation, lightness) {
  const s = saturation / 100;
  const l = lightness / 100;
  const channel = (n) => {
    const k = (n + hue / 30) % 12;
    return l - s * Math.min(l, 1 - l) * Math.max(-1, Math.min(k - 3, 9 - k, 1));
  };
  return [channel(0), channel(8), channel(4)];
}

/** WCAG 2 relative luminance of sRGB channels (0..1). */
export function relativeLuminance([r, g, b]) {
  const linear = (c) => (c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4);
  return 0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b);
}

/** WCAG 2 contrast ratio of two relative luminances (1 to 21). */
export function contrastRatio(a, b) {
  return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
}

const INK_DARK = "#000000";
const INK_LIGHT = "#ffffff";

/**
 * The text colour on a heat level's background: black or white, whichever contrasts more. One of
 * them always reaches 4.58:1 (WCAG AA asks 4.5:1 for text), while the theme's own text colour does not:
 * the hottest time red is 3.9:1 against the light theme's #1f2328 and 4.1:1 against white.
 */
export function heatInk(kind, level) {
  const background = relativeLuminance(hslToRgb(...heatHsl(kind, level)));
  return contrastRatio(background, 0) >= contrastRatio(background, 1) ? INK_DARK : INK_LIGHT;
}

/** The largest finite value of a Map (Infinity counts as the top only when nothing else is finite). */
export function scaleTop(values) {
  let max = 0;
  let infinite = false;
  for (const v of values) {
    if (Number.isFinite(v)) max = Math.max(max, v);
    else if (v === Infinity) infinite = true;
  }
  return max > 0 ? max : infinite ? Infinity : 0;
}

export function formatMs(ms) {
  if (ms === null || ms === undefined || Number.isNaN(ms)) return "–";
  if (ms === 0) return "0";
  return ms >= 100 ? ms.toFixed(0) : ms >= 1 ? ms.toFixed(2) : ms.toPrecision(3);
}

export function formatError(v) {
  if (v === null || v === undefined) return "–";
  if (!Number.isFinite(v)) return String(v);
  return v === 0 ? "0" : v.toExponential(2);
}

export const formatShare = (fraction) => (typeof fraction === "number" && Number.isFinite(fraction) ? `${(fraction * 100).toFixed(1)}%` : "–");

/**
 * Colours of one graph's nodes: {kind, top, colors: Map(name -> css colour), inks: Map(name -> text
 * colour on it), values: Map}. `values` maps node name -> ms (time) or max_rel (error).
 */
export function nodeHeat(kind, values) {
  const top = scaleTop(values.values());
  const colors = new Map();
  const inks = new Map();
  for (const [name, v] of values) {
    const level = heatLevel(kind, v, top);
    if (level === null) continue;
    colors.set(name, heatColor(kind, level));
    inks.set(name, heatInk(kind, level));
  }
  return { kind, top, colors, inks, values };
}

/** A gradient bar with the scale's ends, for `kind` with top value `top`. */
export function heatLegend(kind, top) {
  const stops = [0, 0.25, 0.5, 0.75, 1].map((t) => `${heatColor(kind, t)} ${t * 100}%`).join(", ");
  const low = kind === "error" ? (Number.isFinite(top) && top > 0 ? formatError(top / 10 ** ERROR_DECADES) : "0") : kind === "stalls" ? "0" : "0 ms";
  const high = kind === "error" ? `${formatError(top)} max rel` : kind === "stalls" ? `${Math.round(top)} samples` : `${formatMs(top)} ms`;
  const titles = { error: "max relative error, log scale", stalls: "warp stall samples (Nsight Compute), linear", time: "time per run, linear" };
  return h(
    "span",
    { class: "ie-legend", "data-heat-kind": kind, title: titles[kind] || titles.time },
    h("span", { class: "ie-muted" }, low),
    h("span", { class: "ie-legend-bar", style: `background: linear-gradient(to right, ${stops})` }),
    h("span", { class: "ie-muted" }, high),
  );
}

/**
 * The "colour by" control of a graph stage: a select with the choices this trace has and a legend.
 * `heats` maps "time" / "error" to a nodeHeat (or a heat of its own kind with a `legend()`, such as
 * cudagraphs.js's partitions); `apply(heat | null)` recolours the graph.
 * Returns null when the trace measured nothing for these nodes.
 */
export function colourByControl(heats, apply) {
  const choices = [...heats.keys()];
  if (!choices.length) return null;
  const select = h("select", { class: "ie-colour-by", "aria-label": "colour nodes by" }, h("option", { value: "none" }, "none"), choices.map((c) => h("option", { value: c }, c)));
  const legendBox = h("span", { class: "ie-legend-box" });
  const set = (choice) => {
    select.value = choice;
    const heat = heats.get(choice) || null;
    clear(legendBox);
    if (heat) legendBox.appendChild(heat.legend ? heat.legend() : heatLegend(heat.kind, heat.top));
    apply(heat);
  };
  select.addEventListener("change", () => set(select.value));
  set(choices[0]);
  return h("span", { class: "ie-colour-control" }, h("span", { class: "ie-muted" }, "colour by"), select, legendBox);
}

/** The heats a graph stage can show: time, error and stalls of `kind` nodes of graph `graph`. */
export function graphHeats(reports, graph, kind) {
  const heats = new Map();
  if (!reports) return heats;
  const times = reports.nodeTimes(graph, kind);
  if (times.size) heats.set("time", nodeHeat("time", times));
  const errors = reports.nodeErrors(graph, kind);
  if (errors.size) heats.set("error", nodeHeat("error", errors));
  const stalls = reports.nodeStalls(graph, kind);
  if (stalls.size) heats.set("stalls", nodeHeat("stalls", stalls));
  return heats;
}
