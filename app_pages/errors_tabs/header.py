"""The run's headline metrics, the warning when the run's model was trained on the split, and
the training-records filter every tab respects."""
from __future__ import annotations

import streamlit as st

from app_pages.common import md, num, overlap_warning
from app_pages.errors_tabs.state import metric_spec, shown_summary
from app_pages.keys import Errors as K
from app_pages.seen_filter import seen_control


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
    seen, _ = seen_control(ws, [run], K.SEEN)
    if seen != st.session_state.get(K.SEEN_ACTIVE):
        st.session_state[K.SEEN_ACTIVE] = seen
        st.session_state.pop(K.EXAMPLE, None)      # it may lie outside the part now shown
    if seen is not None:
        part = _part_headline(ws, run, seen)
        name = part["headline"]
        ci = part.get("intervals", {}).get(name)
        st.markdown(f"**On the {part['examples']:,} {md(seen)} examples**: {md(name)} = "
                    f"{num(part['metrics'].get(name), spec)}"
                    + (f" (95% CI {num(ci[0], spec)} – {num(ci[1], spec)})" if ci else "")
                    + "; every tab below and the rows list show only these examples.")


def _part_headline(ws, run, seen) -> dict:
    """The score on the part shown: the unseen part's was stored with the run (with its
    interval), so switching to it re-scores nothing; the seen part is re-scored once."""
    if seen == "unseen":
        stored = ws.runs.training_sets([run.run_id]).get(run.run_id)
        if stored is not None and stored.unseen_metrics is not None:
            return stored.unseen_metrics
    return shown_summary(ws, run)
