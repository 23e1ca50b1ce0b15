"""A Plotly chart drawn at its own width, in a box that scrolls sideways when it is wider than
the page's column.

Streamlit (1.67) fits every chart to its column: ``width="content"`` caps the figure at the
column's width and plotly.js then squeezes the plot area, so fixed-size markers (the confusion
matrix's squares) overlap and labels collide. No Streamlit option lets an element overflow, so a
rule scoped to one keyed container (its ``st-key-<key>`` class) widens the chart's element to
the figure's width and lets the container scroll.
"""
from __future__ import annotations

from typing import Any

import plotly.graph_objects as go
import streamlit as st


def wide_plotly_chart(figure: go.Figure | dict[str, Any], *, width: int, key: str, box_key: str, **kwargs: Any) -> Any:
    """``st.plotly_chart(figure, key=key, **kwargs)`` at ``width`` px in the scrolling container
    ``box_key``; returns what ``st.plotly_chart`` returns (the selection event)."""
    px = int(width)
    with st.container(key=box_key):
        st.html(f"<style>.st-key-{box_key}{{overflow-x:auto;overflow-y:hidden;padding-bottom:6px}}"
                f".st-key-{box_key} [data-testid=stElementContainer]"
                f"{{width:{px}px!important;min-width:{px}px!important;max-width:none!important}}</style>")
        return st.plotly_chart(figure, width="content", key=key, **kwargs)
