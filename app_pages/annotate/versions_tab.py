"""The Versions tab: named snapshots of a split's gold, and the differences between two."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from app_pages.annotate import session as S
from app_pages.annotate.actions import failure
from app_pages.annotate.context import Context, show_annotation, version_arg
from app_pages.common import md, selected
from app_pages.keys import Annotate as K
from app_pages.permissions import allowed, why_not
from cblue_core.annotation.changes import change_summary


def render(ctx: Context) -> None:
    _create(ctx)
    versions = ctx.ws.annotations.versions(ctx.dataset_id)
    if versions:
        st.dataframe(pd.DataFrame([{"name": v.name, "author": v.author, "created": v.created_at,
                                    "last event": v.last_event_id, "edited examples": v.edited}
                                   for v in versions]), hide_index=True, width="stretch")
    else:
        st.caption("No named versions yet.")
    _differences(ctx)


def _create(ctx: Context) -> None:
    v1, v2 = st.columns([3, 1])
    usable = allowed("gold.version")
    name = v1.text_input("Name of a new snapshot of the current gold", key=K.VERSION_NAME,
                         placeholder="e.g. reviewed-2024-06", disabled=not usable)
    if v2.button("Create version", key=K.VERSION_CREATE, disabled=not usable,
                 help=md(why_not("gold.version"))) and usable:
        try:
            made = ctx.ws.annotations.create_version(ctx.dataset_id, name)
        except Exception as exc:  # noqa: BLE001 - ValueError: refused; the others are logged
            st.error(f"Not created: {md(failure('Creating a version', exc))}")
        else:
            st.success(f"Created version {md(repr(made.name))} (events up to #{made.last_event_id:d}).")


def _differences(ctx: Context) -> None:
    names = ctx.version_names()
    st.markdown("**Differences between two versions**")
    d1, d2 = st.columns(2)
    va = d1.selectbox("From", names, index=0, key=K.DIFF_FROM)
    vb = d2.selectbox("To", names, index=len(names) - 1, key=K.DIFF_TO)
    diffs = ctx.ws.annotations.diff_versions(ctx.dataset_id, version_arg(va), version_arg(vb))
    if not diffs:
        st.info(f"No example differs between {md(va)} and {md(vb)}.")
        return
    frame = pd.DataFrame([{"idx": x.idx, "change": change_summary(x.before, x.after, ctx.task)} for x in diffs])
    rows = selected(st.dataframe(frame, hide_index=True, width="stretch", on_select="rerun",
                                 selection_mode="single-row", key=K.DIFF_TABLE))
    pick = st.selectbox("Show an example", [x.idx for x in diffs], key=K.DIFF_PICK)
    if rows:
        pick = int(frame.iloc[rows[0]]["idx"])
    diff = next(x for x in diffs if x.idx == pick)
    ex = ctx.ws.datasets.example(ctx.dataset_id, pick)
    p1, p2 = st.columns(2)
    with p1:
        st.markdown(f"**{md(va)}**")
        show_annotation(ex, diff.before, ctx.task)
    with p2:
        st.markdown(f"**{md(vb)}**")
        show_annotation(ex, diff.after, ctx.task)
    st.button("Open this example in the editor", key=K.DIFF_OPEN, on_click=S.goto, args=(pick,))
