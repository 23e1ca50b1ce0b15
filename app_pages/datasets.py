"""Datasets: pick a task split (or upload a file), see its summary, filter, and read examples.

URL query parameters ``task``, ``split`` and ``example`` select what is shown, so a link to
one example can be shared.
"""
from __future__ import annotations

import duckdb
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from app_pages.charts import bar_figure, grid, histogram_figure
from app_pages.common import (
    counted,
    db_path,
    md,
    page_failure,
    read_only,
    read_only_notice,
    selected,
    shared_workspace,
    user_name,
    workspace,
)
from app_pages.html_view import show_html
from app_pages.uploads import upload_limit_bytes, validated_upload
from cblue_core.io.writers import detect_line_ending
from cblue_core.render.example import example_html
from cblue_core.store.stats import DatasetStats
from cblue_core.store.workspace import WorkspaceError
from cblue_core.tasks import REGISTRY, TaskSpec, get_task

PAGE_SIZE = 25


@st.cache_data(max_entries=64, show_spinner=False)
def split_stats(path: str, dataset_id: int, sha256: str) -> DatasetStats:
    """A split's summary, once per process: a stored split never changes (its content hash
    keys it too); 7 queries per rerun otherwise."""
    return shared_workspace(path).cursor().datasets.stats(dataset_id)


