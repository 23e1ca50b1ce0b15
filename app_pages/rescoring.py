"""A run re-scored on one gold version against another, computed once per gold state; the Errors
page's Corrected gold tab and the Annotate page's Re-score tab both read it."""
from __future__ import annotations

import dataclasses

import streamlit as st

from app_pages.common import shared_workspace
from cblue_core.annotation.rescore import ErrorChanges


def compute_gold_changes(path: str, run_id: int, version: str | None, base: str | None) -> ErrorChanges:
    from cblue_core.annotation.rescore import error_changes

    changes = error_changes(shared_workspace(path).cursor(), run_id, version, base=base)
    # Without the two evaluations: st.cache_data copies what it returns on every read, and two
    # per-example evaluations of a 5,000-sentence run made each read cost 0.3 s.
    return dataclasses.replace(changes, evaluation_before=None, evaluation_after=None)


@st.cache_data(max_entries=32, show_spinner="Re-scoring on the corrected gold…")
def gold_changes(path: str, run_id: int, version: str | None, base: str | None, head_event: int) -> ErrorChanges:
    """The run's errors on ``base`` gold against those on ``version`` gold (None: the current
    gold, "original": as ingested). ``head_event`` (the newest annotation event of the split)
    keys the cache: a saved correction gives a new key, so no page shows scores of an older gold."""
    return compute_gold_changes(path, run_id, version, base)
