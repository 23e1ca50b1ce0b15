"""Per-label precision, recall and F1 (or accuracy) of the run: a bar per label with its F1 on it,
and the table with every column, each tab-wide (side by side, the table's scores were cut off)."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from app_pages.errors_tabs.state import shown_summary
from app_pages.html_view import show_html
from cblue_core.render.bars import Bar, BarPanel, bars_html
from cblue_core.tasks import get_task

MAX_BARS = 60      # CHIP-CDN scores thousands of terms: those get the table alone
# The columns in reading order: the scores first, then the counts they come from.
COLUMNS = ("label", "precision", "recall", "f1", "support", "tp", "fp", "fn")
SCORES = ("precision", "recall", "f1")


def per_label_frame(per_label: dict[str, dict], display=str) -> pd.DataFrame:
    """The run's per-label figures as a table: :data:`COLUMNS` first (``support`` = tp + fn where
    the scorer gave none), then any other figure the scorer reported; ``display`` names a label."""
    rows = []
    for code, figures in per_label.items():
        row = {"label": display(code), **figures}
        if "support" not in row and {"tp", "fn"} <= set(row):
            row["support"] = int(row["tp"]) + int(row["fn"])
        rows.append(row)
    frame = pd.DataFrame(rows)
    first = [c for c in COLUMNS if c in frame]
    return frame[first + [c for c in frame if c not in first]]


def render(ws, run) -> None:
    task = get_task(run.task)
    per_label = shown_summary(ws, run).get("per_label", {})
    if not per_label:
        st.info("This task reports no per-label figures.")
        return
    frame = per_label_frame(per_label, task.display_label)
    if len(frame) <= MAX_BARS and "f1" in frame:
        f1 = sorted(zip(frame["label"], frame["f1"].astype(float)), key=lambda kv: -kv[1])
        # HTML bars, not Plotly: the first tab of the page then needs no Plotly bundle (0.4 s of a
        # fresh page's main thread to evaluate, then the figure to draw)
        show_html(bars_html([BarPanel("F1 per label", "F1 (0-1), largest first",
                                      tuple(Bar(str(label), f, f"{f:.3f}") for label, f in f1))], scale=1.0))
    config = {c: st.column_config.NumberColumn(c, format="%.4f") for c in SCORES if c in frame}
    config["label"] = st.column_config.TextColumn("label", width="large")
    st.dataframe(frame, hide_index=True, width="stretch", column_config=config,
                 height="content" if len(frame) <= MAX_BARS else "auto")
