// The workbench: the kernel editor (CodeMirror 6) and one to three stage panes side by side, as one
// Streamlit component (inspector/ui/workbench.py mounts it). Everything a click does happens here,
// with no server round trip: a source line lights the lines it became in every pane, a pane line its
// source line. The server is told only what it must act on: the text after a pause in typing
// ("change"), Ctrl+Enter ("submit"), a new choice of panes ("panes").
//
// Streamlit's component protocol (v1) is spoken directly: "componentReady" once, then "render"
// messages carrying the arguments; "setComponentValue" sends an event back.
import { EditorView, keymap, lineNumbers, gutter, GutterMarker, Decoration, drawSelection,
  highlightActiveLine, highlightActiveLineGutter } from "@codemirror/view";
import { EditorState, StateField, StateEffect, RangeSetBuilder, Annotation } from "@codemirror/state";
import { defaultKeymap, history, historyKeymap, indentWithTab } from "@codemirror/commands";
import { python } from "@codemirror/lang-python";
import { syntaxHighlighting, defaultHighlightStyle, indentUnit, bracketMatching } from "@codemirror/language";
import { searchKeymap, highlightSelectionMatches } from "@codemirror/search";

const SEVERITY_RANK = { error: 3, performance: 2, info: 1 };
const DEBOUNCE_MS = 300;

// ---- talking to Streamlit ------------------------------------------------------------------------
function post(type, extra) {
  window.parent.postMessage(Object.assign({ isStreamlitMessage: true, type: type }, extra), "*");
}
const mountId = Math.random().toString(36).slice(2, 10);
let eventCount = 0;
function send(event) {
  eventCount += 1;
  event.id = mountId + "-" + eventCount;
  post("streamlit:setComponentValue", { value: event, dataType: "json" });
}

// ---- state ---------------------------------------------------------------------------------------
let args = null;          // the last render's arguments
let gen = null;           // the editor generation whose seed the editor holds
let panesSig = null;      // the panes' signature last drawn
let MAPS = {}, REV = {}, MARKS = {};
let marked = [];
let pending = null;       // debounce timer of an unsent change
let sourceHits = [];      // editor lines lit by a pane click
let current = null;       // the selection as a source line {pane: "source", line}: kept across redraws
const root = document.getElementById("root");
root.innerHTML = '<div class="bar"><span class="file"></span><span class="hint">Ctrl+Enter compiles · ' +
  'click a line to see what it became</span><span class="grow"></span>' +
  '<button class="btn add" title="Add a stage pane">+ Pane</button>' +
  '<button class="btn share" title="A link holding this text, target, options and panes">Share</button>' +
  '<button class="btn compile primary" title="Compile (Ctrl+Enter)">Compile</button></div>' +
  '<div class="cols"><section class="pane source" data-pane="source"><header><span class="title">Source</span>' +
  '<span class="meta"></span><span class="count"></span><button class="icon max" title="Full width">⤢</button>' +
  '</header><div class="cm"></div></section></div><div class="sharebox" hidden><input readonly>' +
  '<button class="btn copy">Copy</button><button class="btn close">Close</button></div>' +
  '<div class="tip" hidden></div>';
const cols = root.querySelector(".cols");
const tip = root.querySelector(".tip");

