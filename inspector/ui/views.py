"""The views below the workbench (Insight, Occupancy, ...) as browser-side tabs.

Every view is drawn on each run of the page and the browser switches between them itself, so a
tab switch costs no server rerun (it computes nothing new: each view draws the record the page
already holds; what a view computes on request, a benchmark or a fix search, waits for its own
button). The chosen view stays in the URL (`view=`, for reloads and share links) through a small
script: Streamlit's tabs without a rerun do not tell the server, so the script writes the URL and
the server reads it back on the next run (`sync_from_url`)."""

from __future__ import annotations

import json

import streamlit as st

from inspector.record import Inspection
from inspector.ui import state
from inspector.ui.settings import VIEWS

VIEW_TITLES = {"insight": "Insight", "occupancy": "Occupancy", "autotune": "Autotune grid", "diff": "Diff",
               "benchmarks": "Benchmarks", "profile": "Profile", "fits": "Every GPU"}
TABS_KEY = "views"  # the tabs' container is `.st-key-views`

# The URL's `view=` follows the selected tab (none for the first): written when a tab becomes the
# selected one, and kept whenever Streamlit itself rewrites the URL (a rerun that was in flight when the tab was
# clicked writes the server's older idea of the view: the selected tab, read from the page, wins).
_URL_SCRIPT = """<script>
(() => {
  if (window.__tkiViews) return;
  window.__tkiViews = true;
  const names = %s, first = %s, tabs = ".st-key-%s [role=tab]";
  function selected() {
    const tab = document.querySelector(tabs + "[aria-selected=true]");
    return tab ? names[tab.innerText.trim()] : null;
  }
  function withView(url) {
    const view = selected();
    if (!view || url === undefined || url === null) return url;
    const u = new URL(url, window.location.href);
    if (view === first) u.searchParams.delete("view"); else u.searchParams.set("view", view);
    return u.toString();
  }
  for (const name of ["replaceState", "pushState"]) {
    const original = window.history[name].bind(window.history);
    window.history[name] = function (state, title, url) { return original(state, title, withView(url)); };
  }
  // Whenever a tab becomes the selected one (a click, or the server choosing another): however long
  // the page takes to show it, the URL follows. Tabs re-made by a rerun arrive as new nodes, not as
  // a changed attribute: any change is checked against the URL (one query; written only if it differs).
  new MutationObserver(() => {
    const here = window.location.href;
    if (selected() && withView(here) !== new URL(here).toString()) {
      window.history.replaceState(window.history.state, "", here);
    }
  }).observe(document.body, { subtree: true, childList: true, attributes: true, attributeFilter: ["aria-selected"] });
})();
</script>"""


def sync_from_url() -> None:
    """The view the browser shows, as its URL says (a tab switch changed it without a rerun)."""
    view = str(st.query_params.get("view") or VIEWS[0])
    if view in VIEWS:
        state.settings().view = view


def panel(view: str):
    """The panel function of a view, imported when first drawn (plotly and the analysis load then)."""
    if view == "occupancy":
        from inspector.ui.occupancy_panel import occupancy_panel as fn
    elif view == "autotune":
        from inspector.ui.autotune_panel import autotune_panel as fn
    elif view == "diff":
        from inspector.ui.diff_panel import diff_panel as fn
    elif view == "benchmarks":
        from inspector.ui.bench_panel import bench_panel as fn
    elif view == "profile":
        from inspector.ui.profile_panel import profile_panel as fn
    elif view == "fits":
        from inspector.ui.fits_panel import fits_panel as fn
    else:
        from inspector.ui.insight_panel import insight_panel
        from inspector.ui.pair_panel import pair_panel

        def fn(rec):  # a teaching pair's two halves side by side, then the shown record's insight
            pair_panel(rec)
            insight_panel(rec)
    return fn


def views(rec: Inspection) -> None:
    """Every view of `rec` in its tab, the URL's view selected."""
    titles = [VIEW_TITLES[v] for v in VIEWS]
    tabs = st.tabs(titles, default=VIEW_TITLES[state.settings().view], key=TABS_KEY)
    for view, tab in zip(VIEWS, tabs):
        with tab:
            panel(view)(rec)
    names = json.dumps({VIEW_TITLES[v]: v for v in VIEWS})
    st.html(_URL_SCRIPT % (names, json.dumps(VIEWS[0]), TABS_KEY), unsafe_allow_javascript=True, width=1)
