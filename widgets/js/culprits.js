// The culprit of a bisect (explorer.bisect's BisectResult.view()): one button per level that names
// something in the compilation (the setting's kernels and nodes, the fused group, the kernel, the lines).
// Selecting one lights all it names in every stage (model.js linkedCulprit); a level that names nothing
// here (the backend) is text.

import { h, clear } from "./dom.js";

/** A culprit level as a selection, with the words the side panel names it by. */
export function culpritSelection(culprits, index) {
  const c = culprits[index];
  return c ? { kind: "culprit", id: String(index), label: `${c.level} ${c.what}` } : null;
}

/** Whether level `c` names anything in a graph (a button), or is only said (text). */
function linked(c) {
  return Boolean(c.graph) && ["fx", "post_grad", "fused", "kernels", "user_lines"].some((k) => Array.isArray(c[k]) && c[k].length);
}

/** Fill `el` with the levels of `culprits`; `onPick(index)` selects one; `selected` is the index selected. */
export function renderCulpritStrip(el, culprits, { onPick, selected }) {
  clear(el);
  el.appendChild(h("span", { class: "ie-muted" }, "bisect culprit"));
  culprits.forEach((c, i) => {
    const text = [h("span", { class: "ie-muted" }, `${c.level} `), h("strong", null, c.what)];
    if (!linked(c)) {
      el.appendChild(h("span", { class: "ie-culprit ie-culprit-text", "data-level": c.level }, text));
      return;
    }
    const on = selected === i;
    el.appendChild(
      h(
        "button",
        {
          class: `ie-culprit ie-btn${on ? " ie-selected" : ""}`,
          type: "button",
          "data-level": c.level,
          "data-index": String(i),
          "aria-pressed": on ? "true" : "false",
          title: `light what ${c.level} names in ${c.graph}: its nodes, kernels and lines`,
          onclick: () => onPick(i),
        },
        text,
      ),
    );
  });
}
