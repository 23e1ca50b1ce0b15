"""CBLUE Studio served to visitors: ``streamlit run serve.py`` (same options as ``app.py``).

The same app as ``streamlit run app.py``, whose script it runs for every visitor, with one
difference: the pages' modules are imported and the workspace opened while the server starts
(Streamlit's ``st.App`` lifespan), so the first visitor after a restart does not wait for them
(:mod:`app_pages.warm_up`), and unusable sign-in settings (``$CBLUE_STUDIO_AUTH``) stop the
server with their message instead of greeting every visitor with it.
"""
from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import streamlit as st

from app_pages.warm_up import import_pages, open_workspace, prepare_caches
from cblue_core.auth.identity import identity_config


@asynccontextmanager
async def warm_up(_app: st.App) -> AsyncIterator[None]:
    identity_config(os.environ)     # unusable sign-in settings stop the server, not the first visitor
    import_pages()
    prepare_caches()
    open_workspace()
    yield


app = st.App(Path(__file__).with_name("app.py"), lifespan=warm_up)
