"""Chart builders the pages share: a clickable confusion matrix, bar, bucket and histogram charts,
and a grid for laying charts out. Pure functions: no Streamlit call here; each returns a Plotly
figure (and, for the matrix, what a click maps back to).

Every label that comes from data reaches Plotly through :func:`app_pages.common.plot_text`
(Plotly renders a small HTML subset in tick labels, hover text and titles). Every label is shown:
axes list their ticks explicitly (``tickmode="array"``), so Plotly never skips every other one, and
the figures grow with the number of labels instead of squeezing them.

The confusion matrix is a scatter of square markers (``st.plotly_chart(on_select=...)`` reports no
points for a heatmap). The number on each cell is black or white, whichever contrasts more with the
cell's colour (computed here from the colorscale as Plotly interpolates it): the WCAG contrast ratio
is then at least 4.58:1 on any background.
"""
from __future__ import annotations

import itertools
import math
import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import pandas as pd
import plotly.graph_objects as go
from plotly.colors import get_colorscale
from plotly.subplots import make_subplots

from app_pages.common import plot_text

ALL = "Σ"                     # the totals row and column of the confusion matrix
OTHER = "other"               # the labels top_k merges
TICK_FONT = 12                # px, tick labels
CELL_FONT = 11                # px, the numbers on the cells
CELL_MIN = 30                 # px, the side of a confusion-matrix cell
# Streamlit draws a chart no wider than the page's column (about 1,100 px in the wide layout on
# a 1,600 px screen) and squeezes a wider one, which would overlap the fixed-size square
# markers: past this width the cells and their numbers get smaller instead.
MAX_FIGURE_WIDTH = 1180
CELL_FLOOR = 16               # px, the smallest cell side when the matrix must fit
CELL_FONT_FLOOR = 7           # px
BUCKET_BAR = "#0068c9"        # one colour for every bucket panel (Plotly would cycle its colours)
BAR_PX = 26                   # px per bar of a horizontal bar chart
MAX_LABEL_PX = 360            # a longer tick label is cut (with "…"); its hover shows it whole
BLACK, WHITE = "#000000", "#ffffff"
TOTAL_BG = "#e9ecef"          # the Σ cells: neutral grey
DIAGONAL_LINE = "#2b8a3e"     # border of the diagonal cells
OUTLINE = "#111111"           # border of the selected cell (with a white ring inside)
EMPTY_BG = "rgba(0,0,0,0)"

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


def _tick(text: str) -> str:
    """A tick label for Plotly: cut to a readable width, then HTML-escaped."""
    return plot_text(clip_label(text))


_SIN45 = math.sqrt(0.5)


# ---------------------------------------------------------------- confusion matrix

@dataclass(frozen=True)
class CellPick:
    """What a click on the matrix selects: the gold and predicted labels (several where the cell
    is on the merged "other" row or column); None is the Σ side (any label)."""

    gold: tuple[str, ...] | None
    pred: tuple[str, ...] | None

    def filter(self) -> dict[str, str | tuple[str, ...]]:
        """``{"gold_label": ..., "pred_label": ...}`` for the sides that are not Σ: one label as a
        string, the labels of "other" as a tuple."""
        out: dict[str, str | tuple[str, ...]] = {}
        for key, side in (("gold_label", self.gold), ("pred_label", self.pred)):
            if side is not None:
                out[key] = side[0] if len(side) == 1 else side
        return out


