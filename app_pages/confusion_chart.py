"""The confusion matrix chart: a scatter of square markers (``st.plotly_chart(on_select=...)``
reports no points for a heatmap), gold down the rows, predicted across the columns, with a ∅ row
and column (items with no counterpart: see :mod:`cblue_core.store.confusion` for how the store
pairs items into cells), Σ totals, an optional "other" for the labels past the top k, and the
selected cell outlined. Pure: no Streamlit call here.

Readable at any number of labels: every cell is at least :data:`CELL_MIN` px with its number in
:data:`CELL_FONT` px, whatever the figure's width; column labels stand vertical when they do not
fit a cell, so they never overlap; every label is whole. The figure is as large as that needs:
the page shows it at its own size in a box that scrolls sideways
(:func:`app_pages.wide_chart.wide_plotly_chart`).
"""
from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from app_pages.charts import (
    BLACK,
    COLORSCALE,
    TICK_FONT,
    clip_label,
    colorscale_rgb,
    parse_rgb,
    text_color_on,
    text_px,
    tick,
)
from app_pages.common import plot_text

ALL = "Σ"                     # the totals row and column
OTHER = "other"               # the labels top_k merges
NONE = "∅"                    # no item on this side: the store's name (cblue_core.store.confusion)
CELL_FONT = 11                # px, the numbers on the cells (never smaller)
CELL_MIN = 24                 # px, the smallest side of a cell (never smaller)
TOTAL_BG = "#e9ecef"          # the Σ cells: neutral grey
DIAGONAL_LINE = "#2b8a3e"     # border of the diagonal cells
OUTLINE = "#111111"           # the ring around the selected cell
RING_PX = 3                   # its width
TARGETS = "targets"           # the trace a click lands on (and that rings the selected cell)
EMPTY_BG = "rgba(0,0,0,0)"
CORNER = "gold ↓  predicted →"
NONE_HOVER = {"gold": "∅ (no gold item: spurious)", "pred": "∅ (no predicted item: missed)"}


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
    clickable point (the "targets" trace, :data:`TARGETS`) carries ``customdata = [g, p, gold,
    pred, value]``; ``targets`` maps a cell's (row, column) to its point there.

    ``figure`` is a ``go.Figure``, or Plotly's dict of it after :meth:`plain` (what a page caches).
    """

    figure: go.Figure | dict[str, Any]
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
    targets: dict[tuple[int, int], int] = field(default_factory=dict)

    def plain(self) -> ConfusionFigure:
        """The same chart with its figure as Plotly's dict: plain data, copied out of a cache in a
        fraction of a millisecond (a 44-label ``go.Figure`` took 35 ms to unpickle)."""
        figure = self.figure if isinstance(self.figure, dict) else self.figure.to_dict()
        return dataclasses.replace(self, figure=figure)

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
    ordered = [lab for lab in dict.fromkeys(labels or ()) if lab != NONE]
    return ordered + sorted(seen - set(ordered) - {NONE}, key=str)


def confusion_figure(counts: pd.DataFrame, *, labels: Sequence[str] | None = None,
                     normalize: str | None = None, selected: tuple[Any, Any] | None = None,
                     top_k: int | None = None, sums: bool = True,
                     label_text: Callable[[str], str] | None = None) -> ConfusionFigure:
    """A confusion matrix of ``counts`` (columns gold_label, pred_label, n), gold down the rows,
    predicted across the columns, both axes on the same labels: ``labels`` in their order (shown
    even when empty), then any other label of the data, sorted, then :data:`NONE` (∅) when the
    data has items with no counterpart.

    ``normalize="row"`` colours and labels each cell by its share of the gold row. ``top_k`` keeps
    the k most frequent labels (gold plus predicted) and merges the rest into "other" (∅ is never
    merged). ``sums`` adds a Σ row (predicted totals) and Σ column (gold totals), clickable like
    any cell. ``selected`` = (gold, pred), None (or :data:`ALL`) for a Σ side, a tuple of labels
    for "other" (as :meth:`CellPick.filter` gives them), outlines that cell. ``label_text`` turns
    a label into the text shown (say ``task.display_label``); clicks still map back to the label.

    The figure is ``width`` x ``height`` pixels (cells of ``cell_px`` plus margins fitted to the
    longest label): show it at that size, in a box that scrolls when it is wider than the page.
    """
    if normalize not in (None, "row"):
        raise ValueError(f"normalize must be None or 'row', not {normalize!r}")
    if top_k is not None and top_k < 1:
        raise ValueError(f"top_k must be at least 1, not {top_k!r}")
    counts = counts[["gold_label", "pred_label", "n"]].copy()
    for side in ("gold_label", "pred_label"):              # the store's name for a missing label
        counts[side] = counts[side].astype(object).where(counts[side].notna(), NONE)
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
    has_none = bool(((counts["gold_label"] == NONE) | (counts["pred_label"] == NONE)).any())
    if has_none:
        members.append((NONE,))
        names.append(NONE)
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
    ticktext = [tick(name) for name in names] + ([ALL] if sums else [])
    hover = [plot_text(name) for name in names] + (["Σ (total)"] if sums else [])
    for i, group in enumerate(members):
        if len(group) > 1:
            shown = ", ".join(plot_text(lab) for lab in group[:8]) + (", …" if len(group) > 8 else "")
            hover[i] = f"{plot_text(names[i])}: {shown}"
    gold_hover, pred_hover = list(hover), list(hover)
    if has_none:
        gold_hover[m - 1], pred_hover[m - 1] = NONE_HOVER["gold"], NONE_HOVER["pred"]

    # ------------------------------------------------ sizes
    texts = {k: (_share_text(value(k[0], n)) if normalize == "row" else _count_text(n))
             for k, n in cell_n.items()}
    total_texts = [_count_text(n) for n in gold_tot + pred_tot]
    widest = max((text_px(t, CELL_FONT) for t in [*texts.values(), *total_texts]), default=0.0)
    cell = int(max(CELL_MIN, math.ceil(widest + 6)))
    cell_font = CELL_FONT
    widths = [text_px(clip_label(name)) for name in names] + ([text_px(ALL)] if sums else [])
    longest = max(widths, default=0.0)
    # Column labels lie flat when every one fits its cell; else they stand vertical, one line of
    # TICK_FONT px per cell of at least CELL_MIN px, so neighbours never overlap (slanted labels
    # did, at 44 labels). They sit above the matrix, where reading starts.
    x_flat = longest <= cell - 6
    x_angle = 0 if x_flat else -90
    x_depth = TICK_FONT + 6 if x_flat else longest + 6
    title_px = 34
    left = math.ceil(longest + 10 + title_px + 8)
    top = math.ceil(x_depth + 8 + title_px)
    bottom, right = 16, 110
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
    # The coloured squares and the Σ squares take no hover and no click: the "targets" trace on
    # top does (see below).
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
        hoverinfo="skip", selected=keep_opacity, unselected=keep_opacity, showlegend=False))
    totals: list[tuple[int, int, int]] = []
    if sums:
        totals = ([(g, m, n) for g, n in enumerate(gold_tot) if n]
                  + [(m, p, n) for p, n in enumerate(pred_tot) if n])
        figure.add_trace(go.Scatter(
            name="totals", x=[p for _, p, _ in totals], y=[g for g, _, _ in totals], mode="markers",
            marker={"symbol": "square", "size": marker_size, "opacity": 1, "color": TOTAL_BG,
                    "line": {"width": 0}},
            hoverinfo="skip", selected=keep_opacity, unselected=keep_opacity, showlegend=False))

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

    # What a click lands on: one open square per cell and Σ cell, invisible until Plotly selects
    # it, then a ring around the clicked cell. The browser draws that ring itself, so the page
    # sends the same figure after a click and Streamlit keeps the chart as drawn; a figure that
    # changed (an outline trace added) was a new element, redrawn whole (0.5-1 s at 44 labels).
    target_points = [(g, p) for g, p in cells] + [(g, p) for g, p, _ in totals]
    target_values = value_hover + [f"{n:,}" for _, _, n in totals]
    figure.add_trace(go.Scatter(
        name=TARGETS, x=[p for _, p in target_points], y=[g for g, _ in target_points], mode="markers",
        marker={"symbol": "square-open", "size": cell - 1, "opacity": 0, "color": OUTLINE,
                "line": {"width": RING_PX, "color": OUTLINE}},
        customdata=[[g, p, gold_hover[g], pred_hover[p], h] for (g, p), h in zip(target_points, target_values)],
        hovertemplate="gold %{customdata[2]}<br>predicted %{customdata[3]}<br>%{customdata[4]}"
                      "<extra></extra>",
        selected={"marker": {"opacity": 1}}, unselected={"marker": {"opacity": 0}}, showlegend=False))

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
        xaxis={**axis_common, "tickangle": x_angle, "side": "top"},
        yaxis={**axis_common, "tickangle": 0, "range": [positions_n - 0.5, -0.5],
               "title": {"text": "gold", "standoff": 8}},
        # The axes named in the corner both start from: a title centred over a matrix wider than
        # the page would sit out of sight, past the scroll.
        annotations=[{"text": CORNER, "xref": "paper", "yref": "paper", "x": 0, "y": 1,
                      "xanchor": "right", "yanchor": "bottom", "xshift": -8, "yshift": 6,
                      "showarrow": False, "font": {"size": TICK_FONT + 1}}],
        plot_bgcolor=EMPTY_BG, hovermode="closest", showlegend=False, clickmode="event+select",
        dragmode=False)
    built = ConfusionFigure(figure=figure, labels=tuple(names), members=tuple(members),
                            merged=tuple(merged), ticktext=tuple(ticktext), sums=sums, normalize=normalize,
                            cell_px=cell, width=width, height=height, positions=position,
                            targets={point: i for i, point in enumerate(target_points)})
    return outline(built, selected)


def outline(cf: ConfusionFigure, selected: tuple[Any, Any] | None) -> ConfusionFigure:
    """``cf`` with the cell ``selected`` (as :func:`confusion_figure` takes it) ringed: its point
    of the "targets" trace marked selected in the figure (``selectedpoints``), as Plotly marks a
    clicked one. For a selection the browser did not make (a filter set elsewhere, a page opened
    on a cell); after a click on this chart, send the figure the browser already has instead.
    A dict figure (:meth:`ConfusionFigure.plain`, what a page caches) is left as it was: the
    outlined one is a new dict that shares its other traces. A cell with no items has no point
    and is not ringed."""
    chosen = _selected_position(selected, cf.positions, len(cf.labels), cf.sums)
    index = None if chosen is None else cf.targets.get(chosen)
    if index is None:
        return cf
    if isinstance(cf.figure, dict):
        data = [{**t, "selectedpoints": [index]} if t.get("name") == TARGETS else t
                for t in cf.figure["data"]]
        figure: go.Figure | dict[str, Any] = {**cf.figure, "data": data}
    else:
        figure = cf.figure
        figure.update_traces(selectedpoints=[index], selector={"name": TARGETS})
    return dataclasses.replace(cf, figure=figure, selected=chosen)


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


