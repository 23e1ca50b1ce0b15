"""The Review queue tab: examples whose gold deserves a second look, most suspicious first."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from app_pages.annotate import session as S
from app_pages.annotate.context import Context
from app_pages.common import db_path, selected, shared_workspace
from app_pages.keys import Annotate as K


@st.cache_data(max_entries=16, show_spinner="Reading the runs and the gold…")
def queue(path: str, dataset_id: int, head_event: int, runs: tuple[int, ...]) -> list:
    """The review queue, once per gold state (``head_event``: the newest annotation event) and set
    of runs: it reads the gold and every run's predictions."""
    from cblue_core.annotation.review import review_queue

    return review_queue(shared_workspace(path).cursor(), dataset_id, limit=100)


def render(ctx: Context) -> None:
    did = ctx.dataset_id
    items = queue(db_path(), did, ctx.ws.annotations.head_event(did), tuple(r.run_id for r in ctx.ws.runs.all(did)))
    if not items:
        st.info("Nothing to review: no validation defect, no example every run gets wrong, no "
                "disagreement between runs, no mention typed inconsistently.")
        return
    st.caption("Examples whose gold deserves a second look, most suspicious first. Select a row (or "
               "pick one below) to open it in the editor.")
    frame = pd.DataFrame([{"idx": it.idx, "reason": it.reason, "score": round(it.score, 3), "detail": it.detail}
                          for it in items])
    rows = selected(st.dataframe(frame, hide_index=True, width="stretch", on_select="rerun",
                                 selection_mode="single-row", key=K.QUEUE_TABLE))
    if rows and rows != st.session_state.get(K.QUEUE_LAST):
        st.session_state[K.QUEUE_LAST] = rows
        S.goto_next_run(int(frame.iloc[rows[0]]["idx"]))
        st.rerun()
    st.session_state[K.QUEUE_LAST] = rows
    r1, r2 = st.columns([3, 1])
    choice = r1.selectbox("Item", range(len(items)), key=K.QUEUE_PICK,
                          format_func=lambda i: f"#{items[i].idx} · {items[i].reason} · {items[i].detail[:80]}")
    r2.button("Open in the editor", key=K.QUEUE_OPEN, on_click=S.goto, args=(items[choice].idx,))
