"""Triton Kernel Inspector, the web app: `streamlit run app.py`.

The page itself is `inspector/ui/page.py` (layout and routing; the panels are functions in
`inspector/ui/`). This file only makes it a Streamlit `st.App` whose lifespan starts the sandboxed
worker while the server starts, before any browser has connected: the worker's imports are the
long pole of the first compile (`inspector/ui/server.py`).
"""

import streamlit as st

from inspector.ui.server import PAGE, lifespan

app = st.App(PAGE, lifespan=lifespan)
