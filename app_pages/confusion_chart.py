"""The confusion matrix as data: gold down the rows, predicted across the columns, with a ∅ row
and column (items with no counterpart: see :mod:`cblue_core.store.confusion` for how the store
pairs items into cells), Σ totals and an optional "other" for the labels past the top k; each cell
with its count, text, colours and hover. Pure: no Streamlit call here; the page draws it as HTML
(:mod:`app_pages.confusion_html`), no chart library.

Readable at any number of labels: every cell is at least :data:`CELL_MIN` px with its number in
:data:`CELL_FONT` px; column labels stand vertical when they do not fit a cell, so they never
overlap; every label is whole.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, NamedTuple

import pandas as pd

from app_pages.charts import (
    COLORSCALE,
    TICK_FONT,
    clip_label,
    colorscale_rgb,
    parse_rgb,
    text_color_on,
    text_px,
)

ALL = "Σ"                     # the totals row and column
OTHER = "other"               # the labels top_k merges
NONE = "∅"                    # no item on this side: the store's name (cblue_core.store.confusion)
CELL_FONT = 11                # px, the numbers on the cells (never smaller)
CELL_MIN = 24                 # px, the smallest side of a cell (never smaller)
LABEL_FONT = TICK_FONT        # px, the row and column labels
TOTAL_BG = "#e9ecef"          # the Σ cells: neutral grey
DIAGONAL_LINE = "#2b8a3e"     # border of the diagonal cells
OUTLINE = "#111111"           # the ring around the selected cell
RING_PX = 3                   # its width
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


class GridCell(NamedTuple):
    """One square of the matrix: a cell (``total`` False) or a Σ total, at (row ``g``, column
    ``p``) with its count, the text it shows, its colours and its hover (raw text: escape it). A
    named tuple: a page copies some 2,000 of them out of its cache on every rerun, and a frozen
    dataclass took ten times as long to unpickle."""

    g: int
    p: int
    n: int
    text: str
    background: str
    color: str
    hover: str
    total: bool = False

    @property
    def key(self) -> str:
        return cell_key(self.g, self.p)


def cell_key(g: int, p: int) -> str:
    """What a click on cell (g, p) reports: ``"g,p"``."""
    return f"{int(g)},{int(p)}"


@dataclass(frozen=True)
class ConfusionGrid:
    """A confusion matrix and what its cells stand for: plain data, cached per view.

    Both axes list the same positions: ``labels[i]`` (the label at position ``i``, or
    :data:`OTHER`), then :data:`ALL` when ``sums``. ``members[i]`` holds the original labels a
    position stands for (one, or all those merged into "other"); ``gold_titles[i]`` and
    ``pred_titles[i]`` what a hover on that row or column says. Cell (row ``g``, column ``p``)
    is gold position ``g``, predicted ``p``; ``cells`` holds every non-empty cell and Σ total.
    """

    labels: tuple[str, ...]
    members: tuple[tuple[str, ...], ...]
    merged: tuple[str, ...]
    cells: tuple[GridCell, ...]
    gold_titles: tuple[str, ...]
    pred_titles: tuple[str, ...]
    sums: bool
    normalize: str | None
    cell_px: int
    cmax: float
    flat_columns: bool
    positions: dict[str, int] = field(default_factory=dict)

    @property
    def total_position(self) -> int | None:
        """The axis position of the Σ row/column (None without sums)."""
        return len(self.labels) if self.sums else None

    @property
    def size(self) -> int:
        """Positions on each axis, Σ included."""
        return len(self.labels) + (1 if self.sums else 0)

    def side(self, position: int) -> tuple[str, ...] | None:
        """The labels an axis position stands for; None for Σ."""
        if self.sums and position == len(self.labels):
            return None
        if not 0 <= position < len(self.labels):
            raise IndexError(f"no axis position {position}")
        return self.members[position]

    def pick(self, key: Any) -> CellPick | None:
        """The cell a click reported (``"g,p"``, :func:`cell_key`); None when it is no cell of
        this matrix (or anything else: the value comes from the browser)."""
        try:
            g, p = (int(part) for part in str(key).split(","))
            if (g, p) not in self.cell_positions:
                return None
            return CellPick(self.side(g), self.side(p))
        except (TypeError, ValueError, IndexError):
            return None

    @cached_property
    def cell_positions(self) -> frozenset[tuple[int, int]]:
        return frozenset((c.g, c.p) for c in self.cells)

    def selected_key(self, selected: tuple[Any, Any] | None) -> str | None:
        """The key of the cell ``selected`` (gold, pred) names, as :func:`confusion_grid` takes
        it; None when there is none or it holds no item."""
        chosen = _selected_position(selected, self.positions, len(self.labels), self.sums)
        if chosen is None or chosen not in self.cell_positions:
            return None
        return cell_key(*chosen)


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


def confusion_grid(counts: pd.DataFrame, *, labels: Sequence[str] | None = None,
                   normalize: str | None = None, top_k: int | None = None, sums: bool = True,
                   label_text: Callable[[str], str] | None = None) -> ConfusionGrid:
    """A confusion matrix of ``counts`` (columns gold_label, pred_label, n), gold down the rows,
    predicted across the columns, both axes on the same labels: ``labels`` in their order (shown
    even when empty), then any other label of the data, sorted, then :data:`NONE` (∅) when the
    data has items with no counterpart.

    ``normalize="row"`` colours and labels each cell by its share of the gold row. ``top_k`` keeps
    the k most frequent labels (gold plus predicted) and merges the rest into "other" (∅ is never
    merged). ``sums`` adds a Σ row (predicted totals) and Σ column (gold totals), clickable like
    any cell. ``label_text`` turns a label into the text shown (say ``task.display_label``);
    clicks still map back to the label. Every cell is ``cell_px`` square, wide enough for its
    number in :data:`CELL_FONT` px.
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
    titles = list(names) + (["Σ (total)"] if sums else [])
    for i, group in enumerate(members):
        if len(group) > 1:
            titles[i] = f"{names[i]}: " + ", ".join(group[:8]) + (", …" if len(group) > 8 else "")
    gold_titles, pred_titles = list(titles), list(titles)
    if has_none:
        gold_titles[m - 1], pred_titles[m - 1] = NONE_HOVER["gold"], NONE_HOVER["pred"]

    # ------------------------------------------------ cells and Σ totals
    cells: list[GridCell] = []
    for (g, p) in sorted(cell_n):
        n = cell_n[(g, p)]
        v = value(g, n)
        rgb = colorscale_rgb(COLORSCALE, v / cmax if cmax else 0.0)
        share = f" ({_share_text(v)} of the gold row)" if normalize == "row" else ""
        cells.append(GridCell(g, p, n, _share_text(v) if normalize == "row" else _count_text(n),
                              _hex(rgb), text_color_on(rgb),
                              f"gold {gold_titles[g]}\npredicted {pred_titles[p]}\n{n:,}{share}"))
    if sums:
        grey = parse_rgb(TOTAL_BG)
        totals = ([(g, m, n) for g, n in enumerate(gold_tot) if n]
                  + [(m, p, n) for p, n in enumerate(pred_tot) if n])
        cells += [GridCell(g, p, n, _count_text(n), TOTAL_BG, text_color_on(grey),
                           f"gold {gold_titles[g]}\npredicted {pred_titles[p]}\n{n:,}", total=True)
                  for g, p, n in totals]

    # ------------------------------------------------ sizes
    widest = max((text_px(c.text, CELL_FONT) for c in cells), default=0.0)
    cell = int(max(CELL_MIN, math.ceil(widest + 6)))
    longest = max((text_px(clip_label(name)) for name in names), default=0.0)
    return ConfusionGrid(labels=tuple(names), members=tuple(members), merged=tuple(merged),
                         cells=tuple(cells), gold_titles=tuple(gold_titles), pred_titles=tuple(pred_titles),
                         sums=sums, normalize=normalize, cell_px=cell, cmax=cmax,
                         flat_columns=longest <= cell - 6, positions=position)


def _hex(rgb: tuple[float, float, float]) -> str:
    return "#" + "".join(f"{round(min(max(c, 0), 255)):02x}" for c in rgb)


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


