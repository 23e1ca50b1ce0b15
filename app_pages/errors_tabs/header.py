"""The run's headline metrics, and the warning when the run's model was trained on the split."""
from __future__ import annotations

import streamlit as st

from app_pages.common import md, num, overlap_warning
from app_pages.errors_tabs.state import metric_spec


def render(ws, run) -> None:
    summary = run.metrics
    spec = metric_spec(run)
    overlap_warning(run)
    cols = st.columns(4)
    shown = [summary["headline"]] + [k for k in summary.get("metrics", {}) if k != summary["headline"]][:3]
    for col, name in zip(cols, shown):
        ci = summary.get("intervals", {}).get(name)
        col.metric(md(name), num(summary["metrics"].get(name), spec),
                   help=f"95% bootstrap interval {num(ci[0], spec)} – {num(ci[1], spec)}" if ci else None)
        if ci:
            col.caption(f"95% CI {num(ci[0], spec)} – {num(ci[1], spec)}")