// ---- the editor ----------------------------------------------------------------------------------
class Mark extends GutterMarker {
  constructor(items) { super(); this.items = items; }
  eq(other) { return other.items === this.items; }
  toDOM() {
    const el = document.createElement("span");
    el.className = "mk sev-" + worst(this.items);
    el.dataset.tip = tipText(this.items);
    el.dataset.kinds = this.items.map(function (i) { return i.kind; }).join(" ");
    setWarp(el, this.items);
    const fixable = this.items.find(function (i) { return i.fix !== undefined; });
    if (fixable) {  // a click asks the page for this finding's fixes (inspector/ui/fix_panel.py)
      el.dataset.fix = String(fixable.fix);
      el.classList.add("fixable");
      el.dataset.tip += "\n\nClick the mark: try fixes for this finding";
    }
    return el;
  }
}
// One warp's request, drawn in the hover box: its lanes above, the sectors they touch below.
function setWarp(el, items) {
  const w = items.find(function (i) { return i.warp; });
  if (w) el.dataset.warp = JSON.stringify(w.warp);
  // a measured line: a strip whose strength is its share of the stall samples (profile_markers)
  const heat = Math.max.apply(null, items.map(function (i) { return i.heat || 0; }));
  if (heat > 0) { el.classList.add("heat"); el.style.setProperty("--heat", String(0.15 + 0.85 * heat)); }
}
// One phase of a warp's shared-memory request: its lanes above, the 32 banks below, each bank as
// dark as the distinct words it must serve one after another (markers.shared_text's `picture`).
function bankDrawing(w) {
  const NS = "http://www.w3.org/2000/svg";
  const lanes = w.banks || [], depth = w.depth || [], most = Math.max.apply(null, depth.concat([1]));
  const W = 400, cell = W / Math.max(lanes.length, 1), bw = W / 32, top = 16, bottom = 62;
  const svg = document.createElementNS(NS, "svg");
  svg.setAttribute("width", String(W));
  svg.setAttribute("height", "96");
  svg.setAttribute("class", "warp");
  function add(tag, attrs, text) {
    const e = document.createElementNS(NS, tag);
    Object.keys(attrs).forEach(function (k) { e.setAttribute(k, String(attrs[k])); });
    if (text) e.textContent = text;
    svg.appendChild(e);
  }
  add("text", { x: 0, y: 11, class: "lbl" }, "lanes of one warp, phase " + w.phase + " of " + w.phases + " (" + w.bytes + " B each)");
  lanes.forEach(function (b, l) {
    if (b < 0) { add("rect", { x: l * cell + 0.5, y: top, width: Math.max(cell - 1, 1), height: 8, class: "lane off" }); return; }
    add("line", { x1: l * cell + cell / 2, y1: top + 8, x2: b * bw + bw / 2, y2: bottom, class: "wire" });
    add("rect", { x: l * cell + 0.5, y: top, width: Math.max(cell - 1, 1), height: 8, class: "lane" });
  });
  depth.forEach(function (d, b) {
    add("rect", { x: b * bw + 0.5, y: bottom, width: Math.max(bw - 1, 1), height: 10, class: "sector",
                  "fill-opacity": d ? 0.25 + 0.75 * d / most : 0.08 });
  });
  add("text", { x: 0, y: 90, class: "lbl" }, "32 banks: the busiest serves " + most + " word" + (most > 1 ? "s" : "") +
    " one after another" + (most > 1 ? " (" + most + "-way conflict)" : ""));
  return svg;
}
function warpDrawing(w) {
  if (w.banks) return bankDrawing(w);
  const NS = "http://www.w3.org/2000/svg";
  const lanes = w.lanes || [];
  const secs = Array.from(new Set(lanes.filter(function (s) { return s >= 0; }))).sort(function (a, b) { return a - b; });
  const W = 400, cell = W / Math.max(lanes.length, 1), sw = W / Math.max(secs.length, 1), top = 16, bottom = 62;
  const svg = document.createElementNS(NS, "svg");
  svg.setAttribute("width", String(W));
  svg.setAttribute("height", "96");
  svg.setAttribute("class", "warp");
  function add(tag, attrs, text) {
    const e = document.createElementNS(NS, tag);
    Object.keys(attrs).forEach(function (k) { e.setAttribute(k, String(attrs[k])); });
    if (text) e.textContent = text;
    svg.appendChild(e);
  }
  add("text", { x: 0, y: 11, class: "lbl" }, lanes.length + " lanes of one " + (w.unit || "warp") + ", its first request");
  lanes.forEach(function (s, l) {
    if (s < 0) { add("rect", { x: l * cell + 0.5, y: top, width: Math.max(cell - 1, 1), height: 8, class: "lane off" }); return; }
    const i = secs.indexOf(s);
    add("line", { x1: l * cell + cell / 2, y1: top + 8, x2: i * sw + sw / 2, y2: bottom, class: "wire" });
    add("rect", { x: l * cell + 0.5, y: top, width: Math.max(cell - 1, 1), height: 8, class: "lane" });
  });
  secs.forEach(function (s, i) { add("rect", { x: i * sw + 0.5, y: bottom, width: Math.max(sw - 1, 1), height: 10, class: "sector" }); });
  add("text", { x: 0, y: 90, class: "lbl" }, w.sectors + " sectors of " + w.bytes + " B touched, " + w.ideal + " needed" +
    (w.instructions > 1 ? " · " + w.instructions + " requests per " + (w.unit || "warp") : ""));
  return svg;
}
function worst(items) {
  let best = "info";
  for (const i of items) if ((SEVERITY_RANK[i.severity] || 0) > SEVERITY_RANK[best]) best = i.severity;
  return best;
}
function tipText(items) {
  const seen = new Set();  // one reason once, whichever verdicts give it
  return items.filter(function (i) { const fresh = !seen.has(i.text); seen.add(i.text); return fresh; })
    .map(function (i) { return "[" + i.severity + "] " + i.text; }).join("\n");
}
const setMarks = StateEffect.define();
const marksField = StateField.define({
  create() { return {}; },
  update(value, tr) {
    for (const e of tr.effects) if (e.is(setMarks)) return e.value;
    return value;
  },
});
const markGutter = gutter({
  class: "cm-marks",
  markers(view) {
    const marks = view.state.field(marksField);
    const b = new RangeSetBuilder();
    const n = view.state.doc.lines;
    Object.keys(marks).map(Number).sort(function (a, c) { return a - c; }).forEach(function (line) {
      if (line >= 1 && line <= n) { const at = view.state.doc.line(line).from; b.add(at, at, new Mark(marks[line])); }
    });
    return b.finish();
  },
  initialSpacer() { return new Mark([{ severity: "info", kind: "", text: "" }]); },
});
const setHits = StateEffect.define();
const hitLine = Decoration.line({ class: "cm-hit" });
const hitsField = StateField.define({
  create() { return Decoration.none; },
  update(deco, tr) {
    deco = deco.map(tr.changes);
    for (const e of tr.effects) if (e.is(setHits)) {
      const b = new RangeSetBuilder();
      const n = tr.state.doc.lines;
      for (const l of e.value) if (l >= 1 && l <= n) { const at = tr.state.doc.line(l).from; b.add(at, at, hitLine); }
      deco = b.finish();
    }
    return deco;
  },
  provide(f) { return EditorView.decorations.from(f); },
});

