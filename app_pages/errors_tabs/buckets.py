"""ExplainaBoard-style buckets (entity length, sentence length, density, nesting, training
frequency and label consistency; triples per example, argument nesting and triples in the train
split for relations; seen/unseen where the model declares its training records) with 95%
intervals, one titled panel per feature (HTML bars: no Plotly on this tab)."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from app_pages.common import db_path, md
from app_pages.errors_tabs import derived
from app_pages.errors_tabs.state import seen_filter
from app_pages.html_view import show_html
from cblue_core.analysis.buckets import LABEL_SCORERS
from cblue_core.runs import seen_split
from cblue_core.tasks import get_task


def render(ws, run) -> None:
    seen = seen_filter()
    scores, has_train = derived.buckets(db_path(), run.run_id, seen)
    if not scores:
        st.info("Bucketed analysis covers span, relation and label tasks.")
        return
    metric = "accuracy" if get_task(run.task).scorer in LABEL_SCORERS else "F1"
    seen_set = seen_split.seen_set(ws, run.run_id)
    train_note = ("Training-set features from the workspace's train split." if has_train else
                  "No train split in the workspace: frequency, consistency and train-overlap buckets are off.")
    seen_note = ("“In the model's training records”: examples whose text the model was trained on (seen) "
                 "or not (unseen)." if seen_set is not None else
                 "The run's model declares no training records: no seen/unseen buckets.")
    st.caption(f"{md(metric[:1].upper() + metric[1:])} per bucket with 95% bootstrap intervals; n = the "
               f"bucket's gold items (buckets with none are left out). {md(train_note)} {md(seen_note)}")
    show_html(derived.bucket_chart(db_path(), run.run_id, metric, seen))
    with st.expander("Bucket table"):
        frame = pd.DataFrame([{"feature": b.feature, "bucket": b.bucket, metric: b.f1, "low": b.low,
                               "high": b.high, "gold": b.support, "tp": b.tp, "fp": b.fp, "fn": b.fn,
                               "examples": b.examples} for b in scores])
        st.dataframe(frame, hide_index=True)
