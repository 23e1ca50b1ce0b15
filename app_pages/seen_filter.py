"""The "Training records: all / unseen only / seen only" control that Errors and Compare share,
and what a page derives from it (the scores on one part), cached per run and part."""
from __future__ import annotations

import streamlit as st

from app_pages.common import md, model_dirs, shared_workspace
from cblue_core.runs.seen_split import SeenSplit, part_indices, seen_split
from cblue_core.store.error_selection import Seen

CHOICES: dict[str, Seen | None] = {"all": None, "unseen only": "unseen", "seen only": "seen"}


def seen_control(ws, runs, key: str) -> tuple[Seen | None, SeenSplit]:
    """The control for one run (Errors) or two (Compare: the union of their training records),
    disabled and saying "unknown" when a run's model declares no training records."""
    split = seen_split(ws, runs, model_dirs())
    if not split.known:       # a disabled control must not show the choice made for another run
        st.session_state[key] = "all"
    choice = st.radio("Training records", list(CHOICES), key=key, horizontal=True, disabled=not split.known,
                      format_func=md,
                      help="Keep only the examples the model never saw in training (unseen), or only "
                           "those it did (seen).")
    st.caption(md(split.describe()))
    return (CHOICES.get(choice) if split.known else None), split


@st.cache_data(max_entries=32, show_spinner="Scoring the part…")
def part_summary(path: str, run_id: int, seen: Seen, seen_runs: tuple[int, ...]) -> dict:
    """The run re-scored on its seen or unseen examples (``Evaluation.summary()``, plus
    ``examples``: how many). Runs and their training sets never change once stored."""
    from cblue_core.runs.record import run_evaluation

    ws = shared_workspace(path).cursor()
    keep = part_indices(ws, ws.runs.get(run_id).dataset_id, seen_runs, seen)
    return {**run_evaluation(ws, run_id, indices=keep).summary(), "examples": len(keep)}
