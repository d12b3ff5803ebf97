// Narrow layout. JupyterLab's side panel and a split notebook give the view a few hundred pixels:
// below NARROW_PX the graph and the linked pane stack (style.css, `.ie-narrow`), lists and their
// detail panes stack, and the session bar folds its toggles away. A ResizeObserver rather than a
// media query, because what matters is the width of the view, not of the window.

export const NARROW_PX = 700;

/**
 * Keep class `ie-narrow` on `el` while it is narrower than NARROW_PX; `onChange(narrow)` runs when
 * that flips (and once at the start). Returns a function that stops watching.
 */
export function watchWidth(el, onChange = () => {}) {
  let narrow = null;
  const check = (width) => {
    if (!width) return; // not laid out (a hidden tab): keep the last answer
    const now = width < NARROW_PX;
    if (now === narrow) return;
    narrow = now;
    el.classList.toggle("ie-narrow", now);
    onChange(now);
  };
  if (typeof ResizeObserver === "undefined") return () => {};
  const observer = new ResizeObserver((records) => check(records[records.length - 1].contentRect.width));
  observer.observe(el);
  check(el.getBoundingClientRect().width);
  return () => observer.disconnect();
}
