"""The run re-scored on corrected gold: the score change and the errors that disappear
(annotation noise rather than model errors) or appear."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from app_pages.common import db_path, md, num
from app_pages.errors_tabs.state import metric_spec, shown_indices
from app_pages.keys import Errors as K
from app_pages.rescoring import gold_changes

COLUMNS = ("idx", "category", "gold_label", "pred_label", "gold_text", "pred_text")


def changes_frame(rows: list[dict]) -> pd.DataFrame:
    """Error rows as a table with every one of :data:`COLUMNS`, whichever keys the first row
    has (a spurious row has no gold side; the columns once followed the first row)."""
    return pd.DataFrame(rows).reindex(columns=list(COLUMNS))


def render(ws, run) -> None:
    edited = ws.annotations.edited_indices(run.dataset_id)
    if not edited:
        st.info("No gold correction on this split yet (see the Annotate page).")
        return
    names = ["current"] + [v.name for v in ws.annotations.versions(run.dataset_id)]
    version = st.selectbox("Gold version", names, key=K.GOLD_VERSION,
                           help="current = the original plus every saved correction")
    changes = gold_changes(db_path(), run.run_id, None if version == "current" else version, "original",
                           ws.annotations.head_event(run.dataset_id))
    spec = metric_spec(run)
    g = st.columns(3)
    g[0].metric(f"{md(changes.headline)} on the original gold", num(changes.before, spec))
    g[1].metric(f"{md(changes.headline)} on {md(version)}", num(changes.after, spec),
                delta=None if changes.delta is None else f"{changes.delta:+.4f}")
    g[2].metric("Examples whose errors changed", len(changes.examples))
    st.caption(f"{len(edited):d} corrected examples. Errors that disappear on the corrected gold "
               "were annotation noise rather than model errors.")
    keep = shown_indices(ws, run)
    if keep is not None:
        st.caption("The scores are over every example; the lists below keep the examples the "
                   "training-records filter shows.")
    for title, rows in (("Errors that disappear", changes.fixed), ("Errors that appear", changes.new)):
        rows = rows if keep is None else [r for r in rows if r["idx"] in keep]
        st.markdown(f"**{title}** ({len(rows):d})")
        if rows:
            st.dataframe(changes_frame(rows), hide_index=True, width="stretch")
