"""The confusion matrix (labels, entity types, or predicates of matched arguments) as clickable
squares with Σ row and column."""
from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from app_pages.common import plot_labels, plot_text, selected
from app_pages.errors_tabs.state import select_filter

ALL = "Σ all"


def render(ws, run) -> None:
    cm = ws.runs.confusion(run.run_id)
    if cm.empty:
        st.info("No confusion pairs for this run (nothing was matched on both sides).")
        return
    normalise = st.toggle("Normalise each row (share of the gold label)", key="err_norm")
    gold_tot = cm.groupby("gold_label")["n"].sum()
    pred_tot = cm.groupby("pred_label")["n"].sum()
    cells = [(g, p, int(n)) for g, p, n in cm.itertuples(index=False)]
    cells += [(g, ALL, int(n)) for g, n in gold_tot.items()]
    cells += [(ALL, p, int(n)) for p, n in pred_tot.items()]
    frame = pd.DataFrame(cells, columns=["gold", "pred", "n"])
    frame["value"] = frame["n"]
    if normalise:
        frame["value"] = [n / gold_tot.get(g, n) if g != ALL else n / max(pred_tot.sum(), 1)
                          for g, n in zip(frame["gold"], frame["n"])]
    labels_x = sorted(set(frame["pred"]) - {ALL}) + [ALL]
    labels_y = sorted(set(frame["gold"]) - {ALL}) + [ALL]
    cm_labels = plot_labels(labels_x + labels_y)
    for side in ("gold", "pred"):
        frame[side + "_shown"] = [plot_text(v) for v in frame[side]]
    size = 620 / max(len(labels_x), len(labels_y), 4)
    fig = go.Figure(go.Scatter(
        x=frame["pred_shown"], y=frame["gold_shown"], mode="markers+text",
        text=[f"{v:.2f}" if normalise else str(n) for v, n in zip(frame["value"], frame["n"])],
        marker={"symbol": "square", "size": size, "color": frame["value"], "colorscale": "Blues"},
        customdata=frame[["gold_shown", "pred_shown"]].values,
        hovertemplate="gold %{y} · predicted %{x}: %{text}<extra></extra>"))
    fig.update_layout(height=max(420, size * len(labels_y) + 160), xaxis_title="predicted", yaxis_title="gold",
                      xaxis={"categoryorder": "array", "categoryarray": [plot_text(v) for v in labels_x]},
                      yaxis={"categoryorder": "array", "categoryarray": [plot_text(v) for v in labels_y[::-1]]})
    st.caption("Click a cell for its examples; the Σ row and column select a whole predicted "
               "column or gold row.")
    event = st.plotly_chart(fig, on_select="rerun", selection_mode="points", key="err_cm")
    points = selected(event, "points")
    if points:
        gold, pred = (cm_labels.get(v, v) for v in points[0]["customdata"][:2])
        select_filter({k: v for k, v in (("gold_label", gold), ("pred_label", pred)) if v != ALL})