const fromServer = Annotation.define();  // a change the server made, not the user

function flush() {
  if (pending === null) return;
  clearTimeout(pending);
  pending = null;
  send({ type: "change", text: view.state.doc.toString() });
}
let lastLine = null;
const view = new EditorView({
  parent: root.querySelector(".cm"),
  state: EditorState.create({
    doc: "",
    extensions: [
      lineNumbers(), markGutter, highlightActiveLineGutter(), history(), drawSelection(), highlightActiveLine(),
      bracketMatching(), highlightSelectionMatches(), indentUnit.of("    "), EditorState.tabSize.of(4),
      python(), syntaxHighlighting(defaultHighlightStyle, { fallback: true }), marksField, hitsField,
      keymap.of([{ key: "Mod-Enter", run() { submit(); return true; } }, indentWithTab,
                 ...defaultKeymap, ...historyKeymap, ...searchKeymap]),
      EditorView.updateListener.of(function (u) {
        if (u.docChanged && !u.transactions.some(function (t) { return t.annotation(fromServer); })) {
          if (pending !== null) clearTimeout(pending);
          pending = setTimeout(flush, DEBOUNCE_MS);
          document.body.dataset.dirty = "1";
        }
        if (u.selectionSet && !u.transactions.some(function (t) { return t.annotation(fromServer); })) {
          const line = u.state.doc.lineAt(u.state.selection.main.head).number;
          if (line !== lastLine && u.transactions.some(function (t) { return t.isUserEvent("select"); })) {
            lastLine = line;
            select("source", line, false);
          }
        }
      }),
      EditorView.domEventHandlers({ blur() { flush(); } }),
    ],
  }),
});
function submit() {
  if (pending !== null) clearTimeout(pending);
  pending = null;
  send({ type: "submit", text: view.state.doc.toString() });
}
root.querySelector(".compile").addEventListener("click", submit);
root.addEventListener("mousedown", function (e) {
  const mk = e.target.closest(".mk[data-fix]");
  if (!mk) return;
  e.preventDefault();  // the editor keeps its selection
  send({ type: "fix", finding: Number(mk.dataset.fix) });
});
// Leaving the editor (a click in the sidebar, another tab, closing the page) sends what was typed.
window.addEventListener("blur", flush);
document.addEventListener("visibilitychange", flush);
window.addEventListener("pagehide", flush);
// For the browser tests and the benchmark: the editor's text, and a way to replace it as typing does.
window.tkiEditor = {
  text: function () { return view.state.doc.toString(); },
  line: function (n) { return view.state.doc.line(n).text; },
};

