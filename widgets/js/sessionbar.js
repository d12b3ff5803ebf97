// The session bar above the explorer view: the history of compilations, the
// toggle panel, a status line and the diff against the previous compilation.
// It only shows traits and sends requests ({type: "toggle"} / {type: "select"} / {type: "repro"});
// Python compiles and pushes the new payload, diff and status back.

import { h, clear } from "./dom.js";

const STATUS_TEXT = { busy: "compiling…", error: "error", idle: "" };

function valueText(v) {
  return v === null || v === undefined ? "–" : typeof v === "string" ? v : JSON.stringify(v);
}

function historyPicker(state, send) {
  if (!state.history.length) return null;
  const select = h(
    "select",
    { class: "ie-history", "aria-label": "compilation history" },
    state.history.map((e) => h("option", { value: String(e.index) }, e.label)),
  );
  select.value = String(state.current);
  select.addEventListener("change", () => send({ type: "select", index: Number(select.value) }));
  return h("label", { class: "ie-history-label" }, h("span", { class: "ie-muted" }, "compilation "), select);
}

function togglePanel(state, send) {
  if (!state.toggles.length) return null;
  const busy = state.status.state === "busy";
  const items = state.toggles.map((t) => {
    const id = `ie-toggle-${t.name}`;
    const isBool = typeof t.default === "boolean" || typeof t.value === "boolean";
    const input = h("input", {
      type: "checkbox",
      id,
      "data-toggle": t.name,
      disabled: busy || !t.available || !isBool,
    });
    input.checked = Boolean(t.value);
    input.addEventListener("change", () => send({ type: "toggle", name: t.name, value: input.checked }));
    const changed = t.value !== t.default;
    return h(
      "label",
      { class: `ie-toggle${changed ? " ie-toggle-changed" : ""}`, title: t.description + (t.available ? "" : " (not in this torch)") },
      input,
      " ",
      t.name,
    );
  });
  const fieldset = h("fieldset", { class: "ie-toggles", "aria-label": "toggles" }, h("legend", { class: "ie-muted" }, "toggles"), items);
  // Narrow (a side panel): the toggles fold into a disclosure that says how many differ from the
  // defaults. Wide: always open, the summary hidden (style.css).
  const changed = state.toggles.filter((t) => t.value !== t.default).length;
  return h(
    "details",
    { class: "ie-toggles-box", open: state.togglesOpen ?? !state.narrow },
    h("summary", null, `toggles${changed ? ` (${changed} changed)` : ""}`),
    fieldset,
  );
}

function reproButton(state, send) {
  if (!state.history.length) return null; // a session's view: Python can write files for it
  const busy = state.status.state === "busy";
  return h(
    "button",
    {
      class: "ie-repro",
      type: "button",
      disabled: busy,
      title: "write a standalone script of the selected kernel, or of the graph shown (repros/)",
      onclick: () => send({ type: "repro" }),
    },
    "reproducer",
  );
}

function statusLine(state) {
  const st = state.status || {};
  const kind = st.state || "idle";
  return h("div", { class: "ie-status", "data-state": kind, role: "status" }, st.message || STATUS_TEXT[kind] || "");
}

function kernelRow(k) {
  const side = (id, lang) => (id ? `${id} (${lang})` : "–");
  return h(
    "li",
    { class: `ie-diff-kernel ie-diff-${k.status}`, "data-status": k.status },
    h("strong", null, k.status),
    " ",
    side(k.a, k.a_language),
    " → ",
    side(k.b, k.b_language),
    h("span", { class: "ie-muted" }, ` · ${k.nodes.join(", ")}`),
    k.source_diff && k.status === "changed"
      ? h("details", null, h("summary", null, "source diff"), h("pre", { class: "ie-code ie-diff-src" }, k.source_diff))
      : null,
  );
}

export function diffBlock(state) {
  const d = state.diff;
  if (!d || !d.summary) return null;
  const kernels = [];
  for (const g of d.graphs || []) for (const k of g.kernels || []) if (k.status !== "same") kernels.push(kernelRow(k));
  const counts = [];
  for (const g of d.graphs || []) {
    for (const c of g.counts || []) if (c.a !== c.b) counts.push(`${g.graph} ${c.stage}: ${c.a} → ${c.b}`);
  }
  return h(
    "details",
    { class: "ie-diff", open: true },
    h("summary", null, h("strong", null, "diff "), `${d.a} → ${d.b}`),
    h("div", { class: "ie-diff-summary" }, d.summary),
    counts.length ? h("div", { class: "ie-diff-counts ie-muted" }, counts.join(" · ")) : null,
    kernels.length ? h("ul", { class: "ie-diff-kernels" }, kernels) : h("div", { class: "ie-muted" }, "no kernel changed"),
  );
}

/** Render the bar into `el` from the current `state`; `send(msg)` reaches Python. */
export function renderSessionBar(el, state, send) {
  // A redraw in the same layout keeps the toggles' disclosure as the user left it.
  const box = el.querySelector(".ie-toggles-box");
  const sameLayout = el.classList.contains("ie-bar-narrow") === Boolean(state.narrow);
  if (box && sameLayout && state.narrow) state = { ...state, togglesOpen: box.open };
  el.classList.toggle("ie-bar-narrow", Boolean(state.narrow));
  clear(el);
  const parts = [historyPicker(state, send), togglePanel(state, send), reproButton(state, send), statusLine(state), diffBlock(state)].filter(Boolean);
  el.hidden = !(state.history.length || state.toggles.length || (state.diff && state.diff.summary) || (state.status && state.status.message));
  for (const p of parts) el.appendChild(p);
}
