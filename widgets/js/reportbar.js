// The summary strip's part about runs: the profile's total time and the numerics verdict, each with
// a picker when the trace holds several, and the first divergent kernel as a badge that selects it.

import { h, clear } from "./dom.js";
import { formatMs } from "./heat.js";

function picker(kind, reports, current, onPick) {
  const labels = reports.labels(kind);
  if (labels.length < 2) return null;
  const select = h("select", { class: `ie-report-picker ie-pick-${kind}`, "aria-label": kind === "profile" ? "profile" : "numerics report" }, labels.map(([i, text]) => h("option", { value: String(i) }, text)));
  select.value = String(current);
  select.addEventListener("change", () => onPick(kind, Number(select.value)));
  return select;
}

/**
 * Fill `el` with the runs of `reports` (reports.js). `onPick(kind, index)` shows another profile or
 * report; `goKernel(graph, kernel)` selects a kernel of any graph.
 */
export function renderReportStrip(el, reports, { onPick, goKernel }) {
  clear(el);
  const item = (cls, ...children) => h("span", { class: `ie-sum-item ${cls}` }, children);
  if (reports.hasTime) {
    el.appendChild(item("ie-sum-profile", h("span", { class: "ie-muted" }, "profile"), " ", h("strong", null, `${formatMs(reports.totalMs)} ms`), h("span", { class: "ie-muted" }, " per run"), " ", picker("profile", reports, reports.profileIdx, onPick)));
  }
  if (reports.hasError) {
    const first = reports.firstDivergent;
    el.appendChild(
      item(
        "ie-sum-numerics",
        h("span", { class: "ie-muted" }, `numerics vs ${reports.report.reference ?? "eager"}`),
        " ",
        first
          ? h("button", { class: "ie-badge ie-first-divergent ie-first-divergent-btn", type: "button", "data-kernel": first.kernel, "data-graph": first.graph ?? "", title: "select the first kernel whose own (local) error leaves tolerance", onclick: () => goKernel(first.graph, first.kernel) }, `first divergent: ${first.kernel}`)
          : reports.accumulated
            ? h("button", { class: "ie-badge ie-accumulated-btn", type: "button", "data-kernel": reports.accumulated.kernel, "data-graph": reports.accumulated.graph, title: "no kernel's own error leaves tolerance; select the first kernel the accumulated (propagated) error leaves it at", onclick: () => goKernel(reports.accumulated.graph, reports.accumulated.kernel) }, `no kernel's own error leaves tolerance · accumulated: ${reports.accumulated.kernel}`)
            : h("strong", { class: "ie-numerics-ok" }, "all kernels within tolerance"),
        " ",
        picker("numerics", reports, reports.numericsIdx, onPick),
      ),
    );
  }
}
