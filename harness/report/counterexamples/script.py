"""The counterexample viewer's inline CSS and script: draws the laid-out JSON as SVG.

Hover an op for its times and the states before and after it; click to pin it, click again
to unpin. The switcher's links (#anchor) draw another key; a label whose box runs past the
left edge of the view slides along its box so it stays readable.
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
#keys { display: flex; flex-wrap: wrap; gap: .3em .6em; align-items: baseline;
        margin: 0 0 .6em; font-size: 13px; }
#keys a { padding: .1em .5em; border: 1px solid #d0d7de; border-radius: 3px;
          text-decoration: none; color: #0969da; font-family: monospace; }
#keys a.current { background: #d62728; border-color: #d62728; color: #fff; }
.label.caption { fill: #555; font-style: italic; }
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
const NS = "http://www.w3.org/2000/svg";
const BOX_H = D.box_h, FAULT_H = D.fault_h, PAD = D.pad, NAME_W = D.name_w;
const COLOURS = {failing: "#d62728", prefix: "#1f77b4", concurrent: "#c9c9c9"};
const scroll = document.getElementById("scroll");
const panel = document.getElementById("panel");
const what = document.getElementById("what"), times = document.getElementById("times");
const before = document.getElementById("before"), state = document.getElementById("state");
let K = null, L = null, svg = null, names = null, rects = [], texts = [], sliding = [];
let pinned = null;
function el(name, attrs, parent, text) {
  const node = document.createElementNS(NS, name);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (text !== undefined) node.textContent = text;
  parent.appendChild(node);
  return node;
}
function draw() {
  scroll.replaceChildren();
  rects = []; texts = []; sliding = [];
  svg = el("svg", {width: L.width, height: L.height, id: "chart"}, scroll);
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
    const text = el("text", {class: "label flabel", x: f.x0 + PAD, y: y + FAULT_H / 2 - 1,
      "dominant-baseline": "central"}, svg, (f.open_left ? "◀ " : "") + f.label);
    sliding.push({text: text, x0: f.x0, x1: f.x1, overflows: true});
  }
  const boxes = el("g", {}, svg), path = el("g", {}, svg), labels = el("g", {}, svg);
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
    const text = el("text", {class: "label oplabel " + op.role, x: op.x0 + PAD,
      y: op.y + BOX_H / 2, "dominant-baseline": "central", "data-index": op.index},
      labels, op.label);
    texts.push(text);
    sliding.push({text: text, x0: op.x0, x1: op.x1});
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
  names = el("g", {}, svg);
  el("rect", {width: NAME_W, height: L.height, fill: "#fff"}, names);
  el("text", {class: "label name", x: 4, y: FAULT_H / 2, "dominant-baseline": "central"},
     names, "nemesis");
  for (const lane of L.lanes) el("text", {class: "label name", x: 4, y: lane.y,
    "dominant-baseline": "central"}, names, lane.name);
  el("text", {class: "label name", x: 4, y: L.axis_y + 17}, names,
     L.axis === "order" ? "order" : "test s");
  el("text", {class: "label caption", x: NAME_W + PAD, y: L.axis_y + 38}, names,
     L.axis_caption);  // in view however scrolled, as the names are
  if (L.fault_note) el("text", {class: "label flabel", x: NAME_W + PAD, y: FAULT_H / 2,
    "dominant-baseline": "central"}, names, L.fault_note);
  const failing = L.ops.find(o => o.role === "failing");
  scroll.scrollLeft = failing && failing.x1 > scroll.clientWidth  // the failing op in view
    ? failing.x1 - scroll.clientWidth * 0.8 : 0;
  follow();
}
// The names stay at the left edge of the view; a label whose box starts left of the names
// column slides right along its box (never past its right end), so it is never cut off.
// Where even the part of the box in view is too narrow for its label, the label is cut
// short at its end ("…") to fit that part, or hidden when not a character fits.
function follow() {
  const left = scroll.scrollLeft;
  names.setAttribute("transform", "translate(" + left + ",0)");
  for (const s of sliding) {
    if (s.full === undefined) {
      s.full = s.text.textContent;
      s.width = s.text.getComputedTextLength();
    }
    // A fault's label may run past its band's end (the layout kept room for it there).
    const end = s.overflows ? Math.max(s.x1, s.x0 + 2 * PAD + s.width) : s.x1;
    const start = Math.max(s.x0, left + NAME_W) + PAD, room = end - PAD - start;
    let text = s.full;
    if (room < s.width) {
      const fits = Math.floor(room / (s.width / s.full.length)) - 1;
      text = fits > 0 ? s.full.slice(0, fits) + "…" : "";
    }
    s.text.textContent = text;
    s.text.setAttribute("x", start);
  }
}
scroll.addEventListener("scroll", follow);

function when(seconds, n) {
  return L.axis === "order" ? "at " + n + " in order" : "at " + seconds.toFixed(3) + " s";
}
function show(i) {
  const op = L.ops[i];
  what.textContent = "op " + op.index + " · process " + op.process + " · " + op.text +
    " · " + op.type + (pinned === i ? " · pinned (click it again to unpin)" : "");
  times.textContent = "called " + when(op.call_s, op.call_n) + ", " +
    (op.ret_s === null
      ? "never returned: crashed, it may take effect at any later time or never"
      : "returned " + when(op.ret_s, op.ret_n) + (L.axis === "order" ? ""
        : " (" + ((op.ret_s - op.call_s) * 1e3).toFixed(1) + " ms)"));
  if (op.role === "failing") {
    before.textContent = "state before: " + K.states;
    state.textContent = "state after: none, it cannot be linearized: " + K.message;
  } else if (op.role === "prefix") {
    before.textContent = "state before: " + (op.before === null
      ? "not kept (the report keeps the prefix's last ops)" : op.before);
    state.textContent = "state after: " + (op.state === null ? "not recorded" : op.state) +
      " (linearized " + op.lin + " of " + K.prefix_length + ")";
  } else {
    before.textContent = "";
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
  what.textContent = "Hover over an op for its call and return times and the states " +
    "before and after it; click to pin it, click again to unpin.";
  times.textContent = "";
  before.textContent = "";
  state.textContent = "";
  svg.classList.remove("focus");
}
function pin(i) {
  pinned = pinned === i ? null : i;
  rects.forEach((r, j) => r.classList.toggle("pinned", j === pinned));
  panel.classList.toggle("pinned", pinned !== null);
  if (pinned === null) reset(); else show(pinned);
}
// The key the address names (#anchor), else the first.
function open() {
  const wanted = decodeURIComponent(location.hash.slice(1));
  K = D.keys.find(k => k.anchor === wanted) || D.keys[0];
  L = K.layout;
  pinned = null;
  panel.classList.remove("pinned");
  for (const k of D.keys) {
    document.querySelector('section[data-anchor="' + k.anchor + '"]').hidden = k !== K;
  }
  for (const a of document.querySelectorAll("#keys a")) {
    a.classList.toggle("current", a.getAttribute("href") === "#" + K.anchor);
  }
  document.title = K.title;
  draw();
  reset();
}
window.addEventListener("hashchange", () => { open(); window.scrollTo(0, 0); });
window.addEventListener("load", () => window.scrollTo(0, 0));  // the switcher in view
open();
})();
"""