@dataclass(frozen=True)
class ConfusionFigure:
    """A confusion matrix and what its cells stand for.

    Both axes list the same positions: ``labels[i]`` (the label at position ``i``, or
    :data:`OTHER`), then :data:`ALL` when ``sums``. ``members[i]`` holds the original labels a
    position stands for (one, or all those merged into "other"); ``ticktext[i]`` is what the axis
    shows (escaped). Cell (row ``g``, column ``p``) is gold position ``g``, predicted ``p``; every
    clickable point carries ``customdata = [g, p, gold, pred, value]``.
    """

    figure: go.Figure
    labels: tuple[str, ...]
    members: tuple[tuple[str, ...], ...]
    merged: tuple[str, ...]
    ticktext: tuple[str, ...]
    sums: bool
    normalize: str | None
    cell_px: int
    width: int
    height: int
    selected: tuple[int, int] | None = None
    positions: dict[str, int] = field(default_factory=dict)

    @property
    def total_position(self) -> int | None:
        """The axis position of the Σ row/column (None without sums)."""
        return len(self.labels) if self.sums else None

    def side(self, position: int) -> tuple[str, ...] | None:
        """The labels an axis position stands for; None for Σ."""
        if self.sums and position == len(self.labels):
            return None
        if not 0 <= position < len(self.labels):
            raise IndexError(f"no axis position {position}")
        return self.members[position]

    def pick(self, point: Mapping[str, Any]) -> CellPick | None:
        """The cell a Streamlit selection point (``selected(event, "points")[0]``) is on: read
        from its ``customdata`` (else its x/y positions); None when it is no cell of this chart."""
        try:
            data = point.get("customdata")
            if data is not None and len(data) >= 2:
                g, p = int(data[0]), int(data[1])
            else:
                g, p = round(float(point["y"])), round(float(point["x"]))
            return CellPick(self.side(g), self.side(p))
        except (KeyError, TypeError, ValueError, IndexError):
            return None


def _count_text(n: int) -> str:
    if n < 10_000:
        return str(n)
    if n < 1_000_000:
        return f"{n / 1000:.0f}k"
    return f"{n / 1_000_000:.1f}M"


def _share_text(share: float) -> str:
    if 0 < share < 0.005:
        return "<1%"
    return f"{share:.0%}"


def _axis_labels(counts: pd.DataFrame, labels: Sequence[str] | None) -> list[str]:
    seen = set(counts["gold_label"]) | set(counts["pred_label"])
    ordered = list(dict.fromkeys(labels or ()))
    return ordered + sorted(seen - set(ordered), key=str)


