"""Counts per whole-number value (entity length, nesting depth, triples per example) as bars on a
linear axis. A category axis writes every value as a tick label, and 60 entity lengths overlapped
into one smear; a linear axis lets Plotly choose readable ticks whatever the range. Pure: returns a
Plotly figure."""
from __future__ import annotations

from collections.abc import Mapping

import plotly.graph_objects as go

from app_pages.common import plot_text

MAX_NUMBERED = 12      # bars that carry their count; past this the hover shows it


def distribution_figure(counts: Mapping[int, int], *, title: str, x_title: str, y_title: str) -> go.Figure:
    """One bar per value of ``counts`` ({value: how many}), on a linear x axis titled ``x_title``
    (with its unit), every tick a whole number."""
    xs = sorted(int(x) for x in counts)
    ys = [int(counts[x]) for x in xs]
    numbered = len(xs) <= MAX_NUMBERED
    bar = go.Bar(x=xs, y=ys, text=[f"{y:,}" for y in ys] if numbered else None, textposition="outside",
                 cliponaxis=False, hovertemplate="%{x}: %{y:,}<extra></extra>")
    few = bool(xs) and xs[-1] - xs[0] <= MAX_NUMBERED
    fig = go.Figure(bar)
    fig.update_layout(
        title={"text": plot_text(title)}, height=320, bargap=0.15, showlegend=False,
        xaxis={"type": "linear", "title": {"text": plot_text(x_title)}, "tickformat": "d",
               **({"dtick": 1} if few else {})},
        yaxis={"title": {"text": plot_text(y_title)}, "rangemode": "tozero", "tickformat": ",d"},
        margin={"l": 70, "r": 20, "t": 48, "b": 60})
    return fig
