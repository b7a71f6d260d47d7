"""The counterexample viewer's inline CSS and script: draws the laid-out JSON as SVG.

Hover an op for its times and the state after it; click to pin it, click again to unpin.
"""

CSS = """
body { font: 14px sans-serif; margin: 1em 1.5em; color: #222; }
h2 { font-size: 18px; margin: .2em 0 .4em; }
p { margin: .3em 0; max-width: 70em; }
.legend { display: flex; flex-wrap: wrap; gap: .3em 1.2em; margin: .5em 0; font-size: 13px; }
.legend svg { vertical-align: middle; margin-right: 4px; }
#panel { position: sticky; top: 0; z-index: 1; background: #f6f8fa; border: 1px solid #d0d7de;
         padding: .4em .7em; min-height: 4.2em; font-size: 13px; }
#panel.pinned { border-color: #0969da; box-shadow: 0 0 0 1px #0969da; }
#panel div { margin: .15em 0; }
#scroll { overflow-x: auto; border: 1px solid #eee; margin-top: .5em; }
svg text { font: 12px "DejaVu Sans Mono", "Liberation Mono", Menlo, Consolas, monospace; }
.label { fill: #fff; pointer-events: none; }
.label.concurrent { fill: #111; }
.name { fill: #444; }
.tick, .flabel { fill: #333; }
.box { cursor: pointer; }
.box.failing { stroke: #7a0d0e; stroke-width: 2; }
.box.pinned { stroke: #000; stroke-width: 3; }
svg.focus .box:not(.hl), svg.focus .oplabel:not(.hl) { opacity: .35; }
.fault { fill: #f4a261; fill-opacity: .35; stroke: #e76f51; }
.lin { fill: none; stroke: #0b3d91; stroke-width: 1.5; opacity: .8; pointer-events: none; }
.attempt { stroke: #d62728; stroke-width: 2; stroke-dasharray: 4 3; pointer-events: none; }
.dot { fill: #0b3d91; pointer-events: none; }
"""

