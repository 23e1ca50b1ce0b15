"""The visitor of this session as a :class:`cblue_core.auth.User`: every page asks here, never
a free-text box."""
from __future__ import annotations

import streamlit as st

from app_pages.keys import Sidebar
from cblue_core.auth import User, local_user


def current_user() -> User:
    typed = (st.session_state.get(Sidebar.USER_NAME) or "").strip()
    return User(typed, "typed") if typed else local_user()
