"""Chart builders the pages share: bar and histogram charts, a grid for laying charts out, and
the colour, contrast and text-width helpers the charts share (the confusion matrix, HTML:
:mod:`app_pages.confusion_chart`; the bucket panels :mod:`app_pages.bucket_chart`). Pure
functions: no Streamlit call here; each builder returns a Plotly figure.

Every label that comes from data reaches Plotly through :func:`app_pages.common.plot_text`
(Plotly renders a small HTML subset in tick labels, hover text and titles). Every label is shown:
axes list their ticks explicitly (``tickmode="array"``), so Plotly never skips every other one, and
the figures grow with the number of labels instead of squeezing them.

A number drawn on a coloured mark is black or white, whichever contrasts more with the mark's
colour (computed here from the colorscale as Plotly interpolates it): the WCAG contrast ratio is
then at least 4.58:1 on any background.
"""
from __future__ import annotations

import itertools
import math
import re
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any

import plotly.graph_objects as go
from plotly.colors import get_colorscale

from app_pages.common import plot_text

TICK_FONT = 12                # px, tick labels
BAR_PX = 26                   # px per bar of a horizontal bar chart
MAX_LABEL_PX = 360            # a longer tick label is cut (with "…"); its hover shows it whole
BLACK, WHITE = "#000000", "#ffffff"

# Blues without its near-white end, so a cell holding 1 still shows on a white page.
_BLUES = get_colorscale("Blues")
_START = 0.125
COLORSCALE: list[list[Any]] = [[round((p - _START) / (1 - _START), 4), c] for p, c in _BLUES if p >= _START]


# ---------------------------------------------------------------- colour and contrast (WCAG 2)

def parse_rgb(color: str) -> tuple[float, float, float]:
    """``rgb(r, g, b)``, ``rgba(r, g, b, a)`` or ``#rrggbb`` as (r, g, b) in 0..255."""
    text = color.strip().lower()
    if text.startswith("#") and len(text) == 7:
        return tuple(int(text[i:i + 2], 16) for i in (1, 3, 5))  # type: ignore[return-value]
    m = re.fullmatch(r"rgba?\(([^)]*)\)", text)
    if not m:
        raise ValueError(f"not an rgb colour: {color!r}")
    parts = [float(p) for p in m.group(1).split(",")[:3]]
    return parts[0], parts[1], parts[2]


def colorscale_rgb(colorscale: Sequence[Sequence[Any]], t: float) -> tuple[float, float, float]:
    """The colour at ``t`` (0..1, clamped) of a colorscale, interpolated linearly in RGB between
    its stops, as plotly.js does (d3 linear scale over [r, g, b, a] arrays)."""
    stops = [(float(p), parse_rgb(c)) for p, c in colorscale]
    t = min(max(float(t), stops[0][0]), stops[-1][0])
    for (p0, c0), (p1, c1) in itertools.pairwise(stops):
        if t <= p1:
            f = 0.0 if p1 == p0 else (t - p0) / (p1 - p0)
            return tuple(a + (b - a) * f for a, b in zip(c0, c1))  # type: ignore[return-value]
    return stops[-1][1]


