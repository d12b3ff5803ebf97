// The live watch view (widgets/watch_widget.py): a watched loop's step timeline with its compiles,
// recompiles and graph breaks marked at their step, the list of those events, the picked event's
// detail (reason, failed guard, file:line, the value that broke it), the compiled frames and, under CUDA
// graphs (mode="reduce-overhead"), what the CUDA graph tree did in each step.
// Python sends the traits (contract.WatchPayload, built by compiler/io/watch.py) a few times a second
// while the loop runs; each change redraws the view, which is small (at most a few hundred bars, one row
// per event and frame).

import { h, s, clear } from "./dom.js";
import "./watch.css";

const list = (value) => (Array.isArray(value) ? value : []);
const num = (v) => (typeof v === "number" && Number.isFinite(v) ? v : null);
const KIND_LABEL = { compile: "compile", recompile: "recompile", break: "graph break" };
const WIDTH = 1000; // the timeline's viewBox width; bars share it
const HEIGHT = 120;

function fmtMs(v) {
  if (num(v) === null) return "–";
  return v >= 1000 ? `${(v / 1000).toFixed(2)} s` : v >= 10 ? `${v.toFixed(1)} ms` : `${v.toFixed(3)} ms`;
}

const where = (e) => (e.file ? `${e.file}${e.line ? `:${e.line}` : ""}` : "");

