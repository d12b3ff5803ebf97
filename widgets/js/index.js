// Entry point of the bundle. The same file is an anywidget module (default
// export with render) and the script of the static HTML export, which marks
// its mount point with data-inductor-explorer (a trace), data-inductor-traceset
// (a multi-rank TraceSet) or data-inductor-sweep (a sweep) and carries the summary and compressed parts in
// <script type="application/json"> elements.

import { App } from "./app.js";
import { renderSessionBar } from "./sessionbar.js";
import { Store, commParts, embeddedParts } from "./store.js";
import { mountTraceSet, traceSetBar } from "./traceset.js";
import { mountSweep, sweepBar } from "./sweep.js";
import { watchWidth } from "./narrow.js";
import { commWhatIf } from "./whatif.js";
import { renderWatch } from "./watch.js";
import "./style.css";

export { Store };

/** Render a trace into `el` from a Store (summary + part source); returns the App. */
export function mount(el, store, options = {}) {
  return new App(el, store, options);
}

function same(a, b) {
  return JSON.stringify(a ?? {}) === JSON.stringify(b ?? {});
}

const BAR_TRAITS = ["toggles", "history", "current", "status", "diff"];

/**
 * anywidget: traits graph, stage, selection are synced both ways; `summary` is small and every
 * other part is asked of Python when a view needs it. A new `revision` (another compilation shown)
 * rebuilds the view with a fresh store.
 * A session bar (history, toggles, status, diff) sits above the view when Python fills those traits.
 * With `what_if_ready` the fused view offers "unfuse" (whatif.js). A WatchWidget (its `timeline` trait)
 * gets the live watch view instead (watch.js).
 */
function render({ model, el }) {
  if (model.get("timeline") !== undefined) return renderWatch({ model, el }); // a WatchWidget
  let app = null;
  let fetchPart = null;
  let whatIf = null;
  const bar = document.createElement("div");
  bar.className = "ie-sessionbar";
  const view = document.createElement("div");
  const tsBar = traceSetBar(model) || sweepBar(model); // a TraceSetWidget's pickers or a SweepWidget's table
  el.replaceChildren(...(tsBar ? [tsBar.root] : []), bar, view);
  const drawBar = () =>
    renderSessionBar(
      bar,
      {
        toggles: model.get("toggles") || [],
        history: model.get("history") || [],
        current: model.get("current"),
        status: model.get("status") || {},
        diff: model.get("diff") || {},
        narrow: el.classList.contains("ie-narrow"),
      },
      (msg) => model.send(msg),
    );
  drawBar();
  const unwatchWidth = watchWidth(el, drawBar);
  const state = () => ({ graph: model.get("graph"), stage: model.get("stage"), selection: model.get("selection") });
  const build = () => {
    if (fetchPart) fetchPart.close();
    if (whatIf) whatIf.close();
    fetchPart = commParts(model);
    whatIf = commWhatIf(model);
    app = mount(view, new Store(model.get("summary"), fetchPart), {
      initial: state(),
      whatIf,
      onState: (st) => {
        const now = state();
        if (st.graph === now.graph && st.stage === now.stage && same(st.selection, now.selection)) return;
        model.set("graph", st.graph);
        model.set("stage", st.stage);
        model.set("selection", st.selection);
        model.save_changes();
      },
    });
  };
  build();
  const onGraph = () => app.setGraph && app.setGraph(model.get("graph"), { quiet: true });
  const onStage = () => app.setStage && app.setStage(model.get("stage"), { quiet: true });
  const onSelection = () => {
    if (!app.select || same(model.get("selection"), app.selection)) return;
    app.select(model.get("selection"), { quiet: true });
  };
  model.on("change:revision", build);
  model.on("change:graph", onGraph);
  model.on("change:stage", onStage);
  model.on("change:selection", onSelection);
  for (const t of BAR_TRAITS) model.on(`change:${t}`, drawBar);
  return () => {
    if (tsBar) tsBar.dispose();
    unwatchWidth();
    for (const t of BAR_TRAITS) model.off(`change:${t}`, drawBar);
    if (fetchPart) fetchPart.close();
    if (whatIf) whatIf.close();
    model.off("change:revision", build);
    model.off("change:graph", onGraph);
    model.off("change:stage", onStage);
    model.off("change:selection", onSelection);
  };
}

/** Static page: mount every element marked data-inductor-explorer with its embedded parts. */
function autoMount() {
  if (typeof document === "undefined") return;
  for (const el of document.querySelectorAll("[data-inductor-explorer]")) {
    if (el.dataset.mounted) continue;
    const summary = document.getElementById(el.getAttribute("data-inductor-explorer"));
    const parts = document.getElementById(el.getAttribute("data-parts"));
    if (!summary || !parts) continue;
    el.dataset.mounted = "1";
    const store = new Store(JSON.parse(summary.textContent), embeddedParts(JSON.parse(parts.textContent)));
    window.inductorExplorer = mount(el, store, { standalone: true });
  }
  for (const el of document.querySelectorAll("[data-inductor-traceset]")) {
    if (el.dataset.mounted) continue;
    const summary = document.getElementById(el.getAttribute("data-inductor-traceset"));
    const parts = document.getElementById(el.getAttribute("data-parts"));
    if (!summary || !parts) continue;
    el.dataset.mounted = "1";
    window.inductorTraceSet = mountTraceSet(el, JSON.parse(summary.textContent), embeddedParts(JSON.parse(parts.textContent)), { standalone: true });
  }
  for (const el of document.querySelectorAll("[data-inductor-sweep]")) {
    if (el.dataset.mounted) continue;
    const summary = document.getElementById(el.getAttribute("data-inductor-sweep"));
    const parts = document.getElementById(el.getAttribute("data-parts"));
    if (!summary || !parts) continue;
    el.dataset.mounted = "1";
    window.inductorSweep = mountSweep(el, JSON.parse(summary.textContent), embeddedParts(JSON.parse(parts.textContent)), { standalone: true });
  }
}

autoMount();

export default { render };