def confusion_figure(counts: pd.DataFrame, *, labels: Sequence[str] | None = None,
                     normalize: str | None = None, selected: tuple[Any, Any] | None = None,
                     top_k: int | None = None, sums: bool = True,
                     label_text: Callable[[str], str] | None = None,
                     max_width: int | None = MAX_FIGURE_WIDTH) -> ConfusionFigure:
    """A confusion matrix of ``counts`` (columns gold_label, pred_label, n), gold down the rows,
    predicted across the columns, both axes on the same labels: ``labels`` in their order (shown
    even when empty), then any other label of the data, sorted.

    ``normalize="row"`` colours and labels each cell by its share of the gold row. ``top_k`` keeps
    the k most frequent labels (gold plus predicted) and merges the rest into "other". ``sums``
    adds a Σ row (predicted totals) and Σ column (gold totals), clickable like any cell.
    ``selected`` = (gold, pred), None (or :data:`ALL`) for a Σ side, a tuple of labels for
    "other" (as :meth:`CellPick.filter` gives them), outlines that cell. ``label_text`` turns a
    label into the text shown (say ``task.display_label``); clicks still map back to the label.

    The figure is ``width`` x ``height`` pixels (cells of ``cell_px`` plus margins fitted to the
    longest label): show it at that size (``width="content"``) in a container that scrolls.
    """
    if normalize not in (None, "row"):
        raise ValueError(f"normalize must be None or 'row', not {normalize!r}")
    if top_k is not None and top_k < 1:
        raise ValueError(f"top_k must be at least 1, not {top_k!r}")
    counts = counts[["gold_label", "pred_label", "n"]].copy()
    for side in ("gold_label", "pred_label"):              # the store's name for a missing label
        counts[side] = counts[side].astype(object).where(counts[side].notna(), "∅")
    counts["n"] = counts["n"].astype("int64")
    axis = _axis_labels(counts, labels)

    # ------------------------------------------------ top_k: the rest merged into "other"
    merged: list[str] = []
    if top_k is not None and len(axis) > top_k:
        freq = (counts.groupby("gold_label")["n"].sum().add(counts.groupby("pred_label")["n"].sum(),
                                                             fill_value=0))
        rank = sorted(axis, key=lambda lab: (-int(freq.get(lab, 0)), axis.index(lab)))
        keep = set(rank[:top_k])
        merged = [lab for lab in axis if lab not in keep]
        axis = [lab for lab in axis if lab in keep]
    members: list[tuple[str, ...]] = [(lab,) for lab in axis]
    names: list[str] = [str(label_text(lab)) if label_text else str(lab) for lab in axis]
    if merged:
        members.append(tuple(merged))
        names.append(f"{OTHER} ({len(merged)} labels)")
    m = len(members)
    position = {lab: i for i, group in enumerate(members) for lab in group}

    # ------------------------------------------------ cell values
    cell_n: dict[tuple[int, int], int] = {}
    for g, p, n in counts.itertuples(index=False):
        key = (position[g], position[p])
        cell_n[key] = cell_n.get(key, 0) + int(n)
    cell_n = {k: v for k, v in cell_n.items() if v > 0}
    gold_tot = [0] * m
    pred_tot = [0] * m
    for (g, p), n in cell_n.items():
        gold_tot[g] += n
        pred_tot[p] += n

    def value(g: int, n: int) -> float:
        return n / gold_tot[g] if normalize == "row" and gold_tot[g] else float(n)

    cmax = 1.0 if normalize == "row" else float(max(cell_n.values(), default=1))
    positions_n = m + (1 if sums else 0)
    ticktext = [_tick(name) for name in names] + ([ALL] if sums else [])
    hover = [plot_text(name) for name in names] + (["Σ (total)"] if sums else [])
    for i, group in enumerate(members):
        if len(group) > 1:
            shown = ", ".join(plot_text(lab) for lab in group[:8]) + (", …" if len(group) > 8 else "")
            hover[i] = f"{plot_text(names[i])}: {shown}"

    # ------------------------------------------------ sizes
    texts = {k: (_share_text(value(k[0], n)) if normalize == "row" else _count_text(n))
             for k, n in cell_n.items()}
    total_texts = [_count_text(n) for n in gold_tot + pred_tot]
    widest = max((text_px(t, CELL_FONT) for t in [*texts.values(), *total_texts]), default=0.0)
    cell = int(max(CELL_MIN, math.ceil(widest + 8)))
    widths = [text_px(clip_label(name)) for name in names] + ([text_px(ALL)] if sums else [])
    y_width = max(widths, default=0.0)
    x_flat = max(widths, default=0.0) <= cell - 6
    x_angle = 0 if x_flat else -45
    x_depth = TICK_FONT + 6 if x_flat else max(widths, default=0.0) * _SIN45 + TICK_FONT * _SIN45 + 6
    # A label slanted at -45° ends at its tick and reaches left of it, past the first columns.
    overhang = 0.0 if x_flat else max(((w + TICK_FONT) * _SIN45 - (i + 0.5) * cell
                                       for i, w in enumerate(widths)), default=0.0)
    title_px = 34
    left = math.ceil(max(y_width + 10 + title_px, overhang + 10) + 8)
    bottom = math.ceil(x_depth + 8 + title_px)
    top, right = 16, 110
    cell_font = CELL_FONT
    if max_width is not None and left + right + positions_n * cell > max_width:
        fitted = max(CELL_FLOOR, (max_width - left - right) // max(positions_n, 1))
        if fitted < cell:
            cell_font = max(CELL_FONT_FLOOR, min(CELL_FONT, CELL_FONT * (fitted - 4) / max(widest, 1.0)))
            cell = fitted
    width = left + right + positions_n * cell
    height = top + bottom + positions_n * cell

    # ------------------------------------------------ traces
    cells = sorted(cell_n)
    marker_size = cell - 3
    cell_values = [value(g, cell_n[(g, p)]) for g, p in cells]
    colours = [colorscale_rgb(COLORSCALE, v / cmax if cmax else 0.0) for v in cell_values]
    value_hover = [f"{cell_n[k]:,}" + (f" ({plot_text(_share_text(value(k[0], cell_n[k])))} of the gold row)"
                                     if normalize == "row" else "") for k in cells]
    keep_opacity = {"marker": {"opacity": 1}}
    figure = go.Figure()
    figure.add_trace(go.Scatter(
        name="cells", x=[p for _, p in cells], y=[g for g, _ in cells], mode="markers",
        marker={"symbol": "square", "size": marker_size, "opacity": 1, "color": cell_values,
                "colorscale": COLORSCALE, "cmin": 0, "cmax": cmax, "showscale": True,
                "colorbar": {"title": {"text": "share of the gold row" if normalize == "row" else "count",
                                       "side": "right"},
                             "thickness": 14, "len": min(positions_n * cell, 320), "lenmode": "pixels",
                             "x": 1, "xanchor": "left", "xpad": 12, "y": 1, "yanchor": "top",
                             "tickformat": ".0%" if normalize == "row" else ",d"},
                "line": {"width": [2 if g == p else 0 for g, p in cells], "color": DIAGONAL_LINE}},
        customdata=[[g, p, hover[g], hover[p], h] for (g, p), h in zip(cells, value_hover)],
        hovertemplate="gold %{customdata[2]}<br>predicted %{customdata[3]}<br>%{customdata[4]}"
                      "<extra></extra>",
        selected=keep_opacity, unselected=keep_opacity, showlegend=False))
    totals: list[tuple[int, int, int]] = []
    if sums:
        totals = ([(g, m, n) for g, n in enumerate(gold_tot) if n]
                  + [(m, p, n) for p, n in enumerate(pred_tot) if n])
        figure.add_trace(go.Scatter(
            name="totals", x=[p for _, p, _ in totals], y=[g for g, _, _ in totals], mode="markers",
            marker={"symbol": "square", "size": marker_size, "opacity": 1, "color": TOTAL_BG,
                    "line": {"width": 0}},
            customdata=[[g, p, hover[g], hover[p], f"{n:,}"] for g, p, n in totals],
            hovertemplate="gold %{customdata[2]}<br>predicted %{customdata[3]}<br>%{customdata[4]}"
                          "<extra></extra>",
            selected=keep_opacity, unselected=keep_opacity, showlegend=False))

    # The numbers: a trace of their own that takes no clicks. When a click selects a point Plotly
    # dims the text of every unselected point to 20% unless `selected.textfont.color` is set (its
    # makeSelectedTextStyleFns); set, each point keeps its own colour (nothing here is selectable).
    text_x = [p for _, p in cells] + [p for _, p, _ in totals]
    text_y = [g for g, _ in cells] + [g for g, _, _ in totals]
    text = [plot_text(texts[k]) for k in cells] + [_count_text(n) for _, _, n in totals]
    text_colours = [text_color_on(c) for c in colours] + [text_color_on(parse_rgb(TOTAL_BG))] * len(totals)
    figure.add_trace(go.Scatter(
        name="numbers", x=text_x, y=text_y, mode="text", text=text,
        textfont={"size": cell_font, "color": text_colours}, textposition="middle center",
        hoverinfo="skip", selected={"textfont": {"color": BLACK}}, showlegend=False))

    chosen = _selected_position(selected, position, m, sums)
    if chosen is not None:
        g, p = chosen
        figure.add_trace(go.Scatter(
            name="selected", x=[p, p], y=[g, g], mode="markers", hoverinfo="skip",
            marker={"symbol": "square-open", "size": [cell - 1, cell - 7], "opacity": 1,
                    "color": [OUTLINE, WHITE], "line": {"width": [4, 1.5]}},
            selected=keep_opacity, unselected=keep_opacity, showlegend=False))

    tickvals = list(range(positions_n))
    # ticklabeloverflow "allow": the margins already fit every label, and Plotly's default ("hide
    # past div") measures each label's box on every draw (0.3 s of a 44-label matrix in Chromium).
    axis_common = {"tickmode": "array", "tickvals": tickvals, "ticktext": ticktext, "automargin": False,
                   "ticklabeloverflow": "allow",
                   "showgrid": False, "zeroline": False, "fixedrange": True, "ticks": "",
                   "tickfont": {"size": TICK_FONT}, "range": [-0.5, positions_n - 0.5]}
    figure.update_layout(
        width=width, height=height, autosize=False,
        margin={"l": left, "r": right, "t": top, "b": bottom, "pad": 2, "autoexpand": False},
        xaxis={**axis_common, "tickangle": x_angle, "title": {"text": "predicted", "standoff": 8}},
        yaxis={**axis_common, "tickangle": 0, "range": [positions_n - 0.5, -0.5],
               "title": {"text": "gold", "standoff": 8}},
        plot_bgcolor=EMPTY_BG, hovermode="closest", showlegend=False, clickmode="event+select",
        dragmode=False)
    return ConfusionFigure(figure=figure, labels=tuple(names), members=tuple(members),
                           merged=tuple(merged), ticktext=tuple(ticktext), sums=sums, normalize=normalize,
                           cell_px=cell, width=width, height=height, selected=chosen, positions=position)


def _selected_position(selected: tuple[Any, Any] | None, position: Mapping[str, int],
                       m: int, sums: bool) -> tuple[int, int] | None:
    if selected is None:
        return None
    out = []
    for side in selected:
        if isinstance(side, (tuple, list)):       # the labels of "other", as CellPick gives them
            side = side[0] if side else None
        if side in position:
            out.append(position[side])        # a label (or one merged into "other")
        elif side is None or side == ALL:
            if not sums:
                return None
            out.append(m)
        else:
            return None
    g, p = out
    return None if (g, p) == (m, m) else (g, p)


# ---------------------------------------------------------------- bar chart

def bar_figure(values: Mapping[Any, int | float], *, title: str, x_title: str, y_title: str,
               horizontal: bool | None = None, sort: bool = False, numbers: bool = True) -> go.Figure:
    """One bar per key of ``values``, every label shown. ``x_title`` names the labels and
    ``y_title`` the values (say "entity type", "entities"), whatever the orientation: a horizontal
    chart puts ``x_title`` on its vertical axis. Horizontal by default when a label is longer than
    6 characters or there are more than 8 bars; its height grows with the bars, the first at the
    top. ``sort`` puts the largest first; ``numbers=False`` leaves the values off the bars (in
    the hover only: a table beside shows them, and each number costs the browser time to draw).
    A click reports the escaped label as the category
    (``plot_labels(values)`` maps it back) and in ``customdata``."""
    items = list(values.items())
    if sort:
        items.sort(key=lambda kv: -float(kv[1]))
    raw = [str(k) for k, _ in items]
    cats = [plot_text(k) for k in raw]
    ticks = [_tick(k) for k in raw]
    nums = [v for _, v in items]
    if horizontal is None:
        horizontal = len(raw) > 8 or any(len(k) > 6 for k in raw)
    label_px = max((text_px(clip_label(k)) for k in raw), default=0.0)
    texts = [_number(v) for v in nums] if numbers else []
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
        depth = TICK_FONT + 8 if flat else (label_px + TICK_FONT) * _SIN45 + 8
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
    panel = panel_height + (14 * (lines - 2) if lines > 2 else 0)
    height = len(layout) * (panel + below) + 10
    fig = make_subplots(rows=len(layout), cols=columns, horizontal_spacing=0.08,
                        vertical_spacing=below / height if len(layout) > 1 else 0.0)
    for r, row in enumerate(layout, start=1):
        for c, index in enumerate(row, start=1):
            name, rows = panels[index]
            trace, xaxis, yaxis = _bucket_panel(rows, name, metric, unit, ticks[name])
            fig.add_trace(trace, row=r, col=c)
            fig.update_xaxes(xaxis, row=r, col=c)
            fig.update_yaxes(yaxis, row=r, col=c)
    fig.update_layout(height=height, showlegend=False, bargap=0.3,
                      margin={"l": 60, "r": 16, "t": 20, "b": below})
    return fig


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
