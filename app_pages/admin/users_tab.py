"""The Admin page's Users tab: the roles stored in the workspace; add, change, remove."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from app_pages.common import md, page_failure, read_only, read_only_notice
from app_pages.keys import Admin as K
from cblue_core.auth.roles import ENV_ADMINS, ROLE_NAMES, Role, configured_admins
from cblue_core.store.workspace import Workspace


def render(ws: Workspace) -> None:
    users = ws.users.all()
    admins = sorted(configured_admins())
    st.caption("A signed-in user without a stored role is a viewer. The local user and the command "
               f"line act as admins, and so do the names in ${md(ENV_ADMINS)}"
               + (f" (now: {md(', '.join(admins))})." if admins else " (none set)."))
    if users:
        st.dataframe(pd.DataFrame([{"user": u.name, "role": u.role.label, "granted by": u.granted_by,
                                    "granted at (UTC)": u.granted_at} for u in users]),
                     hide_index=True, width="stretch")
    else:
        st.caption("No roles stored yet.")
    read_only_notice("changing roles")
    off = read_only()
    c1, c2, c3 = st.columns([2, 1, 1], vertical_alignment="bottom")
    name = c1.text_input("User name", key=K.USER_NAME, disabled=off,
                         help="As the sign-in gives it (the proxy header or the OpenID Connect name).")
    chosen = c2.selectbox("Role", ROLE_NAMES, key=K.USER_ROLE, disabled=off)
    if c3.button("Set the role", key=K.SET_ROLE, type="primary", disabled=off):
        try:
            done = ws.users.set_role(name, Role.parse(chosen))
        except Exception as exc:  # noqa: BLE001 - ValueError/PermissionDenied shown; the others logged
            st.error(f"Not changed: {md(page_failure('Setting a role', exc))}")
        else:
            st.success(f"{md(done.name)} is now {md(done.role.label)}.")
    if users:
        r1, r2 = st.columns([3, 1], vertical_alignment="bottom")
        gone = r1.selectbox("Remove the role of", [u.name for u in users], key=K.REMOVE_USER, disabled=off)
        if r2.button("Remove", key=K.REMOVE, disabled=off):
            try:
                ws.users.remove(gone)
            except Exception as exc:  # noqa: BLE001 - as above
                st.error(f"Not removed: {md(page_failure('Removing a role', exc))}")
            else:
                st.success(f"{md(gone)} is a viewer again.")
