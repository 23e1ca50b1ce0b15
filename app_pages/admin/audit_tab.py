"""The Admin page's Audit tab: who did what and when, newest first, with filters."""
from __future__ import annotations

import datetime as dt

import pandas as pd
import streamlit as st

from app_pages.keys import Admin as K
from cblue_core.store.audit import OUTCOMES, AuditFilter
from cblue_core.store.workspace import Workspace

ANY = "(any)"
SHOWN = 500


def render(ws: Workspace) -> None:
    c1, c2, c3, c4 = st.columns(4)
    user = c1.selectbox("User", [ANY, *ws.audit.users()], key=K.AUDIT_USER)
    action = c2.selectbox("Action", [ANY, *ws.audit.actions()], key=K.AUDIT_ACTION)
    outcome = c3.selectbox("Outcome", [ANY, *OUTCOMES], key=K.AUDIT_OUTCOME)
    days = c4.date_input("Dates (UTC)", value=(), key=K.AUDIT_DATES)
    since, until = _range(days)
    events = ws.audit.events(AuditFilter(user=None if user == ANY else user,
                                         action=None if action == ANY else action,
                                         outcome=None if outcome == ANY else outcome,
                                         since=since, until=until, limit=SHOWN))
    if not events:
        st.caption("No audit events match.")
        return
    st.caption(f"{len(events):,} events, newest first" + (f" (the latest {SHOWN:,})" if len(events) == SHOWN else ""))
    # A dataframe shows its cells as text, never as Markdown or HTML: data needs no escaping here.
    st.dataframe(pd.DataFrame([{"at (UTC)": e.at, "user": e.user or "(nobody)", "source": e.source or "",
                                "action": e.action, "outcome": e.outcome, "target": e.target, "detail": e.detail}
                               for e in events]), hide_index=True, width="stretch")
    refused = sum(e.outcome == "refused" for e in events)
    if refused:
        st.caption(f"{refused:,} refused attempts among them (filter the outcome to see only those).")


def _range(days: object) -> tuple[str | None, str | None]:
    """A date_input's value (nothing, one day or a range) as [since, until) timestamps."""
    picked = [d for d in (days if isinstance(days, (tuple, list)) else (days,)) if isinstance(d, dt.date)]
    if not picked:
        return None, None
    first, last = min(picked), max(picked)
    return first.isoformat(), (last + dt.timedelta(days=1)).isoformat()