// ---- stage panes ---------------------------------------------------------------------------------
function paneEl(key) { return cols.querySelector('.pane[data-pane="' + key + '"]'); }
function row(pane, n) {
  const el = paneEl(pane);
  return el ? document.getElementById(el.dataset.anchor + "-L" + n) : null;
}
function clear() {
  for (const el of marked) el.classList.remove("hit", "sel");
  marked = [];
  cols.querySelectorAll(".pane .count").forEach(function (c) { c.textContent = ""; });
}
function mark(el, cls) { if (el) { el.classList.add(cls); marked.push(el); } }
function reveal(code, el) {
  const delta = el.getBoundingClientRect().top - code.getBoundingClientRect().top;
  if (delta < 0 || delta > code.clientHeight - 24) code.scrollTop += delta - code.clientHeight / 3;
}
function linesFor(pane, sources) {
  const fwd = MAPS[pane];
  if (!fwd) return [];
  const out = [];
  for (const s of sources) for (const l of (fwd[s] || [])) out.push(l);
  return out;
}
function select(pane, n, fromPane) {
  const t0 = performance.now();
  clear();
  const sources = pane === "source" ? [n] : ((REV[pane] || {})[n] || []);
  cols.querySelectorAll(".pane.stage").forEach(function (el) {
    const p = el.dataset.pane;
    const lines = linesFor(p, sources);
    let first = null;
    for (const l of lines) { const r = row(p, l); mark(r, "hit"); first = first || r; }
    // a count only where the pane has code that maps (an empty or unmapped pane has nothing to count)
    const counted = sources.length && MAPS[p] && el.querySelector(".r");
    const count = el.querySelector(".count");
    count.textContent = counted ? (lines.length ? lines.length + (lines.length === 1 ? " line" : " lines") : "no lines") : "";
    count.classList.toggle("none", Boolean(counted) && !lines.length);
    if (first && p !== pane) reveal(el.querySelector(".code"), first);
  });
  if (pane !== "source") {
    mark(row(pane, n), "sel");
    sourceHits = sources;
    view.dispatch({ effects: setHits.of(sources), annotations: fromServer.of(true) });
    if (sources.length) {
      const at = view.state.doc.line(Math.min(sources[0], view.state.doc.lines)).from;
      view.dispatch({ effects: EditorView.scrollIntoView(at, { y: "nearest" }), annotations: fromServer.of(true) });
    }
  } else if (sourceHits.length) {
    sourceHits = [];
    view.dispatch({ effects: setHits.of([]), annotations: fromServer.of(true) });
  }
  current = pane === "source" ? { pane: "source", line: n } : (sources.length ? { pane: "source", line: sources[0] } : current);
  document.body.dataset.selected = pane + ":" + n;
  document.body.dataset.sources = sources.join(",");
  document.body.dataset.selectMs = (performance.now() - t0).toFixed(1);
  try { localStorage.setItem(args.storage_key, JSON.stringify({ pane: pane, line: n })); } catch (e) { /* private mode */ }
}
cols.addEventListener("click", function (e) {
  const r = e.target.closest(".r");
  if (!r || window.getSelection().toString()) return;  // a drag that selects text is not a click
  const pane = r.closest(".pane").dataset.pane;
  select(pane, +r.id.slice(r.id.lastIndexOf("-L") + 2), true);
});

function stageOptions(current) {
  return args.available.map(function (a) {
    return '<option value="' + a.key + '"' + (a.key === current ? " selected" : "") + ">" + esc(a.title) + "</option>";
  }).join("");
}
function esc(s) { return String(s).replace(/[&<>"]/g, function (c) { return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" }[c]; }); }

