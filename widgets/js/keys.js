// Keyboard navigation. A list (kernels, loop-IR nodes, fused groups) is one tab stop: the list
// itself holds the focus and points at its cursor row with aria-activedescendant, because the rows
// of a virtual list come and go as it scrolls and a focused row would be lost with them. Arrows
// move the cursor, Enter selects the row under it. In a graph, arrows select the next node in the
// graph's order. On the whole view: "/" focuses the search box, Esc clears the selection.

let nextListId = 0;

const EDITABLE = new Set(["INPUT", "TEXTAREA", "SELECT"]);

/** True when keys typed at `target` are text for it, not commands for us. */
export function isEditable(target) {
  return Boolean(target && (EDITABLE.has(target.tagName) || target.isContentEditable));
}

/** How far a key moves a cursor in a list of `count` rows that shows `page` rows at a time. */
function step(key, index, count, page) {
  switch (key) {
    case "ArrowDown": return Math.min(count - 1, index + 1);
    case "ArrowUp": return Math.max(0, index - 1);
    case "PageDown": return Math.min(count - 1, index + page);
    case "PageUp": return Math.max(0, index - page);
    case "Home": return 0;
    case "End": return count - 1;
    default: return null;
  }
}

export class ListNav {
  /**
   * @param {import("./virtual.js").VirtualList} vlist
   * @param {string[]} ids  the id shown by each row
   * @param {(id: string) => void} pick  what Enter does with the row under the cursor
   * @param {() => number} current  the row the cursor starts on (the selected one), -1 for none
   */
  constructor(vlist, ids, pick, current) {
    this.vlist = vlist;
    this.ids = ids;
    this.pick = pick;
    this.current = current;
    this.cursor = -1;
    this.prefix = `ie-list${nextListId++}-row`;
    const root = vlist.root;
    root.tabIndex = 0;
    root.setAttribute("role", "listbox");
    vlist.decorators.push((i, el) => this._decorate(i, el));
    for (const [i, el] of vlist.rows) this._decorate(i, el);
    root.addEventListener("focus", () => {
      if (this.cursor < 0 && ids.length) this.moveTo(Math.max(0, this.current()));
    });
    root.addEventListener("keydown", (ev) => this._key(ev));
    // A click on a row puts the cursor there, so arrows continue from what was clicked.
    root.addEventListener("click", (ev) => {
      const row = ev.target.closest ? ev.target.closest("[data-row]") : null;
      if (row) this.moveTo(Number(row.dataset.row), { scroll: false });
    });
  }

  _decorate(i, el) {
    el.id = `${this.prefix}${i}`;
    el.dataset.row = String(i);
    el.setAttribute("role", "option");
    el.classList.toggle("ie-cursor", i === this.cursor);
    // The list is the tab stop: buttons inside rows stay clickable but out of the tab order.
    if (el.tagName === "BUTTON") el.tabIndex = -1;
    for (const b of el.querySelectorAll("button")) b.tabIndex = -1;
  }

  moveTo(index, { scroll = true } = {}) {
    if (index < 0 || index >= this.ids.length) return;
    const old = this.vlist.row(this.cursor);
    if (old) old.classList.remove("ie-cursor");
    this.cursor = index;
    if (scroll) this.vlist.scrollIntoView(index);
    const el = this.vlist.row(index);
    if (el) el.classList.add("ie-cursor");
    this.vlist.root.setAttribute("aria-activedescendant", `${this.prefix}${index}`);
  }

  _key(ev) {
    if (ev.target !== this.vlist.root || ev.altKey || ev.ctrlKey || ev.metaKey) return;
    if (ev.key === "Enter" || ev.key === " ") {
      if (this.cursor >= 0) this.pick(this.ids[this.cursor]);
    } else {
      const page = Math.max(1, Math.floor((this.vlist.root.clientHeight || 600) / this.vlist.rowHeight) - 1);
      const to = step(ev.key, this.cursor < 0 ? Math.max(0, this.current()) : this.cursor, this.ids.length, page);
      if (to === null) return;
      this.moveTo(to);
    }
    ev.preventDefault();
    ev.stopPropagation();
  }
}

/**
 * Arrow keys on a focused graph select the next (down, right) or previous (up, left) node in the
 * order of the graph's node list, which is the program's order.
 * @param {Element} target  the focusable element of the graph view
 * @param {string[]} names  node names in order
 * @param {() => string|null} selected  the selected node's name
 * @param {(name: string) => void} pick
 */
export function bindGraphKeys(target, names, selected, pick) {
  target.setAttribute("tabindex", "0");
  target.setAttribute("aria-keyshortcuts", "ArrowDown ArrowUp ArrowRight ArrowLeft");
  target.addEventListener("keydown", (ev) => {
    if (ev.altKey || ev.ctrlKey || ev.metaKey || !names.length) return;
    const forward = ev.key === "ArrowDown" || ev.key === "ArrowRight";
    const back = ev.key === "ArrowUp" || ev.key === "ArrowLeft";
    if (!forward && !back) return;
    const at = names.indexOf(selected());
    const to = at < 0 ? 0 : Math.max(0, Math.min(names.length - 1, at + (forward ? 1 : -1)));
    pick(names[to]);
    ev.preventDefault();
    ev.stopPropagation();
  });
}

/**
 * Keys for the whole view: "/" focuses the search box (when no text field has the focus), Esc
 * clears the selection. On a standalone page "/" also works before anything was clicked.
 * @param {{root: HTMLElement, search: {focus: () => void}, select: (sel: object|null) => Promise<void>}} app
 */
export function bindViewKeys(app, { standalone = false } = {}) {
  const onKey = (ev) => {
    if (ev.altKey || ev.ctrlKey || ev.metaKey || ev.defaultPrevented) return;
    if (ev.key === "/" && !isEditable(ev.target)) {
      app.search.focus();
    } else if (ev.key === "Escape" && app.selection) {
      app.select(null);
      if (isEditable(ev.target)) ev.target.blur();
    } else return;
    ev.preventDefault();
    ev.stopPropagation();
  };
  // Clicks on the view's background focus the root, so its keys work without a prior Tab.
  app.root.tabIndex = -1;
  // JupyterLab leaves keys typed inside the view to it (arrows, Enter, "/" are notebook commands too).
  app.root.setAttribute("data-lm-suppress-shortcuts", "true");
  app.root.addEventListener("keydown", onKey);
  if (standalone) {
    document.addEventListener("keydown", (ev) => {
      if (ev.target === document.body || ev.target === document.documentElement) onKey(ev);
    });
  }
}
