"""The upload tab: validate a file in its official format, then store it in the workspace."""
from __future__ import annotations

import duckdb
import pandas as pd
import streamlit as st

from app_pages.common import md, page_failure, read_only_notice
from app_pages.datasets.versions import open_version
from app_pages.keys import Datasets as K
from app_pages.permissions import allowed, why_not
from app_pages.uploads import dataset_to_store, upload_limit_bytes, validated_upload
from cblue_core.auth import PermissionDenied
from cblue_core.io.writers import detect_line_ending
from cblue_core.store.workspace import Workspace, WorkspaceError
from cblue_core.tasks import REGISTRY

INFER = "(infer from the file name)"


def render(ws: Workspace) -> None:
    uploaded = st.file_uploader("A dataset file in its official format (JSON, JSON lines, TSV)",
                                type=["json", "jsonl", "tsv", "txt"], key=K.UPLOAD)
    task_choice = st.selectbox("Task", [INFER, *REGISTRY], key=K.UPLOAD_TASK)
    if uploaded is None:
        return
    checked = validated_upload(st.session_state, uploaded.file_id, uploaded.getvalue,
                               None if task_choice == INFER else task_choice, uploaded.name, upload_limit_bytes())
    rep = checked.report
    (st.success if rep.ok else st.error)(md(rep.summary()))
    defects = [{"severity": sev, "record": d.record, "line": d.line, "field": d.field, "problem": d.message,
                "expected": d.expected}
               for sev, ds in (("error", rep.errors), ("warning", rep.warnings)) for d in ds]
    if defects:
        st.dataframe(pd.DataFrame(defects), hide_index=True, width="stretch")
    if not rep.ok:
        return
    split = st.text_input("Split name", value=rep.split or "dev", key=K.UPLOAD_SPLIT).strip() or "dev"
    read_only_notice("storing files")
    if st.button("Store in the workspace", type="primary", disabled=not allowed("dataset.ingest"), key=K.STORE,
                 help=md(why_not("dataset.ingest"))):
        try:
            with st.spinner("Storing…"):
                loaded = dataset_to_store(checked, uploaded.getvalue, uploaded.name, upload_limit_bytes())
                stored = ws.datasets.ingest(loaded, name=uploaded.name, source=f"upload: {uploaded.name}",
                                            split=split, line_ending=detect_line_ending(uploaded.getvalue()))
        except (WorkspaceError, duckdb.Error, PermissionDenied) as exc:
            st.error(md(page_failure("storing an upload", exc)))
        else:
            st.success(md(stored.message))
            st.session_state[K.TASK], st.session_state[K.SPLIT] = rep.task, split
            open_version(rep.task, split, stored.dataset_id)   # for this session; others keep the default
            st.rerun()
