"""The Re-score tab: a run's score and errors on one gold version against another (did the
corrections fix the run's "errors", or reveal new ones?)."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from app_pages.annotate import session as S
from app_pages.annotate.context import Context, version_arg
from app_pages.common import db_path, md, run_label
from app_pages.keys import Annotate as K
from app_pages.rescoring import gold_changes

COLUMNS = ["idx", "category", "gold_label", "pred_label", "gold_text", "pred_text"]


def render(ctx: Context) -> None:
    runs = ctx.ws.runs.all(ctx.dataset_id)
    if not runs:
        st.info(f"No runs on {md(ctx.task.name)} {md(ctx.info.split)}: import a predictions file on the Runs page.")
        return
    by_id = {r.run_id: r for r in runs}
    names = ctx.version_names()
    s1, s2, s3 = st.columns([3, 1, 1])
    run_id = s1.selectbox("Run", list(by_id), format_func=lambda i: run_label(by_id[i]), key=K.RESCORE_RUN)
    base = s2.selectbox("Scored on", names, index=0, key=K.RESCORE_BASE)
    target = s3.selectbox("Re-scored on", names, index=len(names) - 1, key=K.RESCORE_TARGET)
    ch = gold_changes(db_path(), run_id, version_arg(target), version_arg(base),
                      ctx.ws.annotations.head_event(ctx.dataset_id))

    def shown(v: float | None) -> str:
        return "n/a" if v is None else f"{v:.4f}"

    m1, m2, m3 = st.columns(3)
    m1.metric(f"{md(ch.headline)} on {md(base)}", shown(ch.before))
    m2.metric(f"{md(ch.headline)} on {md(target)}", shown(ch.after),
              delta=None if ch.delta is None else f"{ch.delta:+.4f}")
    m3.metric("Examples whose errors changed", len(ch.examples))
    for title, rows in ((f"Errors that disappear on {target} ({len(ch.fixed)})", ch.fixed),
                        (f"Errors that appear on {target} ({len(ch.new)})", ch.new)):
        st.markdown(f"**{md(title)}**")
        if rows:
            frame = pd.DataFrame(rows)
            st.dataframe(frame[[c for c in COLUMNS if c in frame.columns] or list(frame.columns)],
                         hide_index=True, width="stretch")
        else:
            st.caption("none")
    if ch.examples:
        o1, o2 = st.columns([3, 1])
        pick = o1.selectbox("Open a changed example", list(ch.examples), key=K.RESCORE_PICK)
        o2.button("Open in the editor", key=K.RESCORE_OPEN, on_click=S.goto, args=(pick,))
