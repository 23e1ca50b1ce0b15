"""ExplainaBoard-style buckets (entity length, sentence length, density, nesting, training
frequency and label consistency) with 95% intervals."""
from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from app_pages.common import db_path, plot_text
from app_pages.errors_tabs import derived
from app_pages.keys import Errors as K


def render(ws, run) -> None:
    scores, has_train = derived.buckets(db_path(), run.run_id)
    if not scores:
        st.info("Bucketed analysis covers span and label tasks.")
        return
    st.caption("F1 per bucket (accuracy for label tasks) with 95% bootstrap intervals; "
               + ("training-set features from the workspace's train split." if has_train else
                  "no train split in the workspace: frequency and consistency buckets are off."))
    frame = pd.DataFrame([{"feature": b.feature, "bucket": b.bucket, "order": b.order, "F1": b.f1,
                           "low": b.low, "high": b.high, "gold": b.support, "tp": b.tp, "fp": b.fp,
                           "fn": b.fn, "examples": b.examples} for b in scores])
    groups = list(frame.groupby("feature", sort=False))
    for start in range(0, len(groups), 2):          # a tidy grid: two charts per row
        cols = st.columns(2)
        for col, (feature, part) in zip(cols, groups[start:start + 2]):
            col.plotly_chart(_figure(str(feature), part.sort_values("order")),
                             key=K.bucket(start, feature))
    with st.expander("Bucket table"):
        st.dataframe(frame.drop(columns="order"), hide_index=True)


def _figure(feature: str, part: pd.DataFrame) -> go.Figure:
    fig = go.Figure(go.Bar(
        x=[plot_text(b) for b in part["bucket"]], y=part["F1"],
        error_y={"type": "data", "symmetric": False, "array": part["high"] - part["F1"],
                 "arrayminus": part["F1"] - part["low"]},
        text=part["gold"], hovertemplate="%{x}: %{y:.3f} (gold items %{text})<extra></extra>"))
    fig.update_layout(title=plot_text(feature), height=300, margin={"t": 40, "b": 10},
                      xaxis={"title": plot_text(feature), "type": "category", "tickmode": "linear"},
                      yaxis={"range": [0, 1.05], "title": "F1 (accuracy for labels), 0-1"})
    return fig
