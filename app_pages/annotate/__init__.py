"""Annotate: correct the gold of one example at a time (entity spans, CMeIE triples, labels,
CHIP-CDN terms), with every saved edit kept as an event (who, when, why); named gold versions,
a review queue, agreement between annotators, re-scoring runs on corrected gold, and export.

URL query parameters ``task``, ``split`` and ``example`` open one example, as on Datasets.

This module draws what every tab shares (the task and split, the span editor's pending action,
messages) and the tabs, one module each; only the open tab runs. The session's drafts and their
life across reloads are in :mod:`.session`, what a click does in :mod:`.actions`. Nothing here
writes SQL or parses files: widgets -> ``cblue_core`` -> rendering. In read-only mode
(``CBLUE_STUDIO_READONLY=1``) every control that would write is disabled.
"""
from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from app_pages import url_state
from app_pages.annotate import actions as A
from app_pages.annotate import (
    agreement_tab,
    edit_tab,
    export_tab,
    rescore_tab,
    review_tab,
    versions_tab,
)
from app_pages.annotate import session as S
from app_pages.annotate.context import Context
from app_pages.common import md, read_only, read_only_notice, user_name
from app_pages.components.span_editor import editor_value
from app_pages.keys import Annotate as K
from app_pages.keys import Param
from app_pages.permissions import allowed, why_not
from cblue_core.annotation.model import annotation_field
from cblue_core.store.datasets import DatasetInfo
from cblue_core.tasks import REGISTRY, get_task

TAB_NAMES = ("Edit", "Versions", "Review queue", "Agreement", "Re-score", "Export")
TABS: dict[str, Callable[[Context], None]] = dict(zip(TAB_NAMES, (
    edit_tab.render, versions_tab.render, review_tab.render, agreement_tab.render, rescore_tab.render,
    export_tab.render)))
KIND_NAMES = {"spans": "entity spans", "triples": "CMeIE triples", "label": "label",
              "terms": "normalised ICD-10 terms"}


def render() -> None:
    ws = S.page_ws()
    st.title("Annotate")
    st.caption("Correct gold spans, triples, labels and terms; every save is kept with its author, time and "
               f"reason. Annotating as **{md(user_name())}**.")
    read_only_notice("editing")
    datasets = [d for d in ws.datasets.all() if annotation_field(get_task(d.task)) is not None]
    if not datasets:
        st.info("No editable split in the workspace: annotation covers entity spans (CMeEE), CMeIE triples, "
                "classification and pair labels, and CHIP-CDN terms. Ingest one on Datasets.")
        st.stop()
    _read_deep_link(datasets)
    _pending_editor_action(ws)
    S.apply_goto()
    S.keep_edit_widgets()
    info = _pick_dataset(ws, datasets)
    task = get_task(info.task)
    may_save = allowed("gold.save")
    if not read_only() and not may_save:
        st.info(f"{md(why_not('gold.save'))} Ask an admin for the annotator role to save gold; "
                "until then the editor only shows it.", icon=":material/lock:")
    ctx = Context(ws, info, task, annotation_field(task), read_only() or not may_save)

    # Messages go in a container that is always there, so that the elements below keep their place
    # in the page (a moved component frame is reloaded, and would lose the keyboard focus).
    with st.container():
        for level, message in S.take_flashes():
            getattr(st, level)(md(message))

    tabs = st.tabs(TAB_NAMES, key=K.TAB, on_change="rerun")
    for (name, draw), tab in zip(TABS.items(), tabs):
        # .open is None when the tabs track no state (then every tab runs, as in plain st.tabs)
        if tab.open is not False:
            with tab, A.guard(name):
                draw(ctx)


def _read_deep_link(datasets: list[DatasetInfo]) -> None:
    """``?task=&split=&example=`` into the widgets, once per session."""
    if K.LINKED in st.session_state:
        return
    st.session_state[K.LINKED] = True
    params = st.query_params
    if params.get(Param.TASK) in {d.task for d in datasets}:
        st.session_state[K.TASK] = params[Param.TASK]
        if params.get(Param.SPLIT):
            st.session_state[K.SPLIT] = params[Param.SPLIT]
        example = url_state.parse_index(params.get(Param.EXAMPLE))
        if example is not None:
            st.session_state[K.EXAMPLE] = example


def _pending_editor_action(ws) -> None:
    """The span editor's new value (a save, a move, marks) is acted on before anything is drawn.
    In an always-there container: a failure message moves no element below it."""
    value = editor_value(K.EDITOR)
    with st.container():
        if value is not None and value["nonce"] != st.session_state.get(K.EDITOR_NONCE):
            st.session_state[K.EDITOR_NONCE] = value["nonce"]
            S.note_browser(value)
            with A.guard("The editor's action"):
                A.handle_editor(ws, value)


def _pick_dataset(ws, datasets: list[DatasetInfo]) -> DatasetInfo:
    tasks = sorted({d.task for d in datasets}, key=list(REGISTRY).index)
    c1, c2 = st.columns(2)
    task_name = c1.selectbox("Task", tasks, key=K.TASK,
                             format_func=lambda t: f"{t} · {KIND_NAMES[annotation_field(get_task(t))]}")
    splits = [d.split for d in datasets if d.task == task_name]
    if st.session_state.get(K.SPLIT) not in splits:
        st.session_state[K.SPLIT] = "dev" if "dev" in splits else splits[0]
    split = c2.selectbox("Split", splits, key=K.SPLIT)
    info = ws.datasets.find(task_name, split)
    if st.session_state.get(K.DATASET) != info.dataset_id:
        if K.DATASET in st.session_state:   # another split was picked: start at its first example
            st.session_state[K.EXAMPLE] = 0
        st.session_state[K.DATASET] = info.dataset_id
    if not 0 <= S.current_example() < max(info.records, 1):
        st.session_state[K.EXAMPLE] = 0
    return info
