"""Chart builders the pages share: bar, bucket and histogram charts, a grid for laying charts
out, and the colour, contrast and text-width helpers the charts share (the confusion matrix is
:mod:`app_pages.confusion_chart`). Pure functions: no Streamlit call here; each returns a Plotly
figure.

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
from typing import Any, Protocol

import plotly.graph_objects as go
from plotly.colors import get_colorscale
from plotly.subplots import make_subplots

from app_pages.common import plot_text

TICK_FONT = 12                # px, tick labels
BUCKET_BAR = "#0068c9"        # one colour for every bucket panel (Plotly would cycle its colours)
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


# ---------------------------------------------------------------- buckets

class BucketLike(Protocol):
    """What a bucket chart reads (:class:`cblue_core.analysis.buckets.BucketScore`)."""

    feature: str
    bucket: str
    order: int
    f1: float
    low: float
    high: float

    @property
    def support(self) -> int: ...


# The unit of each bucket feature of cblue_core.analysis.buckets, for the axis title.
FEATURE_UNITS: dict[str, str] = {
    "entity length": "characters",
    "sentence length": "characters",
    "text length": "characters",
    "entity density": "entities per character",
    "nesting depth": "levels",
    "nesting role": "role of the entity",
    "training frequency": "occurrences in the train split",
    "gold label training frequency": "examples in the train split",
    "label consistency": "share of train occurrences with this label",
    "triples per example": "distinct gold triples",
    "argument nesting": "an argument inside another of the example",
    "triple in the train split": "the same triple in the train split",
    "in the model's training records": "the example's text",
}


def group_buckets(buckets: Sequence[BucketLike]) -> dict[str, list[BucketLike]]:
    """Buckets per feature (features in their first order), each list in bucket order."""
    out: dict[str, list[BucketLike]] = {}
    for b in buckets:
        out.setdefault(b.feature, []).append(b)
    return {k: sorted(v, key=lambda b: b.order) for k, v in out.items()}


def _wrap(text: str, width: int = 14) -> str:
    """Escaped ``text`` on lines of about ``width`` characters (broken at spaces)."""
    lines: list[str] = []
    for word in text.split(" "):
        if lines and len(lines[-1]) + 1 + len(word) <= width:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return "<br>".join(plot_text(line) for line in lines)


def bucket_figure(buckets: Sequence[BucketLike], *, feature: str | None = None, metric: str = "F1",
                  unit: str | None = None, per_row: int = 2, panel_height: int = 300) -> go.Figure:
    """ExplainaBoard-style bars: ``metric`` per bucket (in bucket order) with its 95% interval as
    an error bar and the bucket's gold items (``n=``) under its label; one panel per feature (in
    their first order), ``per_row`` panels a row, all in one figure (one figure draws in the
    browser in a fraction of the time of one chart per feature). Axis titles: the feature with
    its unit (``unit``, else :data:`FEATURE_UNITS`) and the metric. ``feature`` names the
    feature of buckets that all belong to one."""
    groups = group_buckets(buckets)
    if feature is not None:
        groups = {feature: [b for rows in groups.values() for b in rows]}
    panels = list(groups.items()) or [(feature or "", [])]
    layout = grid(len(panels), per_row)
    columns = max((len(row) for row in layout), default=1)
    ticks = {name: [f"{_wrap(clip_label(str(b.bucket), 160))}<br>n={int(b.support):,}" for b in rows]
             for name, rows in panels}
    lines = max((t.count("<br>") + 1 for row in ticks.values() for t in row), default=1)
    below = 40 + 16 * lines            # tick labels and the axis title under each panel
    title_px = 44                      # each panel's title above it, clear of the row above
    panel = panel_height + (14 * (lines - 2) if lines > 2 else 0)
    height = len(layout) * (panel + below + title_px) + 10
    titles = [f"<b>{plot_text(_title(name))}</b>" for row in layout for name, _ in (panels[i] for i in row)]
    fig = make_subplots(rows=len(layout), cols=columns, horizontal_spacing=0.08,
                        vertical_spacing=(below + title_px) / height if len(layout) > 1 else 0.0,
                        subplot_titles=titles)
    for r, row in enumerate(layout, start=1):
        for c, index in enumerate(row, start=1):
            name, rows = panels[index]
            trace, xaxis, yaxis = _bucket_panel(rows, name, metric, unit, ticks[name])
            fig.add_trace(trace, row=r, col=c)
            fig.update_xaxes(xaxis, row=r, col=c)
            fig.update_yaxes(yaxis, row=r, col=c)
    fig.update_layout(height=height, showlegend=False, bargap=0.3,
                      margin={"l": 60, "r": 16, "t": title_px + 4, "b": below})
    return fig


def _title(feature: str) -> str:
    """A panel's title: the feature, capitalised ("Entity length")."""
    return feature[:1].upper() + feature[1:] if feature else "Buckets"


def _bucket_panel(rows: Sequence[BucketLike], name: str, metric: str, unit: str | None,
                  ticks: list[str]) -> tuple[go.Bar, dict, dict]:
    unit = unit if unit is not None else FEATURE_UNITS.get(name)
    cats = [plot_text(b.bucket) for b in rows]
    scores = [float(b.f1) for b in rows]
    plus = [max(float(b.high) - s, 0.0) for b, s in zip(rows, scores)]
    minus = [max(s - float(b.low), 0.0) for b, s in zip(rows, scores)]
    trace = go.Bar(
        x=cats, y=scores, marker={"color": BUCKET_BAR}, error_y={"type": "data", "symmetric": False, "array": plus, "arrayminus": minus,
                                   "visible": True, "thickness": 1.5, "width": 6, "color": "#868e96"},
        customdata=[[plot_text(b.bucket), float(b.low), float(b.high), int(b.support), int(b.examples)]
                    for b in rows],
        hovertemplate=("%{customdata[0]}: " + plot_text(metric) + " %{y:.3f} (95% interval "
                       "%{customdata[1]:.3f}–%{customdata[2]:.3f}); gold items %{customdata[3]}, "
                       "examples %{customdata[4]}<extra></extra>"))
    x_title = plot_text(name) + (f" ({plot_text(unit)})" if unit else "")
    xaxis = {"type": "category", "tickmode": "array", "tickvals": cats, "ticktext": ticks,
             "categoryorder": "array", "categoryarray": cats, "tickangle": 0,
             "title": {"text": x_title}, "tickfont": {"size": TICK_FONT - 1}}
    yaxis = {"title": {"text": plot_text(metric)}, "range": [0, 1.05]}
    return trace, xaxis, yaxis


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