function drawPanes() {
  cols.querySelectorAll(".pane.stage, .split").forEach(function (el) { el.remove(); });
  let quiet = true;
  try { quiet = localStorage.getItem("tki:quiet") !== "0"; } catch (e) { /* private mode: the default */ }
  cols.classList.toggle("quiet", quiet);
  const widths = loadWidths(args.panes.length);
  paneEl("source").style.flex = widths[0] + " 1 0";
  args.panes.forEach(function (p, i) {
    const split = document.createElement("div");
    split.className = "split";
    split.dataset.index = String(i);
    cols.appendChild(split);
    const sec = document.createElement("section");
    sec.className = "pane stage";
    sec.dataset.pane = p.key;
    sec.dataset.anchor = p.anchor;
    sec.style.flex = widths[i + 1] + " 1 0";
    sec.innerHTML = '<header><select class="stage-pick" title="Stage shown in this pane">' + stageOptions(p.key) +
      '</select><span class="meta">' + esc(p.meta) + '</span><span class="count"></span>' +
      '<input class="find" type="search" placeholder="Find" title="Find in this pane: Enter for the next match, ' +
      'Shift+Enter for the previous one"><span class="found"></span>' +
      '<button class="icon noise" title="Show or hide directives, comments and debug sections">{ }</button>' +
      '<button class="icon max" title="Full width">⤢</button>' +
      (args.panes.length > 1 ? '<button class="icon close" title="Remove this pane">×</button>' : "") +
      '</header><div class="code hl">' + (p.rows || '<div class="empty">' + esc(p.empty_note) + "</div>") + "</div>";
    cols.appendChild(sec);
  });
  // Rows that map somewhere get a coloured number, so the user sees what is clickable.
  Object.keys(REV).forEach(function (p) {
    Object.keys(REV[p]).forEach(function (l) { const el = row(p, +l); if (el) el.classList.add("mapped"); });
  });
  drawPaneMarks();
  root.querySelector(".add").disabled = args.panes.length >= args.max_panes;
}
function drawPaneMarks() {
  cols.querySelectorAll(".pane.stage .r .mk").forEach(function (el) { el.remove(); });
  Object.keys(MARKS).forEach(function (pane) {
    if (pane === "source") return;
    Object.keys(MARKS[pane]).forEach(function (l) {
      const r = row(pane, +l);
      if (!r) return;
      const items = MARKS[pane][l];
      const el = document.createElement("span");
      el.className = "mk sev-" + worst(items);
      el.dataset.tip = tipText(items);
      el.dataset.kinds = items.map(function (i) { return i.kind; }).join(" ");
      setWarp(el, items);
      r.prepend(el);
    });
  });
}
function sendPanes(keys) { send({ type: "panes", panes: keys }); }
cols.addEventListener("change", function (e) {
  if (!e.target.classList.contains("stage-pick")) return;
  const keys = args.panes.map(function (p) { return p.key; });
  const i = Array.prototype.indexOf.call(cols.querySelectorAll(".pane.stage"), e.target.closest(".pane"));
  keys[i] = e.target.value;
  sendPanes(keys);
});
cols.addEventListener("click", function (e) {
  const btn = e.target.closest("button.icon");
  if (!btn) return;
  const pane = btn.closest(".pane");
  if (btn.classList.contains("noise")) {
    // one switch for every pane: directives, comments and debug sections hidden (the default) or shown
    const quiet = cols.classList.toggle("quiet");
    try { localStorage.setItem("tki:quiet", quiet ? "1" : "0"); } catch (err) { /* private mode */ }
  } else if (btn.classList.contains("max")) {
    const on = !pane.classList.contains("maxed");
    cols.querySelectorAll(".pane").forEach(function (p) { p.classList.remove("maxed"); });
    cols.classList.toggle("has-max", on);
    if (on) pane.classList.add("maxed");
  } else if (btn.classList.contains("close")) {
    sendPanes(args.panes.map(function (p) { return p.key; }).filter(function (k) { return k !== pane.dataset.pane; }));
  }
});
root.querySelector(".add").addEventListener("click", function () {
  const keys = args.panes.map(function (p) { return p.key; });
  const next = args.available.map(function (a) { return a.key; }).find(function (k) { return keys.indexOf(k) < 0; });
  if (next) sendPanes(keys.concat([next]));
});