def relative_luminance(rgb: tuple[float, float, float]) -> float:
    """WCAG 2 relative luminance of an sRGB colour (0 black .. 1 white)."""
    def lin(c: float) -> float:
        c /= 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4
    r, g, b = (lin(c) for c in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast_ratio(a: tuple[float, float, float], b: tuple[float, float, float]) -> float:
    """WCAG 2 contrast ratio of two colours (1 .. 21)."""
    la, lb = sorted((relative_luminance(a), relative_luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def text_color_on(background: tuple[float, float, float]) -> str:
    """Black or white, whichever contrasts more with ``background``: at least 4.58:1 on any colour
    (the worst case is a background of luminance 0.179, equally far from both)."""
    black = contrast_ratio(background, (0, 0, 0))
    white = contrast_ratio(background, (255, 255, 255))
    return BLACK if black >= white else WHITE


# ---------------------------------------------------------------- text sizes

def text_px(text: str, size: float = TICK_FONT) -> float:
    """A generous estimate of the width of ``text`` in pixels at font ``size``: a Chinese (wide)
    character ~14 px at 12 px, a capital ~9 px, anything else ~7 px."""
    width = 0.0
    for ch in text:
        if unicodedata.east_asian_width(ch) in ("W", "F"):
            width += size * 14 / 12
        elif ch.isupper() or ch in "mwMW@%&":
            width += size * 0.75
        else:
            width += size * 0.6
    return width


def clip_label(text: str, max_px: float = MAX_LABEL_PX, size: float = TICK_FONT) -> str:
    """``text`` cut to about ``max_px`` pixels, ending in "…" when cut (raw text: escape after)."""
    if text_px(text, size) <= max_px:
        return text
    out, width = [], text_px("…", size)
    for ch in text:
        width += text_px(ch, size)
        if width > max_px:
            break
        out.append(ch)
    return "".join(out).rstrip() + "…"


def tick(text: str) -> str:
    """A tick label for Plotly: cut to a readable width, then HTML-escaped."""
    return plot_text(clip_label(text))


SIN45 = math.sqrt(0.5)


# ---------------------------------------------------------------- bar chart

def bar_figure(values: Mapping[Any, int | float], *, title: str, x_title: str, y_title: str,
               horizontal: bool | None = None, sort: bool = False, numbers: bool = True,
               number_format: str | None = None) -> go.Figure:
    """One bar per key of ``values``, every label shown. ``x_title`` names the labels and
    ``y_title`` the values (say "entity type", "entities"), whatever the orientation: a horizontal
    chart puts ``x_title`` on its vertical axis. Horizontal by default when a label is longer than
    6 characters or there are more than 8 bars; its height grows with the bars, the first at the
    top. ``sort`` puts the largest first; ``numbers=False`` leaves the values off the bars (in
    the hover only: a table beside shows them, and each number costs the browser time to draw);
    ``number_format`` (say ``".3f"``) writes every number alike, else counts get thousands
    separators and fractions three significant digits.
    A click reports the escaped label as the category
    (``plot_labels(values)`` maps it back) and in ``customdata``."""
    items = list(values.items())
    if sort:
        items.sort(key=lambda kv: -float(kv[1]))
    raw = [str(k) for k, _ in items]
    cats = [plot_text(k) for k in raw]
    ticks = [tick(k) for k in raw]
    nums = [v for _, v in items]
    if horizontal is None:
        horizontal = len(raw) > 8 or any(len(k) > 6 for k in raw)
    label_px = max((text_px(clip_label(k)) for k in raw), default=0.0)
    texts = [format(v, number_format) if number_format else _number(v) for v in nums] if numbers else []
    bar = go.Bar(x=nums if horizontal else cats, y=cats if horizontal else nums,
                 orientation="h" if horizontal else "v", text=texts or None, textposition="outside",
                 cliponaxis=False, customdata=cats,
                 hovertemplate="%{customdata}: %{" + ("x" if horizontal else "y") + "}<extra></extra>")
    category_axis = {"type": "category", "tickmode": "array", "tickvals": cats, "ticktext": ticks,
                     "categoryorder": "array", "categoryarray": cats, "automargin": False,
                     "title": {"text": plot_text(x_title)}, "tickfont": {"size": TICK_FONT}}
    value_axis = {"title": {"text": plot_text(y_title)}, "rangemode": "tozero", "automargin": True}
    fig = go.Figure(bar)
    top = 48
    widest_text = max((text_px(t, TICK_FONT) for t in texts), default=0.0)
    if horizontal:
        left = math.ceil(label_px + 12 + 34)
        fig.update_layout(height=top + 64 + BAR_PX * max(len(cats), 1),
                          yaxis={**category_axis, "autorange": "reversed", "tickangle": 0},
                          xaxis=value_axis,
                          margin={"l": left, "r": int(widest_text) + 24, "t": top, "b": 64})
    else:
        flat = label_px <= 60 and len(cats) <= 8
        depth = TICK_FONT + 8 if flat else (label_px + TICK_FONT) * SIN45 + 8
        fig.update_layout(height=int(300 + depth),
                          xaxis={**category_axis, "tickangle": 0 if flat else -45},
                          yaxis=value_axis,
                          margin={"l": 70, "r": 20, "t": top, "b": math.ceil(depth + 40)})
    fig.update_layout(title={"text": plot_text(title)}, showlegend=False, bargap=0.25)
    return fig


def _number(v: float) -> str:
    return f"{int(v):,}" if float(v).is_integer() else f"{v:,.3g}"


# ---------------------------------------------------------------- histogram

def histogram_figure(values: Sequence[float], *, title: str, x_title: str, y_title: str = "examples",
                     nbins: int = 40) -> go.Figure:
    """A histogram of numbers with both axis titles (``x_title`` with its unit)."""
    fig = go.Figure(go.Histogram(x=list(values), nbinsx=nbins,
                                 hovertemplate="%{x}: %{y}<extra></extra>"))
    fig.update_layout(title={"text": plot_text(title)}, height=320, bargap=0.05, showlegend=False,
                      xaxis={"title": {"text": plot_text(x_title)}},
                      yaxis={"title": {"text": plot_text(y_title)}},
                      margin={"l": 70, "r": 20, "t": 48, "b": 60})
    return fig


# ---------------------------------------------------------------- layout

def grid(n: int, per_row: int = 2) -> list[list[int]]:
    """Chart indices 0..n-1 in rows for ``st.columns(per_row)`` (make every row with the same
    ``per_row`` columns, so all charts are as wide, and fill it from the left): as few rows as
    ``per_row`` allows, balanced so no row holds two fewer than another (7 in 3s: 3, 2, 2)."""
    if per_row < 1:
        raise ValueError(f"per_row must be at least 1, not {per_row!r}")
    if n <= 0:
        return []
    rows = -(-n // per_row)
    base, extra = divmod(n, rows)
    out, start = [], 0
    for r in range(rows):
        size = base + (1 if r < extra else 0)
        out.append(list(range(start, start + size)))
        start += size
    return out
