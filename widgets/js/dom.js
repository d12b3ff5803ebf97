// DOM helpers. Every string that comes from a trace reaches the page through
// textContent, createTextNode or setAttribute: nothing here parses HTML, so a
// name like "<img onerror=...>" is shown as text and never runs.

const SVG_NS = "http://www.w3.org/2000/svg";

/** Append children (strings become text nodes; null/false are skipped). */
function append(node, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(node, child);
    else if (child instanceof Node) node.appendChild(child);
    else node.appendChild(document.createTextNode(String(child)));
  }
  return node;
}

function setAttrs(node, attrs) {
  if (!attrs) return node;
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") node.setAttribute("class", value);
    else if (key === "dataset") Object.assign(node.dataset, value);
    else if (key.startsWith("on") && typeof value === "function") node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  return node;
}

/** h("div", {class: "x"}, "text", child) -> HTMLElement */
export function h(tag, attrs, ...children) {
  return append(setAttrs(document.createElement(tag), attrs), children);
}

/** s("rect", {...}) -> SVGElement */
export function s(tag, attrs, ...children) {
  return append(setAttrs(document.createElementNS(SVG_NS, tag), attrs), children);
}

export function clear(node) {
  while (node.firstChild) node.removeChild(node.firstChild);
  return node;
}

export function text(value) {
  return document.createTextNode(value === null || value === undefined ? "" : String(value));
}
