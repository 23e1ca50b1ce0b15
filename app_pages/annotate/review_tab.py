"""The Review queue tab: examples whose gold deserves a second look, most suspicious first: the
review reasons (validation defects, runs wrong or disagreeing, inconsistent types), or one
model run's "likely gold errors" (confident learning) or "most uncertain" examples. An item of
a run's queue opens in the editor with that run's suggestions ready."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from app_pages.annotate import session as S
from app_pages.annotate.context import Context
from app_pages.common import db_path, md, run_label, selected, shared_workspace
from app_pages.keys import Annotate as K
from cblue_core.annotation.label_issues import NoClassProbabilities, ProbabilitiesMissing
from cblue_core.annotation.model_queues import GOLD_ERRORS, UNCERTAIN, ModelQueue, drives_queues, supports
from cblue_core.annotation.review import ReviewItem
from cblue_core.annotation.uncertainty import MEASURES, has_measures

REASONS = "reasons"             # the review reasons' queue; a run's queue is "<kind>:<run id>"
SHOWN = 100          # queue items listed (the caption gives the whole queue's size)
QUEUE_NAMES = {GOLD_ERRORS: "likely gold errors", UNCERTAIN: "most uncertain"}


@st.cache_data(max_entries=16, show_spinner="Reading the runs and the gold…")
def queue(path: str, dataset_id: int, head_event: int, runs: tuple[int, ...]) -> list:
    """The review queue, once per gold state (``head_event``: the newest annotation event) and set
    of runs: it reads the gold and every run's predictions."""
    from cblue_core.annotation.review import review_queue

    return review_queue(shared_workspace(path).cursor(), dataset_id, limit=0)   # all: the page says how many


@st.cache_data(max_entries=16, show_spinner="Ranking the run's examples…")
def run_queue(path: str, dataset_id: int, head_event: int, run_id: int, kind: str, measure: str) -> ModelQueue:
    """One run's queue, once per gold state (``dataset_id`` and ``head_event`` key the cache)."""
    from cblue_core.annotation.model_queues import model_queue

    return model_queue(shared_workspace(path).cursor(), run_id, kind, measure=measure, limit=SHOWN)


def queue_choices(ctx: Context) -> dict[str, str]:
    """Queue id -> its name in the picker: the review reasons first, then each model run's."""
    out = {REASONS: "review reasons (validation, runs wrong or disagreeing, inconsistent types)"}
    for run in ctx.ws.runs.all(ctx.dataset_id):
        if drives_queues(run):
            out.update({f"{kind}:{run.run_id}": f"{name} ({run_label(run)})" for kind, name in QUEUE_NAMES.items()
                        if supports(ctx.task, kind)})
    return out


def open_item(idx: int, run_id: int | None, *, next_run: bool = False) -> None:
    """Open an example in the editor; from a run's queue, with that run's suggestions ready."""
    if run_id is not None:
        st.session_state[K.SUGGEST_SOURCE] = f"run:{run_id}"
    (S.goto_next_run if next_run else S.goto)(idx)


def render(ctx: Context) -> None:
    did = ctx.dataset_id
    choices = queue_choices(ctx)
    if st.session_state.get(K.QUEUE_KIND) not in choices:
        st.session_state[K.QUEUE_KIND] = REASONS
    choice = st.selectbox("Queue", list(choices), format_func=choices.__getitem__, key=K.QUEUE_KIND)
    head = ctx.ws.annotations.head_event(did)
    run_id: int | None = None
    if choice == REASONS:
        items = queue(db_path(), did, head, tuple(r.run_id for r in ctx.ws.runs.all(did)))
        found = len(items)
        items = items[:SHOWN]
        if not items:
            st.info("Nothing to review: no validation defect, no example every run gets wrong, no "
                    "disagreement between runs, no mention typed inconsistently.")
            return
        st.caption("Examples whose gold deserves a second look, most suspicious first (with one run that "
                   "stores probabilities, \"all runs wrong\" ranks by the model's confidence in its answer). "
                   "Select a row (or pick one below) to open it in the editor. "
                   + (f"Showing the first {len(items):,} of {found:,} items." if found > len(items)
                      else f"All {found:,} items."))
    else:
        kind, run_id = choice.split(":")[0], int(choice.split(":")[1])
        measure = "margin"
        if kind == UNCERTAIN and has_measures(ctx.task):
            measure = st.radio("Uncertainty", MEASURES, horizontal=True, key=K.QUEUE_MEASURE, format_func=md,
                               help="margin: between the two most probable classes; entropy: of the "
                                    "whole distribution (a three-way split counts)")
        try:
            mq = run_queue(db_path(), did, head, run_id, kind, measure)
        except (NoClassProbabilities, ProbabilitiesMissing) as exc:
            st.info(f"This run cannot rank the examples: {md(str(exc))}")
            return
        st.caption(md(_model_caption(mq, choices[choice])))
        items = mq.items
        if not items:
            st.info("Nothing in this queue.")
            return
    _show(items, choice, run_id)


def _model_caption(mq: ModelQueue, name: str) -> str:
    what = ("gold labels or spans the model's probabilities say are probably wrong (confident learning), "
            "most likely first" if mq.kind == GOLD_ERRORS else
            "examples the model is least sure of (margin or entropy of its class probabilities, or its "
            "least confident span), least sure first")
    left = (f"{mq.excluded_training:,} example(s) left out: the run's model was trained on them"
            if mq.training_known else "the run does not say which examples its model was trained on: none left out")
    shown = (f"showing the first {len(mq.items):,} of {mq.found:,} items" if mq.found > len(mq.items)
             else f"all {mq.found:,} items")
    return (f"{name}: {what}. {mq.examined:,} examples judged, {shown}; {left}. "
            "An item opens in the editor with this run's suggestions.")


def _show(items: list[ReviewItem], choice: str, run_id: int | None) -> None:
    frame = pd.DataFrame([{"idx": it.idx, "reason": it.reason, "score": round(it.score, 3), "why": it.detail}
                          for it in items])
    rows = selected(st.dataframe(frame, hide_index=True, width="stretch", on_select="rerun",
                                 selection_mode="single-row", key=K.queue_table(choice)))
    if rows and (choice, rows) != st.session_state.get(K.QUEUE_LAST):
        st.session_state[K.QUEUE_LAST] = (choice, rows)
        open_item(int(frame.iloc[rows[0]]["idx"]), run_id, next_run=True)
        st.rerun()
    st.session_state[K.QUEUE_LAST] = (choice, rows)
    pick_key = K.queue_pick(choice)
    if st.session_state.get(pick_key, 0) not in range(len(items)):
        st.session_state[pick_key] = 0
    r1, r2 = st.columns([3, 1])
    pick = r1.selectbox("Item", range(len(items)), key=pick_key,
                        format_func=lambda i: f"#{items[i].idx} · {items[i].reason} · {items[i].detail[:80]}")
    r2.button("Open in the editor", key=K.QUEUE_OPEN, on_click=open_item, args=(items[pick].idx, run_id))
