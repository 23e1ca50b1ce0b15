"""Per-label precision, recall and F1 (or accuracy) of the run."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from cblue_core.tasks import get_task


def render(ws, run) -> None:
    task = get_task(run.task)
    per_label = run.metrics.get("per_label", {})
    if not per_label:
        st.info("This task reports no per-label figures.")
        return
    frame = pd.DataFrame([{"label": task.display_label(k), **v} for k, v in per_label.items()])
    st.dataframe(frame, hide_index=True, width="stretch")
