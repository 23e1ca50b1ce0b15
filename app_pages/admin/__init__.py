"""The Admin page: who has which role in this workspace (Users tab) and who did what (Audit
tab). Only admins see its controls; the store refuses everyone else's changes anyway."""
from __future__ import annotations

import streamlit as st

from app_pages.admin import audit_tab, users_tab
from app_pages.common import md, workspace
from app_pages.permissions import role
from cblue_core.auth.roles import Role


def render() -> None:
    st.title("Admin")
    ws = workspace()
    now = role()
    actor = ws.actor
    who = "nobody (not signed in)" if actor is None else f"{actor.name} ({actor.source})"
    st.caption(f"Signed in as {md(who)}; role: {md('none' if now is None else now.label)}.")
    if now is not Role.ADMIN:
        st.info("Only admins manage roles and read the audit trail of this workspace.")
        return
    users, audit = st.tabs(["Users", "Audit"])
    with users:
        users_tab.render(ws)
    with audit:
        audit_tab.render(ws)
