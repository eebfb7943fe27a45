"""The web app as an installed package runs it (`triton-inspector app`): the same `st.App` as the
checkout's app.py. Streamlit finds the app by reading this file (`app = st.App(...)` must stay
written out here), then imports it; the page is `inspector/ui/page.py`, the worker started by the
lifespan while the server starts (`inspector/ui/server.py`)."""

import streamlit as st

from inspector.ui.server import PAGE, lifespan

app = st.App(PAGE, lifespan=lifespan)
