"""What the Errors page's tabs share: the selection a click made (which error rows to list)."""
from __future__ import annotations

from typing import Any

import streamlit as st

from app_pages.keys import Errors as K

FILTER_KEY = K.FILTER
EXAMPLE_KEY = K.EXAMPLE


def select_filter(new: dict[str, Any]) -> None:
    """A chart click: remember which error rows to list (and forget the example shown)."""
    if new != st.session_state.get(FILTER_KEY):
        st.session_state[FILTER_KEY] = new
        st.session_state.pop(EXAMPLE_KEY, None)


def metric_spec(run) -> str:
    return ".4f" if run.metrics.get("scale", 1) == 1 else ".2f"