/** The bar (index into bars) holding step `step`; past the last bar for a step not closed yet. */
function barOf(bars, step) {
  let lo = 0;
  let hi = bars.length - 1;
  if (!bars.length || step > bars[hi][1]) return bars.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (bars[mid][1] < step) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The timeline: one bar per step (or per run of steps), height on a log scale, events as marks. */
function timeline(tl, events, selected, pick) {
  const bars = list(tl.bars);
  const slots = Math.max(bars.length + 1, 20); // room for a mark in the step still running
  const w = WIDTH / slots;
  const top = Math.max(...bars.map((b) => b[3]), 0.001);
  const y = (ms) => HEIGHT * (Math.log1p(ms) / Math.log1p(top));
  const svg = s(
    "svg",
    { class: "ie-watch-timeline", viewBox: `0 0 ${WIDTH} ${HEIGHT}`, preserveAspectRatio: "none", role: "img", "aria-label": "step timeline" },
    bars.map((b, i) => {
      const height = Math.max(1, y(b[2]));
      return s(
        "rect",
        { class: "ie-watch-bar", x: i * w, y: HEIGHT - height, width: Math.max(w * 0.8, 0.5), height, "data-step": b[0] },
        s("title", null, `${b[0] === b[1] ? `step ${b[0]}` : `steps ${b[0]}–${b[1]}`}: ${fmtMs(b[2])}${b[0] === b[1] ? "" : ` mean, ${fmtMs(b[3])} slowest`}`),
      );
    }),
    events
      .filter((e) => num(e.step) !== null)
      .map((e) =>
        s(
          "rect",
          {
            class: `ie-watch-mark ie-watch-${e.kind}${e.id === selected ? " ie-selected" : ""}`,
            x: barOf(bars, e.step) * w,
            y: 0,
            width: Math.max(w * 0.8, 3),
            height: HEIGHT,
            "data-kind": e.kind,
            "data-id": e.id,
            "data-step": e.step,
            onclick: () => pick(e.id),
          },
          s("title", null, `${KIND_LABEL[e.kind] ?? e.kind} ${e.id} at step ${e.step}${e.reason ? `: ${e.reason}` : ""}`),
        ),
      ),
  );
  const per = tl.per_bar > 1 ? `, ${tl.per_bar} steps a bar` : "";
  return h(
    "div",
    { class: "ie-watch-tlbox" },
    h("div", { class: "ie-muted" }, `${tl.steps ?? 0} steps${per} · time per step, log scale, slowest ${fmtMs(top)} · `,
      ["compile", "recompile", "break"].map((k) => h("span", { class: `ie-watch-key ie-watch-${k}` }, KIND_LABEL[k]))),
    svg,
  );
}

function eventTable(events, selected, pick) {
  if (!events.length) return h("p", { class: "ie-muted" }, "Nothing compiled yet.");
  return h(
    "table",
    { class: "ie-table ie-watch-events" },
    h("thead", null, h("tr", null, ["step", "event", "", "function", "reason", "line"].map((c) => h("th", null, c)))),
    h(
      "tbody",
      null,
      events.map((e) =>
        h(
          "tr",
          { class: `ie-watch-event${e.id === selected ? " ie-selected" : ""}`, "data-id": e.id, "data-kind": e.kind, tabindex: "0", onclick: () => pick(e.id), onkeydown: (ev) => ev.key === "Enter" && pick(e.id) },
          h("td", null, num(e.step) === null ? "" : String(e.step)),
          h("td", null, h("span", { class: `ie-badge ie-watch-${e.kind}` }, KIND_LABEL[e.kind] ?? e.kind)),
          h("td", null, e.id),
          h("td", null, String(e.function ?? "")),
          h("td", { class: "ie-watch-reason" }, e.kind === "compile" ? (e.skipped ? `skipped: ${e.skipped}` : "(first compile)") : String(e.reason ?? "")),
          h("td", null, where(e)),
        ),
      ),
    ),
  );
}

function detail(event) {
  if (!event) return h("div", { class: "ie-watch-detail ie-muted" }, "Click an event (a mark on the timeline or a row) for its reason, guard, line and value.");
  const kv = (key, value) => (value === null || value === undefined || value === "" ? null : h("div", { class: "ie-kv", "data-field": key }, h("span", { class: "ie-k" }, key), h("span", { class: "ie-v" }, String(value))));
  const cache = Object.entries(event.cache || {}).map(([k, v]) => `${k} ${v}`).join(", ");
  return h(
    "div",
    { class: "ie-watch-detail", "data-id": event.id },
    h("strong", null, `${KIND_LABEL[event.kind] ?? event.kind} ${event.id}`),
    kv("function", event.function),
    kv("step", event.step),
    kv("reason", event.kind === "compile" ? "first compile of this frame" : event.reason),
    kv("guard", event.guard),
    kv("line", where(event)),
    kv("value", event.value),
    kv("compile s", num(event.seconds) === null ? null : event.seconds.toFixed(2)),
    kv("cache", cache),
    kv("fired", event.count),
    kv("skipped", event.skipped),
  );
}

function frameTable(frames) {
  if (!frames.length) return null;
  const graphed = frames.some((f) => f.cudagraph_replays || f.cudagraph_skips); // a run under CUDA graphs
  const cols = ["frame", "function", "defined", "calls", "est. time", "compiles", "recompiles", "breaks"];
  if (graphed) cols.push("CUDA graph replays", "skips");
  return h(
    "table",
    { class: "ie-table ie-watch-frames" },
    h("thead", null, h("tr", null, cols.map((c) => h("th", null, c)))),
    h(
      "tbody",
      null,
      frames.map((f) =>
        h(
          "tr",
          { "data-frame": f.frame },
          h("td", null, String(f.frame)),
          h("td", null, String(f.function ?? "")),
          h("td", null, where(f)),
          h("td", { "data-col": "calls" }, String(f.calls ?? 0)),
          h("td", null, fmtMs(f.ms)),
          h("td", null, String(f.compiles ?? 0)),
          h("td", { "data-col": "recompiles" }, String(f.recompiles ?? 0)),
          h("td", null, String(f.breaks ?? 0)),
          graphed ? h("td", { "data-col": "cudagraph_replays" }, String(f.cudagraph_replays ?? 0)) : null,
          graphed ? h("td", { "data-col": "cudagraph_skips" }, String(f.cudagraph_skips ?? 0)) : null,
        ),
      ),
    ),
  );
}

/** The CUDA graph tree's events, one row per step, graph function and kind (replays counted). */
function cudagraphTable(events) {
  if (!events.length) return null;
  const cols = ["step", "compile", "function", "CUDA graph tree", "times", "reason"];
  return h(
    "div",
    { class: "ie-watch-cudagraphs" },
    h("strong", null, "CUDA graphs"),
    h(
      "table",
      { class: "ie-table" },
      h("thead", null, h("tr", null, cols.map((c) => h("th", null, c)))),
      h(
        "tbody",
        null,
        events.map((e) =>
          h(
            "tr",
            { "data-kind": e.kind, "data-step": e.step, "data-compile": e.compile },
            h("td", null, String(e.step)),
            h("td", null, String(e.compile ?? "")),
            h("td", null, String(e.function ?? "")),
            h("td", null, h("span", { class: "ie-badge" }, String(e.kind ?? ""))),
            h("td", { "data-col": "count" }, String(e.count ?? 1)),
            h("td", { class: "ie-watch-reason" }, String(e.reason ?? "")),
          ),
        ),
      ),
    ),
  );
}

/** anywidget render for a WatchWidget: redrawn whenever Python sends new traits or an event is picked. */
export function renderWatch({ model, el }) {
  const root = h("div", { class: "ie-watchview" });
  el.replaceChildren(root);
  const pick = (id) => {
    model.set("selected", id === model.get("selected") ? "" : id);
    model.save_changes();
    draw();
  };
  const draw = () => {
    const head = model.get("headline") || {};
    const tl = model.get("timeline") || {};
    const events = list(model.get("events"));
    const selected = model.get("selected") || "";
    const active = Boolean(model.get("active"));
    root.dataset.steps = String(tl.steps ?? 0);
    root.dataset.active = active ? "true" : "false";
    const parts = [
      h(
        "div",
        { class: "ie-watch-head" },
        h("span", { class: `ie-badge ie-watch-state${active ? " ie-watch-running" : ""}` }, active ? "running" : "ended"),
        " ",
        h("span", { class: "ie-watch-summary" }, String(head.summary ?? "")),
        head.step_rule ? h("span", { class: "ie-muted ie-watch-rule" }, ` · steps: ${head.step_rule}`) : null,
      ),
      head.error ? h("div", { class: "ie-error" }, `The loop raised ${head.error}; what ran before it is shown.`) : null,
      timeline(tl, events, selected, pick),
      h("div", { class: "ie-watch-body" }, h("div", { class: "ie-watch-list" }, eventTable(events, selected, pick)), detail(events.find((e) => e.id === selected))),
      frameTable(list(model.get("frames"))),
      cudagraphTable(list(model.get("cudagraphs"))),
    ];
    clear(root).append(...parts.filter(Boolean));
  };
  draw();
  const traits = ["headline", "timeline", "events", "frames", "cudagraphs", "active", "selected"];
  for (const t of traits) model.on(`change:${t}`, draw);
  return () => {
    for (const t of traits) model.off(`change:${t}`, draw);
  };
}
