"""What the Errors page's tabs share: the selection a click made (which error rows to list)."""
from __future__ import annotations

from typing import Any

import streamlit as st

FILTER_KEY = "err_filter"
EXAMPLE_KEY = "err_example"


def select_filter(new: dict[str, Any]) -> None:
    """A chart click: remember which error rows to list (and forget the example shown)."""
    if new != st.session_state.get(FILTER_KEY):
        st.session_state[FILTER_KEY] = new
        st.session_state.pop(EXAMPLE_KEY, None)


def metric_spec(run) -> str:
    return ".4f" if run.metrics.get("scale", 1) == 1 else ".2f"