// Find in a pane: matching rows marked, Enter steps to the next (Shift+Enter: the previous).
function visibleRows(pane) {
  const quiet = cols.classList.contains("quiet");
  return Array.prototype.filter.call(pane.querySelectorAll(".code .r"), function (r) { return !(quiet && r.classList.contains("n")); });
}
function find(pane, step) {
  const input = pane.querySelector(".find");
  const q = input.value.toLowerCase();
  const code = pane.querySelector(".code");
  code.querySelectorAll(".r.match").forEach(function (r) { r.classList.remove("match", "match-cur"); });
  const label = pane.querySelector(".found");
  if (!q) { label.textContent = ""; pane.dataset.matches = "0"; return; }
  const hits = visibleRows(pane).filter(function (r) { return r.textContent.toLowerCase().indexOf(q) >= 0; });
  hits.forEach(function (r) { r.classList.add("match"); });
  pane.dataset.matches = String(hits.length);
  if (!hits.length) { label.textContent = "no match"; return; }
  let i = Number(pane.dataset.matchAt || "0");
  i = step === 0 ? 0 : (i + step + hits.length) % hits.length;
  pane.dataset.matchAt = String(i);
  hits[i].classList.add("match-cur");
  label.textContent = (i + 1) + " of " + hits.length;
  reveal(code, hits[i]);
}
cols.addEventListener("input", function (e) {
  if (e.target.classList.contains("find")) find(e.target.closest(".pane"), 0);
});
cols.addEventListener("keydown", function (e) {
  if (!e.target.classList.contains("find")) return;
  if (e.key === "Enter") { e.preventDefault(); find(e.target.closest(".pane"), e.shiftKey ? -1 : 1); }
  else if (e.key === "Escape") { e.target.value = ""; find(e.target.closest(".pane"), 0); }
});

// Resizing: drag a splitter; the widths (flex ratios) are kept per number of panes.
function loadWidths(n) {
  try {
    const w = JSON.parse(localStorage.getItem("tki:widths:" + n) || "null");
    if (Array.isArray(w) && w.length === n + 1) return w;
  } catch (e) { /* none kept */ }
  return [n === 1 ? 1 : 1.1].concat(Array(n).fill(n === 1 ? 1.1 : 1));
}
cols.addEventListener("mousedown", function (e) {
  const split = e.target.closest(".split");
  if (!split) return;
  e.preventDefault();
  const left = split.previousElementSibling, right = split.nextElementSibling;
  const x0 = e.clientX, lw = left.getBoundingClientRect().width, rw = right.getBoundingClientRect().width;
  const lf = parseFloat(left.style.flexGrow || "1"), rf = parseFloat(right.style.flexGrow || "1");
  function move(ev) {
    const dx = Math.max(-lw + 120, Math.min(rw - 120, ev.clientX - x0));
    left.style.flexGrow = String(lf * (lw + dx) / lw);
    right.style.flexGrow = String(rf * (rw - dx) / rw);
  }
  function up() {
    document.removeEventListener("mousemove", move);
    document.removeEventListener("mouseup", up);
    const w = Array.prototype.map.call(cols.querySelectorAll(".pane"), function (p) { return parseFloat(p.style.flexGrow); });
    try { localStorage.setItem("tki:widths:" + args.panes.length, JSON.stringify(w)); } catch (err) { /* private mode */ }
  }
  document.addEventListener("mousemove", move);
  document.addEventListener("mouseup", up);
});

// ---- hover reasons -------------------------------------------------------------------------------
// The reason's text, `code` in backticks set as code (never as markup: the text is the tool's).
function setTipText(text) {
  tip.textContent = "";
  text.split("`").forEach(function (part, i) {
    if (i % 2) { const c = document.createElement("code"); c.textContent = part; tip.appendChild(c); }
    else tip.appendChild(document.createTextNode(part));
  });
}
document.addEventListener("mouseover", function (e) {
  const el = e.target.closest("[data-tip]");
  if (!el) { tip.hidden = true; return; }
  setTipText(el.dataset.tip);
  if (el.dataset.warp) {
    try { tip.appendChild(warpDrawing(JSON.parse(el.dataset.warp))); } catch (err) { /* text alone */ }
  }
  tip.hidden = false;
  // below the line it explains (above it near the bottom), never over it
  const box = el.getBoundingClientRect();
  const below = box.bottom + 4;
  tip.style.left = Math.max(0, Math.min(box.left, window.innerWidth - 420)) + "px";
  tip.style.top = (below + tip.offsetHeight <= window.innerHeight ? below : Math.max(0, box.top - tip.offsetHeight - 4)) + "px";
});
// The mouse leaving the workbench (it is an iframe: no mouseover comes from outside) hides the box.
document.addEventListener("mouseout", function (e) { if (!e.relatedTarget) tip.hidden = true; });

// ---- share ---------------------------------------------------------------------------------------
async function deflate(text) {
  // zlib format (RFC 1950): the server decodes it with zlib.decompress.
  const stream = new Blob([new TextEncoder().encode(text)]).stream().pipeThrough(new CompressionStream("deflate"));
  const bytes = new Uint8Array(await new Response(stream).arrayBuffer());
  let bin = "";
  for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
  return btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}