SCRIPT = """
"use strict";
(function () {
const D = JSON.parse(document.getElementById("data").textContent);
const L = D.layout, NS = "http://www.w3.org/2000/svg";
const BOX_H = D.box_h, FAULT_H = D.fault_h, PAD = D.pad, NAME_W = D.name_w;
const COLOURS = {failing: "#d62728", prefix: "#1f77b4", concurrent: "#c9c9c9"};
function el(name, attrs, parent, text) {
  const node = document.createElementNS(NS, name);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (text !== undefined) node.textContent = text;
  parent.appendChild(node);
  return node;
}
const svg = el("svg", {width: L.width, height: L.height, id: "chart"},
               document.getElementById("scroll"));
const defs = el("defs", {}, svg);
for (const [role, colour] of Object.entries(COLOURS)) {
  const p = el("pattern", {id: "hatch-" + role, width: 8, height: 8,
    patternUnits: "userSpaceOnUse", patternTransform: "rotate(45)"}, defs);
  el("rect", {width: 8, height: 8, fill: colour, "fill-opacity": 0.55}, p);
  el("line", {x1: 0, y1: 0, x2: 0, y2: 8, stroke: colour, "stroke-width": 5}, p);
}
const arrow = el("marker", {id: "arrow", viewBox: "0 0 10 10", refX: 9, refY: 5,
  markerWidth: 7, markerHeight: 7, orient: "auto"}, defs);
el("path", {d: "M0,0 L10,5 L0,10 z", fill: "#0b3d91"}, arrow);
for (const f of L.faults) {
  const y = f.row * FAULT_H + 2;
  const band = el("rect", {class: "fault", x: f.x0, y: y, width: f.x1 - f.x0,
    height: FAULT_H - 4}, svg);
  el("title", {}, band, f.label);
  el("text", {class: "label flabel", x: f.x0 + PAD, y: y + FAULT_H / 2 - 1,
    "dominant-baseline": "central"}, svg, (f.open_left ? "◀ " : "") + f.label);
}
const boxes = el("g", {}, svg), path = el("g", {}, svg), labels = el("g", {}, svg);
const rects = [], texts = [];
L.ops.forEach((op, i) => {
  const crashed = op.ret_s === null;
  const r = el("rect", {class: "box " + op.role, x: op.x0, y: op.y,
    width: Math.max(op.x1 - op.x0, 2), height: BOX_H, rx: 3, "data-index": op.index,
    fill: crashed ? "url(#hatch-" + op.role + ")" : COLOURS[op.role]}, boxes);
  if (crashed) {  // open-ended: no right edge, it never returned
    const w = op.x1 - op.x0;
    r.setAttribute("rx", 0);
    r.setAttribute("stroke", "#333");
    r.setAttribute("stroke-dasharray", [w, BOX_H, w + BOX_H, 0].join(" "));
  }
  r.addEventListener("mouseover", () => show(i));
  r.addEventListener("mouseout", () => (pinned === null ? reset() : show(pinned)));
  r.addEventListener("click", () => pin(i));
  rects.push(r);
  texts.push(el("text", {class: "label oplabel " + op.role, x: op.x0 + PAD, y: op.y + BOX_H / 2,
    "dominant-baseline": "central", "data-index": op.index}, labels, op.label));
});
if (L.lin.length > 1) {
  el("polyline", {class: "lin", points: L.lin.map(p => p.x + "," + p.y).join(" "),
    "marker-mid": "url(#arrow)", "marker-end": "url(#arrow)"}, path);
}
for (const p of L.lin) el("circle", {class: "dot", cx: p.x, cy: p.y, r: 3}, path);
if (L.attempt) {
  const from = L.lin.length ? L.lin[L.lin.length - 1] : L.attempt;
  el("line", {class: "attempt", x1: from.x, y1: from.y, x2: L.attempt.x,
    y2: L.attempt.y}, path);
  el("path", {class: "attempt", d: "M" + (L.attempt.x - 5) + "," + (L.attempt.y - 5) +
    " l10,10 m0,-10 l-10,10"}, path);
}
el("line", {x1: NAME_W, y1: L.axis_y, x2: L.width, y2: L.axis_y, stroke: "#888"}, svg);
for (const t of L.ticks) {
  const tick = el("line", {x1: t.x, y1: L.axis_y, x2: t.x, y2: L.axis_y + 5,
    stroke: "#888"}, svg);
  el("title", {}, tick, t.title);
  if (t.label) el("text", {class: "label tick", x: t.x, y: L.axis_y + 17,
    "text-anchor": "middle"}, svg, t.label);
}
const names = el("g", {}, svg);
el("rect", {width: NAME_W, height: L.height, fill: "#fff"}, names);
el("text", {class: "label name", x: 4, y: FAULT_H / 2, "dominant-baseline": "central"},
   names, "nemesis");
for (const lane of L.lanes) el("text", {class: "label name", x: 4, y: lane.y,
  "dominant-baseline": "central"}, names, lane.name);
el("text", {class: "label name", x: 4, y: L.axis_y + 17}, names, "test s");
if (L.fault_note) el("text", {class: "label flabel", x: NAME_W + PAD, y: FAULT_H / 2,
  "dominant-baseline": "central"}, names, L.fault_note);  // in view however scrolled
const scroll = document.getElementById("scroll");
scroll.addEventListener("scroll", () =>
  names.setAttribute("transform", "translate(" + scroll.scrollLeft + ",0)"));

const panel = document.getElementById("panel");
const what = document.getElementById("what"), times = document.getElementById("times");
const state = document.getElementById("state");
let pinned = null;
function secs(s) { return s.toFixed(3) + " s"; }
function show(i) {
  const op = L.ops[i];
  what.textContent = "op " + op.index + " · process " + op.process + " · " + op.text +
    " · " + op.type + (pinned === i ? " · pinned (click it again to unpin)" : "");
  times.textContent = "called at " + secs(op.call_s) + ", " + (op.ret_s === null
    ? "never returned: crashed, it may take effect at any later time or never"
    : "returned at " + secs(op.ret_s) + " (" + ((op.ret_s - op.call_s) * 1e3).toFixed(1) +
      " ms)");
  if (op.role === "failing") {
    state.textContent = "cannot be linearized: " + D.message + ". After the prefix the " +
      "state could only have been: " + D.states;
  } else if (op.role === "prefix") {
    state.textContent = "linearized " + op.lin + " of " + D.prefix_length +
      "; state after it: " + (op.state === null ? "not recorded" : op.state);
  } else {
    state.textContent = "not in the longest linearizable prefix (concurrent with the " +
      "failing op)";
  }
  svg.classList.add("focus");
  const upTo = op.role === "failing" ? Infinity : op.lin;  // the prefix up to this op
  L.ops.forEach((o, j) => {
    const lit = j === i || (upTo !== null && o.lin !== null && o.lin <= upTo);
    rects[j].classList.toggle("hl", lit);
    texts[j].classList.toggle("hl", lit);
  });
}
function reset() {
  what.textContent = "Hover over an op for its call and return times and the state " +
    "after it; click to pin it, click again to unpin.";
  times.textContent = "";
  state.textContent = "";
  svg.classList.remove("focus");
}
function pin(i) {
  pinned = pinned === i ? null : i;
  rects.forEach((r, j) => r.classList.toggle("pinned", j === pinned));
  panel.classList.toggle("pinned", pinned !== null);
  if (pinned === null) reset(); else show(pinned);
}
reset();
const failing = L.ops.find(o => o.role === "failing");
if (failing && failing.x1 > scroll.clientWidth) {  // bring the failing op into view
  scroll.scrollLeft = failing.x1 - scroll.clientWidth * 0.8;
}
})();
"""
