// Source <-> IR linking, entirely in the browser: a click on a row highlights, in every pane, the
// rows that come from the same source line(s). MAPS[pane][sourceLine] = [pane lines] is embedded
// by inspector/ui/panes.py; the reverse maps are built here once.
(function () {
  const MAPS = JSON.parse(document.getElementById("tki-maps").textContent);
  const CONF = JSON.parse(document.getElementById("tki-conf").textContent);
  const panes = {};
  document.querySelectorAll(".pane").forEach(function (el) {
    panes[el.dataset.pane] = { el: el, code: el.querySelector(".code"), anchor: el.dataset.anchor,
                               count: el.querySelector(".count") };
  });
  const REV = {};
  Object.keys(MAPS).forEach(function (pane) {
    const rev = {};
    const fwd = MAPS[pane];
    Object.keys(fwd).forEach(function (src) {
      fwd[src].forEach(function (line) { (rev[line] = rev[line] || []).push(+src); });
    });
    REV[pane] = rev;
  });
  let marked = [];

  function row(pane, n) { return document.getElementById(panes[pane].anchor + "-L" + n); }
  function clear() {
    for (const el of marked) el.classList.remove("hit", "sel");
    marked = [];
    for (const p in panes) if (panes[p].count) panes[p].count.textContent = "";
  }
  function mark(el, cls) { if (el) { el.classList.add(cls); marked.push(el); } }
  function reveal(pane, el) {
    // Scroll only the pane, never the page around the frame.
    const code = panes[pane].code;
    const delta = el.getBoundingClientRect().top - code.getBoundingClientRect().top;
    if (delta < 0 || delta > code.clientHeight - 24) code.scrollTop += delta - code.clientHeight / 3;
  }
  function linesFor(pane, sources) {
    if (pane === "source") return sources;
    const fwd = MAPS[pane];
    if (!fwd) return [];
    const out = [];
    for (const s of sources) for (const l of (fwd[s] || [])) out.push(l);
    return out;
  }
  function select(pane, n, scrollOrigin) {
    const t0 = performance.now();
    clear();
    const sources = pane === "source" ? [n] : ((REV[pane] || {})[n] || []);
    for (const p in panes) {
      const lines = linesFor(p, sources);
      let first = null;
      for (const l of lines) { const el = row(p, l); mark(el, "hit"); first = first || el; }
      if (panes[p].count) panes[p].count.textContent = sources.length ? lines.length + " lines" : "";
      if (first && (p !== pane || scrollOrigin)) reveal(p, first);
    }
    const origin = row(pane, n);
    mark(origin, "sel");
    if (scrollOrigin && origin) reveal(pane, origin);
    document.body.dataset.selected = pane + ":" + n;
    document.body.dataset.sources = sources.join(",");
    document.body.dataset.selectMs = (performance.now() - t0).toFixed(1);
    try { localStorage.setItem(CONF.storageKey, JSON.stringify({ pane: pane, line: n })); } catch (e) { /* private mode */ }
  }

  // Rows that map somewhere get a coloured number, so the user sees what is clickable.
  for (const p in panes) {
    if (p === "source") {
      const covered = new Set();
      Object.keys(MAPS).forEach(function (q) { Object.keys(MAPS[q]).forEach(function (s) { covered.add(+s); }); });
      covered.forEach(function (s) { const el = row(p, s); if (el) el.classList.add("mapped"); });
    } else if (REV[p]) {
      Object.keys(REV[p]).forEach(function (l) { const el = row(p, +l); if (el) el.classList.add("mapped"); });
    }
  }

  document.addEventListener("click", function (e) {
    const r = e.target.closest(".r");
    if (!r || window.getSelection().toString()) return;  // a drag that selects text is not a click
    const pane = r.closest(".pane").dataset.pane;
    select(pane, +r.id.slice(r.id.lastIndexOf("-L") + 2), false);
  });

  let initial = CONF.initial;
  if (!initial) {
    try { initial = JSON.parse(localStorage.getItem(CONF.storageKey) || "null"); } catch (e) { initial = null; }
  }
  if (initial && panes[initial.pane] && row(initial.pane, initial.line)) select(initial.pane, initial.line, true);
  document.body.dataset.ready = "1";
  // When the panes were first painted (epoch ms): what the browser benchmark measures up to.
  requestAnimationFrame(function () {
    setTimeout(function () { document.body.dataset.paintedAt = String(performance.timeOrigin + performance.now()); }, 0);
  });
})();