function pageUrl() {
  try { return window.top.location.origin + window.top.location.pathname; } catch (e) { return document.referrer.split("?")[0]; }
}
root.querySelector(".share").addEventListener("click", async function () {
  const q = new URLSearchParams(args.share_query);
  q.set("name", args.file_name);
  q.set("src", await deflate(view.state.doc.toString()));
  const link = pageUrl() + "?" + q.toString();
  const box = root.querySelector(".sharebox");
  box.querySelector("input").value = link;
  box.hidden = false;
  box.querySelector("input").select();
  document.body.dataset.shareLink = link;
  try { await navigator.clipboard.writeText(link); } catch (e) { /* the field is selected for Ctrl+C */ }
});
root.querySelector(".sharebox .copy").addEventListener("click", function () {
  const input = root.querySelector(".sharebox input");
  input.select();
  try { navigator.clipboard.writeText(input.value); } catch (e) { document.execCommand("copy"); }
});
root.querySelector(".sharebox .close").addEventListener("click", function () {
  root.querySelector(".sharebox").hidden = true;
});

// ---- render --------------------------------------------------------------------------------------
function render(a) {
  args = a;
  tip.hidden = true;  // a redraw (a compile, a new kernel) leaves no reason standing
  root.style.height = a.height + "px";
  if (!document.body.dataset.firstRenderAt) document.body.dataset.firstRenderAt = String(performance.timeOrigin + performance.now());
  root.querySelector(".file").textContent = a.file_name;
  if (a.gen !== gen) {
    gen = a.gen;
    if (pending !== null) { clearTimeout(pending); pending = null; }
    view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: a.seed }, annotations: fromServer.of(true) });
    delete document.body.dataset.dirty;
  }
  root.querySelector(".pane.source .meta").textContent = a.source_meta || "";
  MARKS = a.markers || {};
  view.dispatch({ effects: setMarks.of(MARKS.source || {}), annotations: fromServer.of(true) });
  if (a.panes_sig !== panesSig) {
    panesSig = a.panes_sig;
    MAPS = a.maps || {};
    REV = {};
    Object.keys(MAPS).forEach(function (pane) {
      const rev = {};
      Object.keys(MAPS[pane]).forEach(function (src) {
        MAPS[pane][src].forEach(function (line) { (rev[line] = rev[line] || []).push(+src); });
      });
      REV[pane] = rev;
    });
    drawPanes();
    // When these panes were first painted (epoch ms): what the browser benchmarks measure up to.
    requestAnimationFrame(function () {
      setTimeout(function () { document.body.dataset.paintedAt = String(performance.timeOrigin + performance.now()); }, 0);
    });
    // What to select after a redraw: the page's request ("Show line N"), else what this view had
    // selected (a target switch keeps the line the cursor is on), else what was stored for the kernel.
    let initial = a.initial || current;
    if (!initial) {
      try { initial = JSON.parse(localStorage.getItem(a.storage_key) || "null"); } catch (e) { initial = null; }
    }
    if (initial && (initial.pane === "source" || row(initial.pane, initial.line))) {
      select(initial.pane, initial.line, true);
      if (initial !== current && initial.pane === "source" && initial.line <= view.state.doc.lines) {
        const at = view.state.doc.line(initial.line).from;
        // the page's request puts the cursor there; a redraw leaves the user's cursor where it is
        view.dispatch(Object.assign(a.initial ? { selection: { anchor: at } } : {},
                                    { effects: EditorView.scrollIntoView(at, { y: "center" }), annotations: fromServer.of(true) }));
        if (a.initial) lastLine = initial.line;
      }
    }
    if (a.initial) {
      // asked from below the workbench (Insight's "Show line N"): bring the workbench itself on screen
      try { window.frameElement.scrollIntoView({ block: "nearest" }); } catch (e) { /* not same-origin */ }
      document.body.dataset.focusedLine = String(a.initial.line);
    }
  } else {
    drawPaneMarks();
  }
  document.body.dataset.gen = String(gen);
  document.body.dataset.ready = "1";
  document.body.dataset.panes = a.panes.map(function (p) { return p.key; }).join(",");
  post("streamlit:setFrameHeight", { height: a.height + 4 });
}
window.addEventListener("message", function (e) {
  if (e.data && e.data.type === "streamlit:render") render(e.data.args);
});
post("streamlit:componentReady", { apiVersion: 1 });
