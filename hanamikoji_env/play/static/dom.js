// DOM helpers: every value from the server is set as text, never as HTML.
import { facts, label, plural } from "./words.js";

export const $ = (id) => document.getElementById(id);

export function el(tag, attrs = {}, children = []) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "text") node.textContent = v;
    else if (k === "class") node.className = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice("on".length), v);
    else node.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children) node.append(c);
  return node;
}

// A geisha's colour on a node, as a CSS variable (the stylesheet decides where it shows)
export function tint(node, g) {
  node.style.setProperty("--gc", facts.geishas[g].colour);
  return node;
}

export function card(g, attrs = {}) {
  const button = Boolean(attrs.onclick);
  return tint(el(button ? "button" : "div", { class: "card", "data-geisha": g, type: button ? "button" : null, title: label(g), ...attrs },
    [el("span", { class: "band" }), el("span", { class: "charm-badge", text: String(facts.geishas[g].charm) }), el("span", { class: "g", text: facts.geishas[g].name })]), g);
}

// A side's cards of geisha g: n of them, the last `arrived` just placed (drawn moving in)
export function stack(n, who, g, arrived = 0) {
  return el("div", { class: `stack ${who}`, title: `${plural(n, "card")} of ${facts.geishas[g].name}` },
    [...Array.from({ length: n }, (_, i) => tint(el("span", { class: i >= n - arrived ? "mini arrived" : "mini" }), g)), n ? el("span", { class: "count", text: String(n) }) : ""]);
}
