"""The browse tab: a split's summary and charts, search and filters (with a safe SQL predicate),
a page of matching examples, and one example rendered."""
from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st

from app_pages import url_state
from app_pages.charts import bar_figure, grid, histogram_figure
from app_pages.common import counted, db_path, md, selected, shared_workspace, user_name
from app_pages.datasets.versions import pick_version
from app_pages.distribution_chart import distribution_figure
from app_pages.html_view import show_html
from app_pages.keys import Datasets as K
from app_pages.keys import Param
from cblue_core.render.example import example_html
from cblue_core.store.datasets import DatasetInfo
from cblue_core.store.stats import DatasetStats
from cblue_core.store.workspace import Workspace
from cblue_core.tasks import REGISTRY, TaskSpec, get_task

PAGE_SIZE = 25


def render(ws: Workspace, datasets: list[DatasetInfo]) -> None:
    info = _pick_split(ws, datasets)
    task = get_task(info.task)
    st.caption(f"{md(task.description)}. Leaderboard metric: {md(task.metric)}. File: {md(info.name)}; "
               f"offsets: {md(info.offset_convention)}.")
    stats = split_stats(db_path(), info.dataset_id, info.sha256)
    nested = "nesting_depth" in stats.used_counts
    m = st.columns(4 if nested else 3)
    m[0].metric("Examples", f"{stats.examples:,}")
    m[1].metric("Annotations", f"{stats.annotations:,}")
    m[2].metric("Mean length", f"{(sum(stats.text_lengths) / max(len(stats.text_lengths), 1)):.0f} chars")
    if nested:
        m[3].metric("Max nesting depth", max(stats.nesting_depths))
    # Drawn only while open: closed, a fresh page neither builds the figures nor loads Plotly's
    # code in the browser.
    charts = st.expander("Summary charts", expanded=False, key=K.CHARTS, on_change="rerun")
    with charts:
        if charts.open:
            _charts(summary_figures(stats, task))
    _matching(ws, info, task, stats)
    _example(ws, info, task)


@st.cache_data(max_entries=64, show_spinner=False)
def split_stats(path: str, dataset_id: int, sha256: str) -> DatasetStats:
    """A split's summary, once per process: a stored split never changes (its content hash keys
    it too); 7 queries per rerun otherwise."""
    return shared_workspace(path).cursor().datasets.stats(dataset_id)


def _pick_split(ws: Workspace, datasets: list[DatasetInfo]) -> DatasetInfo:
    tasks = sorted({d.task for d in datasets}, key=list(REGISTRY).index)
    c1, c2 = st.columns(2)
    task_name = c1.selectbox("Task", tasks, key=K.TASK, format_func=lambda t: f"{t} · {get_task(t).family.value}")
    splits = list(dict.fromkeys(d.split for d in datasets if d.task == task_name))
    if st.session_state.get(K.SPLIT) not in splits:
        st.session_state[K.SPLIT] = "dev" if "dev" in splits else splits[0]
    split = c2.selectbox("Split", splits, key=K.SPLIT)
    return pick_version(ws, task_name, split)


def summary_figures(stats: DatasetStats, task: TaskSpec) -> list[go.Figure]:
    """The split's summary charts: labels or types, text length, nesting and entity length,
    triples per example, sub-tasks (those the split has)."""
    figures = []
    if stats.label_counts:
        figures.append(bar_figure({task.display_label(k): v for k, v in stats.label_counts.items()},
                                  title="Labels / types", x_title="label or type", y_title="count", sort=True))
    figures.append(histogram_figure(stats.text_lengths, title="Text length", x_title="characters"))
    if stats.span_lengths:
        figures.append(distribution_figure(stats.nesting_depths, title="Nesting depth per example",
                                           x_title="depth (levels)", y_title="examples"))
        figures.append(distribution_figure(stats.span_lengths, title="Entity length",
                                           x_title="length (characters)", y_title="entities"))
    if any(k for k in stats.triples_per_example):
        figures.append(distribution_figure(stats.triples_per_example, title="Triples per example",
                                           x_title="triples", y_title="examples"))
    if stats.sub_tasks:
        figures.append(bar_figure(stats.sub_tasks, title="Examples per sub-task", x_title="sub-task",
                                  y_title="examples", sort=True))
    return figures


def _charts(figures: list[go.Figure]) -> None:
    for row in grid(len(figures)):          # a tidy grid: full rows of equal columns
        for col, n in zip(st.columns(2), row):
            col.plotly_chart(figures[n], key=K.chart(n))