def render() -> None:
    ws = workspace()
    st.title("Datasets")
    datasets = ws.datasets.all()
    if not datasets:
        st.info("The workspace is empty. Upload a file below, or ingest a CBLUE folder with "
                "`python -m cblue_core ingest PATH`.")
    # ---------------------------------------------------------------- deep link -> widget state
    params = st.query_params
    if "ds_linked" not in st.session_state:
        st.session_state.ds_linked = True
        if params.get("task") in {d.task for d in datasets}:
            st.session_state.ds_task = params["task"]
            if params.get("split"):
                st.session_state.ds_split = params["split"]
            if str(params.get("example", "")).isdigit():
                st.session_state.ds_example = int(params["example"])
    tab_browse, tab_upload = st.tabs(["Browse the workspace", "Validate or upload a file"])
    # ---------------------------------------------------------------- upload
    with tab_upload:
        uploaded = st.file_uploader("A dataset file in its official format (JSON, JSON lines, TSV)",
                                    type=["json", "jsonl", "tsv", "txt"], key="ds_upload")
        task_choice = st.selectbox("Task", ["(infer from the file name)"] + list(REGISTRY), key="ds_upload_task")
        if uploaded is not None:
            task_arg = None if task_choice.startswith("(") else task_choice
            loaded = validated_upload(st.session_state, uploaded.file_id, uploaded.getvalue, task_arg,
                                      uploaded.name, upload_limit_bytes())
            rep = loaded.report
            (st.success if rep.ok else st.error)(md(rep.summary()))
            defects = [{"severity": sev, "record": d.record, "line": d.line, "field": d.field,
                        "problem": d.message, "expected": d.expected}
                       for sev, ds in (("error", rep.errors), ("warning", rep.warnings)) for d in ds]
            if defects:
                st.dataframe(pd.DataFrame(defects), hide_index=True, width="stretch")
            if rep.ok:
                split = st.text_input("Split name", value=rep.split or "dev", key="ds_upload_split")
                read_only_notice("storing files")
                if st.button("Store in the workspace", type="primary", disabled=read_only(), key="ds_store"):
                    try:
                        stored = ws.datasets.ingest(loaded, name=uploaded.name, source=f"upload: {uploaded.name}",
                                                    split=split.strip() or "dev",
                                                    line_ending=detect_line_ending(uploaded.getvalue()))
                    except (WorkspaceError, duckdb.Error) as exc:
                        st.error(md(page_failure("storing an upload", exc)))
                    else:
                        st.success(md(stored.message))
                        st.session_state.ds_task, st.session_state.ds_split = rep.task, split.strip() or "dev"
                        st.rerun()
    # ---------------------------------------------------------------- browse
    with tab_browse:
        if not datasets:
            st.stop()
        tasks = sorted({d.task for d in datasets}, key=list(REGISTRY).index)
        c1, c2 = st.columns(2)
        task_name = c1.selectbox("Task", tasks, key="ds_task",
                                 format_func=lambda t: f"{t} · {get_task(t).family.value}")
        splits = [d.split for d in datasets if d.task == task_name]
        if st.session_state.get("ds_split") not in splits:
            st.session_state.ds_split = "dev" if "dev" in splits else splits[0]
        split = c2.selectbox("Split", splits, key="ds_split")
        task = get_task(task_name)
        info = ws.datasets.find(task_name, split)
        st.caption(f"{md(task.description)}. Leaderboard metric: {md(task.metric)}. File: {md(info.name)}; "
                   f"offsets: {md(info.offset_convention)}.")

        stats = split_stats(db_path(), info.dataset_id, info.sha256)
        m = st.columns(4)
        m[0].metric("Examples", f"{stats.examples:,}")
        m[1].metric("Annotations", f"{stats.annotations:,}")
        m[2].metric("Mean length", f"{(sum(stats.text_lengths) / max(len(stats.text_lengths), 1)):.0f} chars")
        m[3].metric("Max nesting depth", max(stats.nesting_depths or {0: 0}))

        # Drawn only while open: closed, a fresh page neither builds the figures nor loads
        # Plotly's code in the browser.
        charts = st.expander("Summary charts", expanded=False, key="ds_charts", on_change="rerun")
        with charts:
            figures = [] if not charts.open else summary_figures(stats, task)
            for row in grid(len(figures)):          # a tidy grid: full rows of equal columns
                for col, n in zip(st.columns(2), row):
                    col.plotly_chart(figures[n], key=f"ds_chart_{n}")

        st.subheader("Search and filter")
        f1, f2, f3 = st.columns([2, 2, 1])
        substring = f1.text_input("Text contains", key="ds_q")
        regex = f2.text_input("Regular expression", key="ds_re")
        nested = f3.checkbox("Nested entities only", key="ds_nested", disabled=not stats.span_lengths)
        types = st.multiselect("Has label / entity type / predicate", list(stats.label_counts),
                               format_func=task.display_label, key="ds_types")
        predicate = st.text_input(
            "SQL predicate (WHERE clause over idx, key, text, text2, label, target, sub_task, types, "
            "n_spans, n_triples, n_terms, n_events, n_turns, nesting_depth, text_length)",
            key="ds_sql", placeholder="text_length > 80 AND n_spans >= 5")

        page_no = st.session_state.get("ds_page", 1)
        result = ws.datasets.query(info.dataset_id, substring=substring, regex=regex, types=types,
                                   nested_only=nested, predicate=predicate,
                                   limit=PAGE_SIZE, offset=(page_no - 1) * PAGE_SIZE)
        if result.error:
            st.error(f"Filter not applied: {md(result.error)}. Showing the examples without it.")
            result = ws.datasets.query(info.dataset_id, substring=substring, regex=regex, types=types,
                                       nested_only=nested, limit=PAGE_SIZE, offset=(page_no - 1) * PAGE_SIZE)
        pages = max(1, -(-result.total // PAGE_SIZE))
        st.caption(f"{counted(result.total, 'matching example')} · page {min(page_no, pages):d} of {pages:d}")
        table = result.rows[["idx", "text", "text2", "label", "n_spans", "n_triples", "nesting_depth",
                             "text_length"]].copy()
        table = table.loc[:, [c for c in table.columns if table[c].astype(str).str.len().sum() > 0 or c == "idx"]]
        event = st.dataframe(table, hide_index=True, width="stretch", on_select="rerun",
                             selection_mode="single-row", key="ds_table",
                             column_config={"text": st.column_config.TextColumn(width="large")})
        st.number_input("Page", min_value=1, max_value=pages, step=1, key="ds_page")

        rows = selected(event)
        if rows and rows != st.session_state.get("ds_last_selection"):
            st.session_state.ds_example = int(table.iloc[rows[0]]["idx"])
        st.session_state.ds_last_selection = rows

        # ------------------------------------------------------------ one example
        st.subheader("Example")
        if st.session_state.get("ds_example", 0) >= info.records:
            st.session_state.ds_example = 0
        nav = st.columns([1, 1, 4])
        if nav[0].button("◀ Previous", disabled=st.session_state.get("ds_example", 0) <= 0):
            st.session_state.ds_example = st.session_state.get("ds_example", 0) - 1
        if nav[1].button("Next ▶", disabled=st.session_state.get("ds_example", 0) >= info.records - 1):
            st.session_state.ds_example = st.session_state.get("ds_example", 0) + 1
        idx = nav[2].number_input("Record number (0-based, as in validation reports)", min_value=0,
                                  max_value=max(info.records - 1, 0), step=1, key="ds_example")
        example = ws.datasets.example(info.dataset_id, int(idx))
        st.query_params.update({"task": task_name, "split": split, "example": str(idx)})
        if example is None:
            st.warning("No such example.")
        else:
            show_html(example_html(example, task))
            with st.expander("Record as stored (official format)"):
                st.json(example.raw, expanded=True)
            st.caption(f"Link to this example: ?task={md(task_name)}&split={md(split)}&example={idx:d} · "
                       f"viewing as {md(user_name())}")


def summary_figures(stats: DatasetStats, task: TaskSpec) -> list[go.Figure]:
    """The split's summary charts: labels or types, text length, nesting and entity length,
    triples per example, sub-tasks (those the split has)."""
    figures = []
    if stats.label_counts:
        figures.append(bar_figure({task.display_label(k): v for k, v in stats.label_counts.items()},
                                  title="Labels / types", x_title="label or type", y_title="count", sort=True))
    figures.append(histogram_figure(stats.text_lengths, title="Text length", x_title="characters"))
    if stats.span_lengths:
        figures.append(bar_figure(dict(sorted(stats.nesting_depths.items())), title="Nesting depth per example",
                                  x_title="depth (levels)", y_title="examples", horizontal=False))
        figures.append(bar_figure(dict(sorted(stats.span_lengths.items())), title="Entity length",
                                  x_title="characters", y_title="entities", horizontal=False))
    if any(k for k in stats.triples_per_example):
        figures.append(bar_figure(dict(sorted(stats.triples_per_example.items())), title="Triples per example",
                                  x_title="triples", y_title="examples", horizontal=False))
    if stats.sub_tasks:
        figures.append(bar_figure(stats.sub_tasks, title="Examples per sub-task", x_title="sub-task",
                                  y_title="examples", sort=True))
    return figures
