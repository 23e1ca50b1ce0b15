"""Compare: two runs on the same split. Metric delta overall and per saved slice with a paired
bootstrap interval and p-value; the examples A gets right and B wrong, the reverse, and both
wrong, each opening the example view. A training-records filter restricts all of it to the
examples neither model was trained on (or to those either was)."""
from __future__ import annotations

import functools

import pandas as pd
import streamlit as st

from app_pages import url_state
from app_pages.common import (
    db_path,
    md,
    overlap_warning,
    pick_run,
    run_evaluation_cached,
    run_label,
    selected,
    session_cursor,
    workspace,
)
from app_pages.html_view import show_html
from app_pages.keys import Compare as K
from app_pages.keys import Param
from app_pages.seen_filter import seen_control
from cblue_core.render.example import example_html
from cblue_core.runs.record import compare_runs
from cblue_core.runs.seen_split import part_indices
from cblue_core.store.error_selection import Seen
from cblue_core.store.workspace import WorkspaceError
from cblue_core.tasks import get_task

PAGE_SIZE = 200


@st.cache_data(max_entries=16, show_spinner="Paired bootstrap…")
def _comparison(path: str, a: int, b: int, slices_key: tuple, seen: Seen | None = None):
    """Cached per pair of runs, set of slices and training-records filter (runs and their
    training sets never change once stored). ``seen`` is defined by both runs' records. Each
    run's per-example statistics are those kept in the workspace (the Errors page's too):
    re-scoring two CMeEE runs took 1.7 s of a first Compare's 1.9 s."""
    ws = session_cursor(path)
    kept = functools.partial(run_evaluation_cached, path)
    if seen is None:
        return compare_runs(ws, a, b, evaluation=kept)
    within = part_indices(ws, ws.runs.get(a).dataset_id, (a, b), seen)
    return compare_runs(ws, a, b, within=within, overall=f"{seen} examples", evaluation=kept)


def render() -> None:
    ws = workspace()
    st.title("Compare runs")
    c1, c2 = st.columns(2)
    with c1:
        run_a = pick_run(ws, K.RUN_A, "Run A", param=Param.RUN_A)
    same_split = [r for r in ws.runs.all(dataset_id=run_a.dataset_id) if r.run_id != run_a.run_id]
    if not same_split:
        st.info(f"Run A is the only run on {md(run_a.task)} {md(run_a.split)}: import another one to compare.")
        st.stop()
    by_id = {r.run_id: r for r in same_split}
    url_state.seed(K.RUN_B, Param.RUN_B, url_state.int_in(by_id))
    with c2:
        b_id = st.selectbox("Run B (same split)", list(by_id), key=K.RUN_B,
                            format_func=lambda i: run_label(by_id[i]))
    url_state.show({Param.RUN_B: b_id})
    run_b = by_id[b_id]
    task = get_task(run_a.task)
    seen, split = seen_control(ws, [run_a, run_b], K.SEEN)
    if seen is not None and not part_indices(ws, run_a.dataset_id, split.runs, seen):
        st.info(f"No {md(seen)} examples on this split.")
        st.stop()
    try:
        slices_key = tuple((s.name, s.predicate) for s in ws.slices.all(run_a.task))
        cmp = _comparison(db_path(), run_a.run_id, run_b.run_id, slices_key, seen)
    except WorkspaceError as exc:
        st.error(md(exc))
        st.stop()
    overlap_warning(run_a)
    overlap_warning(run_b)
    d = cmp.overall
    m = st.columns(3)
    m[0].metric(f"A {md(cmp.metric)}", f"{d.a:.4f}")
    m[1].metric(f"B {md(cmp.metric)}", f"{d.b:.4f}", delta=f"{d.delta:+.4f}")
    m[2].metric("Paired bootstrap", md(d.p_text), help="the share of resamples in which B − A changes sign")
    # The interval on a line of its own: a metric tile cuts long values off.
    st.markdown(f"**B − A** = {d.delta:+.4f}, 95% CI [{d.low:+.4f}, {d.high:+.4f}], {md(d.p_text)} "
                f"({d.examples:,} examples)")
    rows = [d] + cmp.slices
    st.dataframe(pd.DataFrame([{"slice": r.slice, "examples": r.examples, "A": r.a, "B": r.b,
                                "B − A": r.delta, "CI low": r.low, "CI high": r.high, "p": r.p_text}
                               for r in rows]), hide_index=True, width="stretch")
    if not cmp.slices:
        st.caption("Save slices on the Errors page to see per-slice deltas here.")
    lists = {"A right, B wrong": cmp.a_right_b_wrong, "B right, A wrong": cmp.b_right_a_wrong,
             "both wrong": cmp.both_wrong}
    choice = st.radio("Examples", list(lists), horizontal=True, key=K.LIST,
                      format_func=lambda k: f"{md(k)} ({len(lists[k]):d})")
    idxs = lists[choice]
    if not idxs:
        st.caption("None.")
    else:
        # A page of the list at a time: all 4,030 'both wrong' CMeEE dev examples were 650 KB
        # sent to the browser on every rerun.
        pages = -(-len(idxs) // PAGE_SIZE)
        if st.session_state.get(K.PAGE, 1) > pages:       # another list: back to its first page
            st.session_state[K.PAGE] = 1
        start = (st.session_state.get(K.PAGE, 1) - 1) * PAGE_SIZE
        shown = idxs[start:start + PAGE_SIZE]
        gold_texts = ws.datasets.texts(run_a.dataset_id, shown)     # not the whole split decoded
        table = pd.DataFrame({"idx": shown, "text": [gold_texts.get(i, "")[:120] for i in shown]})
        event = st.dataframe(table, hide_index=True, width="stretch", on_select="rerun",
                             selection_mode="single-row", key=K.TABLE)
        if pages > 1:
            st.caption(f"{len(idxs):,} examples, {PAGE_SIZE:d} a page: page "
                       f"{st.session_state.get(K.PAGE, 1):d} of {pages:d}")
            st.number_input("Page", min_value=1, max_value=pages, step=1, key=K.PAGE)
        picked = [r for r in selected(event) if r < len(table)]
        idx = int(table.iloc[picked[0]]["idx"]) if picked else int(shown[0])
        gold = ws.datasets.example(run_a.dataset_id, idx)
        st.markdown(f"**Example {idx:d}**")
        marks = {run.run_id: ws.runs.error_marks(run.run_id, idx) for run in (run_a, run_b)}
        gold_a, gold_b = marks[run_a.run_id][0], marks[run_b.run_id][0]
        # gold: a span is marked where both runs got it wrong (what neither model handles)
        both = {s: c for s, c in gold_a.items() if c != "correct" and gold_b.get(s, "correct") != "correct"}
        cols = st.columns(3)
        with cols[0]:
            st.caption("gold (marked: wrong in both runs)")
            show_html(example_html(gold, task, marks=both))
        for col, run in zip(cols[1:], (run_a, run_b)):
            g_marks, p_marks = marks[run.run_id]
            with col:
                st.caption(f"run #{run.run_id:d} {md(run.name)}")
                show_html(example_html(ws.runs.prediction(run.run_id, idx), task,
                                       marks={**{s: c for s, c in g_marks.items() if c == "missed"}, **p_marks}))