def _matching(ws: Workspace, info: DatasetInfo, task: TaskSpec, stats: DatasetStats) -> None:
    """The filters and one page of the examples they match; a selected row opens its example."""
    st.subheader("Search and filter")
    f1, f2, f3 = st.columns([2, 2, 1])
    filters = {
        "substring": f1.text_input("Text contains", key=K.CONTAINS),
        "regex": f2.text_input("Regular expression", key=K.REGEX),
        "nested_only": f3.checkbox("Nested entities only", key=K.NESTED, disabled=not stats.span_lengths),
        "types": st.multiselect("Has label / entity type / predicate", list(stats.label_counts),
                                format_func=task.display_label, key=K.TYPES),
    }
    predicate = st.text_input(
        "SQL predicate (WHERE clause over idx, key, text, text2, label, target, sub_task, types, n_spans, "
        "n_triples, n_terms, n_events, n_turns, nesting_depth, text_length)",
        key=K.SQL, placeholder="text_length > 80 AND n_spans >= 5")
    page_no = st.session_state.get(K.PAGE, 1)
    window = {"limit": PAGE_SIZE, "offset": (page_no - 1) * PAGE_SIZE}
    result = ws.datasets.query(info.dataset_id, predicate=predicate, **filters, **window)
    if result.error:
        # Without the regular expression too: it runs on the same bounded path, so it may be
        # the cause, and it would be paid for a second time.
        st.error(f"Filter not applied: {md(result.error)}. Showing the examples without the SQL "
                 "predicate and the regular expression.")
        result = ws.datasets.query(info.dataset_id, **(filters | {"regex": ""}), **window)
    pages = max(1, -(-result.total // PAGE_SIZE))
    st.caption(f"{counted(result.total, 'matching example')} · page {min(page_no, pages):d} of {pages:d}")
    table = result.rows[["idx", "text", "text2", "label", *stats.used_counts, "text_length"]].copy()
    table = table.loc[:, [c for c in table.columns if table[c].astype(str).str.len().sum() > 0 or c == "idx"]]
    if "label" in table and task.labels and not task.kind.label_is_input:
        table["label"] = table["label"].map(lambda code: _label_text(task, code))
    event = st.dataframe(table, hide_index=True, width="stretch", on_select="rerun", selection_mode="single-row",
                         key=K.TABLE, column_config={"text": st.column_config.TextColumn(width="large")})
    st.number_input("Page", min_value=1, max_value=pages, step=1, key=K.PAGE)
    rows = selected(event)
    if rows and rows != st.session_state.get(K.LAST_SELECTION):
        st.session_state[K.EXAMPLE] = int(table.iloc[rows[0]]["idx"])
    st.session_state[K.LAST_SELECTION] = rows


def _label_text(task: TaskSpec, code) -> str:
    """A label with its meaning (KUAKE-QQR's 2 is 完全一致 / same meaning); a code the task does not
    define (QQR's NA) says so."""
    if code is None or code == "":
        return ""
    return task.display_label(code) if task.label(code) else f"{code} (not a {task.name} label)"


def _step(delta: int, records: int) -> None:
    here = int(st.session_state.get(K.EXAMPLE, 0))
    st.session_state[K.EXAMPLE] = min(max(here + delta, 0), max(records - 1, 0))


def _example(ws: Workspace, info: DatasetInfo, task: TaskSpec) -> None:
    st.subheader("Example")
    if st.session_state.get(K.EXAMPLE, 0) >= info.records:
        st.session_state[K.EXAMPLE] = 0
    here = int(st.session_state.get(K.EXAMPLE, 0))
    nav = st.columns([1, 1, 4])
    nav[0].button("◀ Previous", key=K.PREV, on_click=_step, args=(-1, info.records), disabled=here <= 0)
    nav[1].button("Next ▶", key=K.NEXT, on_click=_step, args=(1, info.records), disabled=here >= info.records - 1)
    idx = int(nav[2].number_input("Record number (0-based, as in validation reports)", min_value=0,
                                  max_value=max(info.records - 1, 0), step=1, key=K.EXAMPLE))
    url_state.show({Param.TASK: info.task, Param.SPLIT: info.split, Param.EXAMPLE: idx})
    example = ws.datasets.example(info.dataset_id, idx)
    if example is None:
        st.warning("No such example.")
        return
    show_html(example_html(example, task))
    with st.expander("Record as stored (official format)"):
        st.json(example.raw, expanded=True)
    st.caption(f"Link to this example: ?task={md(info.task)}&split={md(info.split)}&example={idx:d} · "
               f"viewing as {md(user_name())}")
