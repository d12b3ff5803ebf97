// Marks on the browser's performance timeline (performance.mark) where a first view spends its time:
// part requested, part arrived, graph grouped, laid out, drawn. Off unless the page sets
// `globalThis.inductorExplorerMarks = true` (benchmarks/render.py --marks does, and prints them).

export function mark(name) {
  if (globalThis.inductorExplorerMarks) performance.mark(`ie:${name}`);
}
