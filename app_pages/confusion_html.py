"""The confusion matrix (:class:`app_pages.confusion_chart.ConfusionGrid`) as HTML: a CSS grid of
squares, the labels in its first row and column, every string escaped. Each cell and Σ total
carries ``data-pick="g,p"``, what a click on it reports (:mod:`app_pages.components.cell_grid`).

HTML rather than a Plotly chart: Plotly's bundle took 1-2 s of the matrix tab's first open and a
45 x 45 figure 0.5-1 s to draw; a grid of 2,000 squares is drawn in a few milliseconds. The cells
are placed by grid row and column, so an empty cell costs nothing.
"""
from __future__ import annotations

import hashlib
from html import escape
from typing import NamedTuple

from app_pages.charts import COLORSCALE, clip_label, colorscale_rgb
from app_pages.confusion_chart import (
    ALL,
    CELL_FONT,
    CORNER,
    DIAGONAL_LINE,
    LABEL_FONT,
    OUTLINE,
    RING_PX,
    ConfusionGrid,
)

# The component's own style sheet (its shadow root keeps it apart from the page's).
CSS = f"""
.cbr-cm-wrap {{ overflow-x: auto; padding: 4px 4px 8px 4px; }}
.cbr-cm {{ display: inline-grid; font-size: {LABEL_FONT}px; line-height: 1.2; }}
.cbr-cm > div {{ box-sizing: border-box; }}
.cbr-cm-corner {{ grid-area: 1 / 1; align-self: end; justify-self: end; padding: 0 6px 4px 0;
  white-space: nowrap; font-size: {LABEL_FONT + 1}px; }}
.cbr-cm-col {{ grid-row: 1; align-self: end; justify-self: center; white-space: nowrap;
  writing-mode: vertical-rl; text-orientation: sideways; transform: rotate(180deg); padding-top: 4px; }}
.cbr-cm.cbr-cm-flat .cbr-cm-col {{ writing-mode: horizontal-tb; transform: none; padding: 0 0 4px 0; }}
.cbr-cm-row {{ grid-column: 1; align-self: center; justify-self: end; white-space: nowrap;
  padding-right: 6px; }}
.cbr-cm-c {{ margin: 1px; display: flex; align-items: center; justify-content: center;
  font-size: {CELL_FONT}px; font-variant-numeric: tabular-nums; cursor: pointer; color: #000; }}
.cbr-cm-c.w {{ color: #fff; }}
.cbr-cm-c.d {{ box-shadow: inset 0 0 0 2px {DIAGONAL_LINE}; }}
.cbr-cm-c:hover {{ box-shadow: inset 0 0 0 2px #555; }}
.cbr-cm-c.cbr-cm-picked {{ box-shadow: 0 0 0 {RING_PX}px {OUTLINE}, inset 0 0 0 2px #fff;
  position: relative; z-index: 1; }}
.cbr-cm-legend {{ display: flex; align-items: center; gap: 6px; margin-top: 8px;
  font-size: {LABEL_FONT}px; }}
.cbr-cm-scale {{ width: 160px; height: 12px; border: 1px solid #ccc; }}
"""


def _gradient() -> str:
    stops = ", ".join(
        f"rgb({', '.join(str(round(c)) for c in colorscale_rgb(COLORSCALE, float(p)))}) {float(p) * 100:.0f}%"
        for p, _ in COLORSCALE)
    return f"linear-gradient(to right, {stops})"


def grid_html(grid: ConfusionGrid) -> str:
    """The matrix as one escaped HTML fragment (no script): labels whole on both axes (cut only
    past :func:`app_pages.charts.clip_label`'s width, whole in the hover), cells of
    ``grid.cell_px`` px, the diagonal bordered green, a colour legend under it."""
    size, px = grid.size, grid.cell_px
    flat = " cbr-cm-flat" if grid.flat_columns else ""
    parts = [(f'<div class="cbr-cm{flat}" style="grid-template-columns: max-content repeat({size}, {px}px); '
              f'grid-template-rows: max-content repeat({size}, {px}px)">'),
             f'<div class="cbr-cm-corner">{escape(CORNER)}</div>']
    names = [*grid.labels, *([ALL] if grid.sums else [])]
    for i, name in enumerate(names):
        parts.append(f'<div class="cbr-cm-col" style="grid-column: {i + 2}" '
                     f'title="{escape(grid.pred_titles[i])}">{escape(clip_label(name))}</div>')
        parts.append(f'<div class="cbr-cm-row" style="grid-row: {i + 2}" '
                     f'title="{escape(grid.gold_titles[i])}">{escape(clip_label(name))}</div>')
    for c in grid.cells:
        kind = ((" w" if c.color == "#ffffff" else "") + (" t" if c.total else "")
                + (" d" if c.g == c.p and not c.total else ""))
        parts.append(f'<div class="cbr-cm-c{kind}" data-pick="{c.key}" '
                     f'style="grid-area: {c.g + 2} / {c.p + 2}; background: {escape(c.background)}" '
                     f'title="{escape(c.hover)}">{escape(c.text)}</div>')
    parts.append("</div>")
    what = "share of the gold row" if grid.normalize == "row" else "count"
    top = "100%" if grid.normalize == "row" else f"{grid.cmax:,.0f}"
    parts.append(f'<div class="cbr-cm-legend">{escape(what)}: 0 <span class="cbr-cm-scale" '
                 f'style="background: {_gradient()}"></span> {escape(top)}; Σ cells grey: totals</div>')
    return "".join(parts)


def html_version(html: str) -> str:
    """A short digest of ``html``: the component redraws the grid only when it changes."""
    return hashlib.blake2b(html.encode("utf-8"), digest_size=8).hexdigest()


class MatrixView(NamedTuple):
    """A matrix as the page draws it: its grid (what a click maps back to), its HTML and the
    HTML's version."""

    grid: ConfusionGrid
    html: str
    version: str


def matrix_view(grid: ConfusionGrid) -> MatrixView:
    html = grid_html(grid)
    return MatrixView(grid, html, html_version(html))
