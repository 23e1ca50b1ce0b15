"""Saved slices: SQL predicates over the example columns, their scores, and their errors."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from app_pages import url_state
from app_pages.common import db_path, md, read_only_notice
from app_pages.errors_tabs import derived
from app_pages.errors_tabs.state import seen_filter, select_filter
from app_pages.keys import Errors as K
from app_pages.keys import Param
from app_pages.permissions import allowed, why_not
from cblue_core.auth import PermissionDenied
from cblue_core.store.slices import SliceError


def render(ws, run) -> None:
    st.caption("A slice is a SQL predicate over the example columns (idx, text, label, n_spans, "
               "nesting_depth, text_length, …), saved by name and reusable on every run of the task.")
    c1, c2 = st.columns([1, 3])
    sname = c1.text_input("Slice name", key=K.SLICE_NAME)
    spred = c2.text_input("Predicate", key=K.SLICE_PREDICATE, placeholder="nesting_depth >= 2")
    read_only_notice("saving slices")
    if st.button("Save slice", key=K.SLICE_SAVE, disabled=not allowed("slice.save"), help=md(why_not("slice.save"))):
        try:
            ws.slices.save(sname, spred, run.task)
            st.success(f"Saved slice {md(repr(sname))}")
        except (SliceError, PermissionDenied) as exc:
            st.error(f"Not saved: {md(exc)}")
    saved = ws.slices.all(run.task)
    if not saved:
        return
    headline = run.metrics.get("headline", "score")
    table = derived.slice_table(db_path(), run.run_id, tuple((s.name, s.predicate) for s in saved), seen_filter())
    st.dataframe(pd.DataFrame([{
        "slice": s.name, "predicate": s.predicate, "examples": s.examples, headline: s.value,
        "95% CI": None if s.low is None else f"{s.low:.4f} – {s.high:.4f}", "error": s.error}
        for s in table]), hide_index=True, width="stretch")
    names = [s.name for s in saved]
    url_state.seed(K.SLICE, Param.SLICE, url_state.one_of(names))
    chosen = st.selectbox("List the errors of a slice", ["(none)"] + names, key=K.SLICE)
    if chosen != "(none)":
        url_state.show({Param.SLICE: chosen})
        pred_txt = next(s.predicate for s in saved if s.name == chosen)
        try:
            select_filter({"slice": chosen, "idx_in": tuple(ws.slices.indices(run.dataset_id, pred_txt))})
        except SliceError as exc:
            st.error(f"The slice cannot be used: {md(exc)}")
